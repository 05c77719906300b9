"""A small client for llama.cpp server's own endpoints, and the slot-model cache predictor.

llama.cpp server (``tools/server/README.md`` of ggml-org/llama.cpp) serves the OpenAI API
under ``/v1`` and its own endpoints at the root:

* ``POST /apply-template`` ``{"messages": [...], "tools"?: [...]}`` -> ``{"prompt": str}``:
  the chat template applied exactly as ``/v1/chat/completions`` applies it;
* ``POST /tokenize`` ``{"content": str, "add_special": bool, "parse_special": bool}`` ->
  ``{"tokens": [int, ...]}``;
* ``GET /health``, ``GET /props``, ``POST /slots/{id}?action=erase``.

Together they give the exact token sequence the server evaluated for a chat request, which a
per-token prefix-cache simulator needs (llama.cpp server slots: the slot keeps the
prompt plus every generated token but the last; ``cache_n`` is the longest common prefix with
the slot, minus one when it covers the whole prompt).

Generated token ids come from the response's ``logprobs.content[*].id`` when the request asked
for ``logprobs`` (llama.cpp reports each sampled token's id there), else from tokenizing the
returned text (exact for plain text, approximate when the tokenizer would split it otherwise).
A sampled end-of-generation token is counted in ``usage.completion_tokens`` but is not in the
text; it is padded so that the slot model drops it as the last sampled token.

Sliding-window attention (Gemma 3, ...): by default llama.cpp keeps only a window-sized KV cache
for the SWA layers, so it can reuse a prefix only when the prompt diverges from the slot close to
the slot's end; otherwise it re-processes the whole prompt (``cache_n = 0``). Start the server
with ``--swa-full`` for the plain slot rule (see docs/live.md).

Only the standard library is used (``urllib``), so this works without the ``providers`` extra.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse, urlunparse

import attrs

from regio.content import Text, content_hash

from .errors import ProviderHTTPError, ProviderResponseError
from .types import Completion

if TYPE_CHECKING:
    from regio.layout.model import Request

__all__ = ["LlamaCppServer", "LlamaCppSlotPredictor", "server_root"]


def server_root(base_url: str) -> str:
    """The server root of an OpenAI ``base_url``: ``http://h:p/v1`` -> ``http://h:p``."""
    parsed = urlparse(base_url)
    path = parsed.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunparse(parsed._replace(path=path, params="", query="", fragment="")).rstrip("/")


@attrs.define
class LlamaCppServer:
    """Client of one llama.cpp server. ``base_url`` may be the root or the ``/v1`` URL;
    ``timeout`` is in seconds. Errors: :class:`ProviderHTTPError` for an HTTP error status,
    ``OSError`` (``urllib.error.URLError``) when the server cannot be reached."""

    base_url: str
    timeout: float = 120.0

    @property
    def root(self) -> str:
        """The server root URL (no ``/v1``)."""
        return server_root(self.base_url)

    def _call(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.root + path,
            data=data,
            headers={"Content-Type": "application/json"},
            method="GET" if body is None else "POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode())
        except urllib.error.HTTPError as exc:
            try:
                payload = json.loads(exc.read().decode())
            except ValueError:
                payload = {"error": {"message": str(exc)}}
            raise ProviderHTTPError(exc.code, payload) from exc

    def health(self) -> bool:
        """True when ``GET /health`` answers ``{"status": "ok"}``."""
        try:
            return self._call("/health").get("status") == "ok"
        except (OSError, ProviderHTTPError, ValueError):
            return False

    def props(self) -> dict[str, Any]:
        """``GET /props``: server settings (``default_generation_settings``, ``n_ctx``, ...)."""
        out: dict[str, Any] = self._call("/props")
        return out

    def context_window(self) -> int | None:
        """The server's context window per slot in tokens: ``n_ctx`` of ``GET /props``
        (``default_generation_settings.n_ctx``, or a top-level ``n_ctx``); ``None`` when the
        server reports none. Raises :class:`regio.errors.ContextWindowError` naming
        the server for a value that is not a positive integer."""
        from regio.session._declared import check_context_window

        props = self.props()
        settings = props.get("default_generation_settings")
        value = settings.get("n_ctx") if isinstance(settings, dict) else None
        if value is None:
            value = props.get("n_ctx")
        return check_context_window(value, f"llama.cpp server {self.root} (/props n_ctx)")

    def erase_slot(self, slot: int = 0) -> None:
        """Empty slot ``slot`` (``POST /slots/{id}?action=erase``), so its prefix cache starts
        cold; the server must run with the slots endpoint enabled (the default)."""
        self._call(f"/slots/{int(slot)}?action=erase", {})

    def apply_template(self, payload: dict[str, Any]) -> str:
        """The prompt text the chat template makes of a Chat Completions ``payload``
        (``messages`` and, when present, ``tools`` / ``tool_choice``)."""
        body: dict[str, Any] = {
            k: payload[k] for k in ("messages", "tools", "tool_choice") if k in payload
        }
        out = self._call("/apply-template", body)
        prompt = out.get("prompt") if isinstance(out, dict) else None
        if not isinstance(prompt, str):
            raise ProviderResponseError("/apply-template returned no prompt", raw=out)
        return prompt

    def tokenize(
        self, text: str, *, add_special: bool = False, parse_special: bool = True
    ) -> list[int]:
        """Token ids of ``text`` (``add_special`` adds BOS as the server does for a prompt;
        ``parse_special`` reads control tokens such as ``<start_of_turn>`` as tokens)."""
        out = self._call(
            "/tokenize",
            {"content": text, "add_special": add_special, "parse_special": parse_special},
        )
        tokens = out.get("tokens") if isinstance(out, dict) else None
        if not isinstance(tokens, list):
            raise ProviderResponseError("/tokenize returned no tokens", raw=out)
        return [t["id"] if isinstance(t, dict) else int(t) for t in tokens]

    def prompt_tokens(self, payload: dict[str, Any]) -> list[int]:
        """The exact token ids the server evaluates for a Chat Completions ``payload``."""
        return self.tokenize(self.apply_template(payload), add_special=True)

    def output_tokens(self, completion: Completion) -> list[int]:
        """Token ids the server sampled for ``completion`` (see module docstring).

        ``usage.completion_tokens`` counts every sampled token, the end-of-generation token
        included, which never appears in the text; such tokens are padded with ``-1`` at the
        end (the slot keeps all sampled tokens but the last, so the pad is never compared).
        """
        raw = completion.raw
        ids: list[int] | None = None
        choices = raw.get("choices") or []
        logprobs = (choices[0].get("logprobs") or {}) if choices else {}
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        if isinstance(content, list) and content and all("id" in c for c in content):
            ids = [int(c["id"]) for c in content]
        if ids is None:
            text = "".join(b.text for b in completion.message.blocks if isinstance(b, Text))
            ids = self.tokenize(text) if text else []
        sampled = completion.usage.output_tokens
        if sampled > len(ids):
            ids.extend([-1] * (sampled - len(ids)))
        return ids


@attrs.define
class LlamaCppSlotPredictor:
    """Predicts llama.cpp's ``cache_n`` per request with a regio.cache slot model.

    ``server`` gives the exact prompt and output token ids; ``model`` is a
    :class:`regio.cache.base.CacheModel` for llama.cpp (``process(CacheRequest)`` with
    ``token_ids`` and ``output_token_ids``). ``history`` keeps ``(prompt ids, output ids,
    predicted)`` per request, for diagnostics.
    """

    server: LlamaCppServer
    model: Any
    scope: str = "slot-0"
    history: list[tuple[list[int], list[int], int]] = attrs.field(factory=list)

    def predict(
        self, request: Request, payload: dict[str, Any], completion: Completion
    ) -> int | None:
        """Predicted ``cache_n`` of the request just answered (tokens)."""
        from regio.cache.types import CacheBlock, CacheRequest

        prompt = self.server.prompt_tokens(payload)
        output = self.server.output_tokens(completion)
        index = len(self.history)
        cache_request = CacheRequest(
            id=f"r{index:06d}",
            blocks=(
                CacheBlock(
                    tokens=len(prompt),
                    digest=content_hash(prompt),
                    token_ids=tuple(prompt),
                ),
            ),
            scope=self.scope,
            model=completion.model,
            t_start=float(index),
            output_tokens=len(output),
            output_token_ids=tuple(output),
        )
        outcome = self.model.process(cache_request)
        self.history.append((prompt, output, outcome.read))
        return int(outcome.read)
