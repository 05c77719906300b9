"""Data that travels through the agent loop: usage, completions, step records and run results.

All are frozen msgspec Structs (JSON-able with ``msgspec.json.encode``). Units: tokens for every
``*_tokens`` field, USD for ``cost_usd``, milliseconds for ``prompt_ms`` (as llama.cpp reports
``timings.prompt_ms``).

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

__all__ = [
    "USAGE_COUNTS",
    "Completion",
    "LoopPricing",
    "ProviderUsage",
    "RunResult",
    "RunTotals",
    "StepRecord",
]


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
