"""Data that travels through the agent loop: usage, completions, step records and run results.

All are frozen msgspec Structs (JSON-able with ``msgspec.json.encode``). Units: tokens for every
``*_tokens`` field, USD for ``cost_usd``, milliseconds for ``prompt_ms`` (as llama.cpp reports
``timings.prompt_ms``).

Usage and completions (:class:`ProviderUsage`, :class:`Completion`, :data:`USAGE_COUNTS`) are
what a provider answers: defined in :mod:`regio.providers.completion`, re-exported here.
"""

from __future__ import annotations

import msgspec

from regio.providers.completion import USAGE_COUNTS, Completion, ProviderUsage

__all__ = [
    "USAGE_COUNTS",
    "Completion",
    "LoopPricing",
    "ProviderUsage",
    "RunResult",
    "RunTotals",
    "StepRecord",
]


class LoopPricing(msgspec.Struct, frozen=True):
    """Prices in USD per million tokens, used for the loop's ``max_usd`` budget.

    ``cached`` and ``cache_write`` default to ``None``, meaning "same as ``input``" (no
    discount and no surcharge).
    """

    input: float
    output: float = 0.0
    cached: float | None = None
    cache_write: float | None = None

    def cost(self, usage: ProviderUsage) -> float:
        """USD of one call: uncached input, cache reads, cache writes and output, each at its
        price per million tokens."""
        cached = self.input if self.cached is None else self.cached
        write = self.input if self.cache_write is None else self.cache_write
        return (
            usage.uncached_tokens * self.input
            + usage.cached_tokens * cached
            + usage.cache_write_tokens * write
            + usage.output_tokens * self.output
        ) / 1e6


class StepRecord(msgspec.Struct, frozen=True):
    """One step of a run (one provider call plus its tool executions).

    * ``step``: 1-based index;
    * ``prompt_tokens`` / ``cached_tokens`` / ``cache_write_tokens`` / ``output_tokens``: as
      the provider reported them;
    * ``predicted_cached_tokens``: what the attached cache predictor said before the call
      (``None`` without one);
    * ``estimated_prompt_tokens``: the engine's own count of the request (layout tokens);
    * ``window_used`` / ``window_budget``: the window's tokens in use after the step and its
      budget;
    * ``tool_calls``: names of the tools called in this step, in order;
    * ``overflow_retries``: how many context-overflow recoveries this step needed (0 or 1);
    * ``cost_usd``: priced with the loop's :class:`LoopPricing` (``None`` without one);
    * ``prompt_ms``: server-reported prompt-processing time, when reported;
    * ``unreported``: the counts the provider did not report (``ProviderUsage.unreported``:
      0 above, but unknown).
    """

    step: int
    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int
    predicted_cached_tokens: int | None
    estimated_prompt_tokens: int
    window_used: int
    window_budget: int
    tool_calls: tuple[str, ...] = ()
    overflow_retries: int = 0
    cost_usd: float | None = None
    prompt_ms: float | None = None
    unreported: tuple[str, ...] = ()


class RunTotals(msgspec.Struct, frozen=True):
    """Sums over the steps of a run (tokens; USD, ``None`` when no pricing was given)."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def add(self, record: StepRecord) -> RunTotals:
        """These totals plus one step."""
        cost = self.cost_usd
        if record.cost_usd is not None:
            cost = (cost or 0.0) + record.cost_usd
        return RunTotals(
            prompt_tokens=self.prompt_tokens + record.prompt_tokens,
            cached_tokens=self.cached_tokens + record.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + record.cache_write_tokens,
            output_tokens=self.output_tokens + record.output_tokens,
            cost_usd=cost,
        )


class RunResult(msgspec.Struct, frozen=True):
    """The outcome of :meth:`regio.agent.AgentLoop.run`.

    ``final_text`` is the text of the last assistant message (the answer when ``stop_reason``
    is ``final_answer``); ``stop_reason`` is one of ``final_answer``, ``max_steps``,
    ``max_prompt_tokens``, ``max_usd``; ``steps`` the per-step records; ``usage`` their sums.
    """

    final_text: str
    stop_reason: str
    steps: tuple[StepRecord, ...]
    usage: RunTotals

    @property
    def cached_share(self) -> float:
        """cached / prompt tokens over the run (0 when nothing was sent)."""
        if self.usage.prompt_tokens == 0:
            return 0.0
        return self.usage.cached_tokens / self.usage.prompt_tokens
