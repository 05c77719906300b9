"""What one provider call answered, normalised across APIs: :class:`ProviderUsage` (the
counts) and :class:`Completion` (the assistant message, its usage and stop reason), read from a
response by :mod:`regio.providers.wire` and driven by the agent loop (:mod:`regio.agent`).

Frozen msgspec Structs (JSON-able with ``msgspec.json.encode``). Units: tokens for every
``*_tokens`` field, milliseconds for ``prompt_ms`` (as llama.cpp reports ``timings.prompt_ms``).

Usage accounting follows the providers' own fields:

* OpenAI Chat Completions (and vLLM / llama.cpp): ``prompt_tokens`` is the whole prompt,
  ``prompt_tokens_details.cached_tokens`` the part read from the prefix cache; there is no
  separate write count (writes are free), so ``cache_write_tokens`` is 0;
* Anthropic Messages: ``input_tokens`` excludes the cache, so the whole prompt is
  ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``; ``cached_tokens``
  is ``cache_read_input_tokens`` and ``cache_write_tokens`` is ``cache_creation_input_tokens``.

A count the provider did not report (no ``usage`` object at all, or a usage without
``prompt_tokens_details.cached_tokens``) is 0 in the sums and named in ``unreported``, so a
reader can show it as unknown rather than as zero.
"""

from __future__ import annotations

from typing import Any

import msgspec

from regio.content import Message

__all__ = ["USAGE_COUNTS", "Completion", "ProviderUsage"]


#: The counts of :class:`ProviderUsage` that ``unreported`` can name.
USAGE_COUNTS = ("prompt_tokens", "cached_tokens", "cache_write_tokens", "output_tokens")


class ProviderUsage(msgspec.Struct, frozen=True):
    """What one provider call consumed, normalised across APIs (see module docstring).

    * ``prompt_tokens``: the whole prompt (read + written + uncached);
    * ``cached_tokens``: prompt tokens served from the provider's prefix cache;
    * ``cache_write_tokens``: prompt tokens written to the cache (Anthropic
      ``cache_creation_input_tokens``; 0 where writes are not reported);
    * ``output_tokens``: generated tokens;
    * ``prompt_ms``: prompt-processing time the server reported (llama.cpp
      ``timings.prompt_ms``), else ``None``;
    * ``raw``: the provider's usage object as a dict (plus llama.cpp ``timings`` when present);
    * ``unreported``: the counts of :data:`USAGE_COUNTS` the provider did not report (0 above,
      but unknown).
    """

    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    prompt_ms: float | None = None
    raw: dict[str, Any] = msgspec.field(default_factory=dict)
    unreported: tuple[str, ...] = ()

    @property
    def uncached_tokens(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return max(0, self.prompt_tokens - self.cached_tokens - self.cache_write_tokens)


class Completion(msgspec.Struct, frozen=True):
    """One provider answer: the assistant ``message`` (text, tool_use and thinking blocks),
    its ``usage``, the provider's ``stop_reason`` (``stop``/``end_turn``, ``tool_calls``/
    ``tool_use``, ``length``/``max_tokens``, ...), the ``model`` that answered and ``raw``, the
    response as a JSON-able dict (for traces and debugging)."""

    message: Message
    usage: ProviderUsage = msgspec.field(default_factory=ProviderUsage)
    stop_reason: str = ""
    model: str = ""
    raw: dict[str, Any] = msgspec.field(default_factory=dict)
