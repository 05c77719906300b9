"""Recorded provider usage per model call, for comparing a simulator with what was billed.

Importers keep each call's provider-reported usage on its :class:`~regio.traces.Usage`
(``AssistantMessage.usage``): Anthropic ``input_tokens`` / ``cache_read_input_tokens`` /
``cache_creation_input_tokens`` / ``output_tokens``, OpenAI ``input_tokens`` (the whole prompt) /
``cached_tokens`` / ``output_tokens``. :func:`recorded_usage` lists them per request in
:meth:`Trace.steps` order, :func:`usage_totals` sums them.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from regio.traces.format import AssistantMessage, Trace, Usage

__all__ = ["RecordedUsageTotals", "recorded_usage", "usage_totals"]


def recorded_usage(trace: Trace) -> list[Usage | None]:
    """The recorded usage of each model call of ``trace``, one entry per :meth:`Trace.steps`
    item (request ``i`` is ``trace.steps()[i]``); ``None`` where the source recorded none."""
    return [e.usage for e in trace.events if isinstance(e, AssistantMessage)]


class RecordedUsageTotals(msgspec.Struct, frozen=True):
    """Sums over model calls, in tokens.

    ``calls`` counts every model call, ``recorded`` those with usage; the token sums and
    ``hit_rate`` (``cache_read_tokens / prompt_tokens``, 0.0 when nothing was recorded) are
    over the recorded calls only.
    """

    calls: int = 0
    recorded: int = 0
    prompt_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    uncached_tokens: int = 0
    output_tokens: int = 0

    @property
    def hit_rate(self) -> float:
        """Share of the recorded prompt tokens read from the cache (0.0 when none)."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def usage_totals(usages: Iterable[Usage | None]) -> RecordedUsageTotals:
    """Sum per-call usages (``None`` entries count as calls without usage)."""
    calls = recorded = prompt = read = write = uncached = output = 0
    for usage in usages:
        calls += 1
        if usage is None:
            continue
        recorded += 1
        prompt += usage.prompt_tokens
        read += usage.cache_read_tokens
        write += usage.cache_write_tokens
        uncached += usage.uncached_tokens
        output += usage.output_tokens
    return RecordedUsageTotals(calls, recorded, prompt, read, write, uncached, output)
