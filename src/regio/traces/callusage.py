"""Recorded provider usage of one model call (:class:`Usage`), part of the trace format
(:mod:`regio.traces.format`, which re-exports it)."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Usage"]


#: Each provider's own name of each count it reports in ``Usage.reported`` (count field ->
#: name): the Anthropic Messages API ``usage`` and OpenAI's usage, as :class:`Usage` describes.
_REPORTED_NAMES: dict[str, tuple[tuple[str, str], ...]] = {
    "anthropic": (
        ("prompt_tokens", "input_tokens"),
        ("cached_tokens", "cache_read_input_tokens"),
        ("cache_write_tokens", "cache_creation_input_tokens"),
        ("output_tokens", "output_tokens"),
    ),
    "openai": (
        ("prompt_tokens", "input_tokens"),
        ("cached_tokens", "cached_tokens"),
        ("output_tokens", "output_tokens"),
    ),
}


def _reported(provider: str, **counts: int | None) -> dict[str, int]:
    """``reported`` of a ``provider`` usage: each count given (``None``: not reported, left
    out) under the provider's own name, in the order given."""
    names = dict(_REPORTED_NAMES[provider])
    return {names[k]: v for k, v in counts.items() if v is not None}


class Usage(msgspec.Struct, frozen=True, omit_defaults=True):
    """Recorded provider usage of one model call, in tokens.

    The first four fields are the same for every provider: ``prompt_tokens`` is the whole
    prompt (cached included), ``cached_tokens`` the part read from the provider's prefix cache,
    ``cache_write_tokens`` the part written to it, ``output_tokens`` the completion.
    ``provider`` (``"anthropic"`` / ``"openai"``, ``None`` when unknown) and ``reported`` keep
    the counts as the provider reported them, under the provider's own names:

    * Anthropic Messages API ``usage``
      (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching): ``input_tokens``
      (after the last cache breakpoint, neither read nor written), ``cache_read_input_tokens``,
      ``cache_creation_input_tokens``, ``output_tokens``; the prompt is their sum;
    * OpenAI (https://platform.openai.com/docs/guides/prompt-caching): ``input_tokens`` (the
      whole prompt: Chat Completions ``prompt_tokens``, Responses ``input_tokens``),
      ``cached_tokens`` (``prompt_tokens_details.cached_tokens`` /
      ``input_tokens_details.cached_tokens``, part of the prompt), ``output_tokens``; OpenAI
      reports no cache writes.

    Build them with :meth:`anthropic` and :meth:`openai`.
    """

    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    provider: Literal["anthropic", "openai"] | None = None
    reported: dict[str, int] = msgspec.field(default_factory=dict)

    @classmethod
    def reported_names(cls, provider: str | None) -> dict[str, str]:
        """The name under which ``provider`` (``"anthropic"`` / ``"openai"``) reports each count
        in ``reported``: count field -> the provider's own name, for the counts it reports
        (``prompt_tokens`` -> ``input_tokens`` for both, though Anthropic's ``input_tokens``
        is only the uncached part; OpenAI reports no cache writes). ``{}`` for ``None`` or
        another provider. :meth:`anthropic` and :meth:`openai` write ``reported`` with these
        names."""
        return dict(_REPORTED_NAMES.get(provider or "", ()))

    @classmethod
    def anthropic(
        cls,
        input_tokens: int,
        output_tokens: int,
        cache_read_input_tokens: int | None = 0,
        cache_creation_input_tokens: int | None = 0,
    ) -> Usage:
        """An Anthropic ``usage`` (``input_tokens`` excludes the cache reads and writes; a
        cache count of ``None`` was not reported: 0 in the counts, absent from
        ``reported``)."""
        read, write = cache_read_input_tokens or 0, cache_creation_input_tokens or 0
        reported = _reported(
            "anthropic",
            prompt_tokens=input_tokens,
            cached_tokens=cache_read_input_tokens,
            cache_write_tokens=cache_creation_input_tokens,
            output_tokens=output_tokens,
        )
        return cls(input_tokens + read + write, read, write, output_tokens, "anthropic", reported)

    @classmethod
    def openai(cls, input_tokens: int, output_tokens: int, cached_tokens: int | None = 0) -> Usage:
        """An OpenAI usage (``input_tokens`` is the whole prompt, ``cached_tokens`` part of
        it; ``None`` when the provider did not report it: 0 in the counts and absent from
        ``reported``)."""
        reported = _reported(
            "openai",
            prompt_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_tokens=cached_tokens,
        )
        return cls(input_tokens, cached_tokens or 0, 0, output_tokens, "openai", reported)

    @property
    def cache_read_tokens(self) -> int:
        """Prompt tokens read from the cache (= ``cached_tokens``)."""
        return self.cached_tokens

    @property
    def uncached_tokens(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return self.prompt_tokens - self.cached_tokens - self.cache_write_tokens

    @property
    def hit_rate(self) -> float:
        """``cached_tokens / prompt_tokens`` (0.0 for an empty prompt)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0
