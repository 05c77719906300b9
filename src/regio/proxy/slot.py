"""Per-token cache prediction for a llama.cpp upstream.

A llama.cpp server keeps one prompt per slot and reuses its longest common prefix with the next
prompt, in tokens of its own chat template (docs/live.md). Block digests cannot say how many
tokens of a changed message still match, so when the blueprint's cache profile is
``llamacpp`` the proxy predicts with :class:`regio.agent.LlamaCppSlotPredictor`: the exact
prompt tokens of each request the proxy sent (the upstream's ``/apply-template`` and
``/tokenize``, on the upstream host itself) and the tokens it generated (``logprobs`` ids when
the client asked for them, else its text tokenized). The slot is the server's, shared by every
session, so one predictor serves the whole worker; its prediction is exact with one worker and
``-np 1`` (another worker's requests change the slot without this one knowing).
"""

from __future__ import annotations

import threading
from typing import Any

import attrs

from regio.agent import LlamaCppServer, LlamaCppSlotPredictor
from regio.errors import RegioError
from regio.providers import cache_model_for
from regio.providers.wire import openai_chat_completion

__all__ = ["SlotPredictor"]


@attrs.define
class SlotPredictor:
    """Predicts each Chat Completions request's ``cached_tokens`` on a llama.cpp ``upstream``
    (module doc). Thread-safe: requests are predicted in the order they complete."""

    upstream: str
    _predictor: Any = None
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def predict(self, body: dict[str, Any], response: dict[str, Any]) -> int | None:
        """Predicted cached prompt tokens of the request ``body`` the proxy sent, answered by
        ``response`` (a Chat Completions response dict); ``None`` when the server cannot
        tokenize (not a llama.cpp server)."""
        with self._lock:
            if self._predictor is None:
                server = LlamaCppServer(self.upstream, timeout=60.0)
                self._predictor = LlamaCppSlotPredictor(server, cache_model_for("llamacpp"))
            try:
                completion = openai_chat_completion(response)
                return self._predictor.predict(None, body, completion)
            except (OSError, ValueError, KeyError, RegioError):  # no llama.cpp: no prediction
                return None
