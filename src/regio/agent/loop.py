"""The agent loop: engine -> provider -> assistant turn -> tools -> engine, until done.

One **step** is one provider call:

1. at the turn boundary, flush pending compactions (``engine.request`` does it before laying
   out; :meth:`AgentLoop.arun` awaits ``engine.aflush()`` first; never mid-turn);
2. assemble and render the request (``engine.request(provider.api, provider.model)``);
3. stop before sending when the request would pass ``max_prompt_tokens``;
4. call the provider; on a context-length refusal (recognised by
   :func:`regio.runtime.overflow.classify_overflow`) hand the error to
   ``engine.recover_overflow`` (one compaction to half the allowance) and retry **once**; a
   second refusal raises :class:`regio.runtime.errors.ContextOverflowError` (DESIGN.md
   section 4, "Overflow recovery"). Any other provider error propagates unchanged;
5. report usage to ``engine.observe`` and ask the attached :class:`CachePredictor` (if any)
   what it predicted;
6. record the assistant turn (``engine.add_assistant``); without tool calls it is the final
   answer and the run stops;
7. run every tool call of the turn, in order (parallel calls are answered together): user
   :class:`regio.agent.tools.Tool` s by name, the engine's context tools through
   ``engine.handle_tool_call``; unknown tools, bad arguments and tool exceptions come back to
   the agent as error tool results, never raised; then record the results.

The run stops on a final answer (``final_answer``), after ``max_steps`` steps (``max_steps``),
or when a budget is spent (``max_prompt_tokens``: reported prompt tokens summed over steps;
``max_usd``: priced with ``pricing``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from regio.content import Message, Text, ToolResult, ToolUse
from regio.events import EventBus
from regio.runtime.errors import ContextOverflowError
from regio.runtime.overflow import classify_overflow

from .engine_port import EnginePort
from .errors import AgentConfigError
from .events import RunFinished, StepCompleted, StepStarted
from .predict import CachePredictor
from .providers.base import Provider
from .providers.wire import INVALID_ARGUMENTS_KEY
from .tools import Tool, ToolOutcome
from .types import Completion, Pricing, RunResult, StepRecord, UsageTotals

__all__ = ["STOP_REASONS", "AgentLoop"]

#: Every value :attr:`RunResult.stop_reason` can take.
STOP_REASONS = ("final_answer", "max_steps", "max_prompt_tokens", "max_usd")


def _check_positive(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and value <= 0:
        raise AgentConfigError(f"AgentLoop.{attribute.name} must be > 0 (or None), got {value!r}")


@attrs.define
class AgentLoop:
    """Drives one agent through an engine and a provider.

    * ``engine``: a :class:`regio.runtime.Engine` (anything offering the calls listed in
      :class:`regio.agent.engine_port.EnginePort`);
    * ``provider``: a :class:`regio.agent.providers.Provider`;
    * ``tools``: user tools; their names must differ from the engine's context tools;
    * ``max_steps``: provider calls per run (default 20);
    * ``max_prompt_tokens``: budget of reported prompt tokens over the run (``None``: none);
    * ``max_usd``: budget in USD, priced with ``pricing`` (required when set);
    * ``predictor``: optional :class:`CachePredictor` (predicted cached tokens per step);
    * ``events``: the bus for ``step_started`` / ``step_completed`` / ``run_finished``
      (default: the engine's bus).

    Raises :class:`AgentConfigError` for a tool name used twice (or shadowing a context tool),
    a non-positive limit, or ``max_usd`` without ``pricing``.
    """

    engine: Any
    provider: Provider
    tools: Sequence[Tool] = ()
    max_steps: int = attrs.field(default=20, validator=_check_positive)
    max_prompt_tokens: int | None = attrs.field(default=None, validator=_check_positive)
    max_usd: float | None = attrs.field(default=None, validator=_check_positive)
    pricing: Pricing | None = None
    predictor: CachePredictor | None = None
    events: EventBus = attrs.field(default=None)
    port: EnginePort = attrs.field(init=False)
    _by_name: dict[str, Tool] = attrs.field(init=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        self.port = EnginePort(self.engine)
        if self.events is None:
            bus = getattr(self.engine, "events", None)
            self.events = bus if isinstance(bus, EventBus) else EventBus()
        if self.max_usd is not None and self.pricing is None:
            raise AgentConfigError(
                "AgentLoop.max_usd needs pricing=Pricing(input=..., output=...) to price calls"
            )
        context = set(self.port.context_tool_names())
        for tool in self.tools:
            if tool.name in self._by_name:
                raise AgentConfigError(f"two user tools are named {tool.name!r}; rename one")
            if tool.name in context:
                raise AgentConfigError(
                    f"user tool {tool.name!r} shadows the engine's context tool of that name; "
                    "rename the user tool"
                )
            self._by_name[tool.name] = tool
        self.port.register_user_tools([t.spec() for t in self.tools])

    # ------------------------------------------------------------------ shared pieces

    def _budget_stop(self, totals: UsageTotals, estimate: int | None = None) -> str | None:
        if self.max_prompt_tokens is not None:
            upcoming = totals.prompt_tokens + (estimate or 0)
            if totals.prompt_tokens >= self.max_prompt_tokens or (
                estimate is not None and upcoming > self.max_prompt_tokens
            ):
                return "max_prompt_tokens"
        if self.max_usd is not None and (totals.cost_usd or 0.0) >= self.max_usd:
            return "max_usd"
        return None

    def _overflow_or_raise(self, error: Exception, retries: int, estimate: int) -> None:
        """Recover from a length refusal (first time) or raise (not an overflow / second)."""
        info = classify_overflow(error)
        if info is None:
            raise error
        if retries >= 1:
            # The engine owns the numbers of a second refusal; let it raise first.
            self.port.recover_overflow(error)
            raise ContextOverflowError(
                "the provider refused the request for length again after one compaction "
                f"(reported {info.reported}, maximum {info.maximum}, estimated {estimate}); "
                "lower the window budget in the blueprint or use a model with a larger window",
                reported=info.reported,
                maximum=info.maximum,
                estimated=estimate,
                provider_error=error,
            ) from error
        self.port.recover_overflow(error)

    def _request(self) -> tuple[Any, dict[str, Any]]:
        return self.port.request(
            self.provider.api, self.provider.model, getattr(self.provider, "max_tokens", None)
        )

    def _expected(self, estimate: int) -> int:
        """The engine's calibrated expectation of the reported prompt size (tokens)."""
        return self.port.calibrated_tokens(estimate, self.provider.api, self.provider.model)

    def _begin(self, step: int) -> tuple[Any, dict[str, Any], int]:
        request, payload = self._request()
        estimate = self.port.request_tokens(request)
        used, budget = self.port.window_state()
        self.events.emit(StepStarted(step, estimate, used, budget))
        return request, payload, estimate

    def _record(
        self,
        step: int,
        request: Any,
        payload: dict[str, Any],
        completion: Completion,
        estimate: int,
        retries: int,
    ) -> tuple[int | None, float | None]:
        self.port.observe(completion, self.provider.api)
        predicted = None
        if self.predictor is not None:
            predicted = self.predictor.predict(request, payload, completion)
        cost = self.pricing.cost(completion.usage) if self.pricing is not None else None
        self.port.add_assistant(completion.message)
        return predicted, cost

    def _finish_step(
        self,
        step: int,
        completion: Completion,
        estimate: int,
        retries: int,
        predicted: int | None,
        cost: float | None,
    ) -> StepRecord:
        usage = completion.usage
        used, budget = self.port.window_state()
        record = StepRecord(
            step=step,
            prompt_tokens=usage.prompt_tokens,
            cached_tokens=usage.cached_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
            predicted_cached_tokens=predicted,
            estimated_prompt_tokens=estimate,
            window_used=used,
            window_budget=budget,
            tool_calls=tuple(c.name for c in completion.message.tool_calls),
            overflow_retries=retries,
            cost_usd=cost,
            prompt_ms=usage.prompt_ms,
        )
        self.events.emit(StepCompleted(**{f: getattr(record, f) for f in record.__struct_fields__}))
        return record

    def _bad_call(self, call: ToolUse) -> ToolOutcome | None:
        if INVALID_ARGUMENTS_KEY in call.input:
            return ToolOutcome(
                f"Error: the arguments of {call.name} were not a valid JSON object "
                f"({call.input[INVALID_ARGUMENTS_KEY][:200]!r}). Call {call.name} again with "
                "a JSON object.",
                is_error=True,
            )
        if call.name not in self._by_name and call.name not in self.port.context_tool_names():
            known = sorted({*self._by_name, *self.port.context_tool_names()})
            return ToolOutcome(
                f"Error: there is no tool named {call.name!r}. Available tools: "
                f"{', '.join(known) or '(none)'}.",
                is_error=True,
            )
        return None

    def _result(
        self, step: int, steps: list[StepRecord], totals: UsageTotals, reason: str, text: str
    ) -> RunResult:
        self.events.emit(
            RunFinished(reason, len(steps), totals.prompt_tokens, totals.cached_tokens)
        )
        return RunResult(final_text=text, stop_reason=reason, steps=tuple(steps), usage=totals)

    # ------------------------------------------------------------------ sync driver

    def _call_tool(self, call: ToolUse) -> ToolResult:
        bad = self._bad_call(call)
        if bad is not None:
            return bad.result(call.id)
        tool = self._by_name.get(call.name)
        if tool is not None:
            return tool.call(dict(call.input)).result(call.id)
        return self.port.handle_tool_call(call.name, dict(call.input)).result(call.id)

    def run(self, task: str | None = None) -> RunResult:
        """Run until a final answer or a limit (see module docstring).

        ``task`` is added as a user message first (``None``: continue the engine's current
        conversation). Returns a :class:`RunResult`. Raises
        :class:`regio.runtime.errors.ContextOverflowError` on a second length refusal in one
        step and re-raises any other provider error.
        """
        if task is not None:
            self.port.add_user(task)
        steps: list[StepRecord] = []
        totals = UsageTotals()
        text = ""
        for step in range(1, self.max_steps + 1):
            stop = self._budget_stop(totals)
            if stop is not None:
                return self._result(step, steps, totals, stop, text)
            request, payload, estimate = self._begin(step)  # flushes at the turn boundary
            if self._budget_stop(totals, self._expected(estimate)) is not None:
                return self._result(step, steps, totals, "max_prompt_tokens", text)
            retries = 0
            while True:
                try:
                    completion = self.provider.complete(payload)
                    break
                except Exception as exc:
                    self._overflow_or_raise(exc, retries, estimate)
                    retries += 1
                    request, payload = self._request()
                    estimate = self.port.request_tokens(request)
            predicted, cost = self._record(step, request, payload, completion, estimate, retries)
            text = assistant_text(completion.message) or text
            calls = completion.message.tool_calls
            if calls:
                self.port.add_tool_results([self._call_tool(c) for c in calls])
            record = self._finish_step(step, completion, estimate, retries, predicted, cost)
            steps.append(record)
            totals = totals.add(record)
            if not calls:
                return self._result(step, steps, totals, "final_answer", text)
        stop = self._budget_stop(totals) or "max_steps"
        return self._result(self.max_steps, steps, totals, stop, text)

    # ------------------------------------------------------------------ async driver

    async def _acall_tool(self, call: ToolUse) -> ToolResult:
        bad = self._bad_call(call)
        if bad is not None:
            return bad.result(call.id)
        tool = self._by_name.get(call.name)
        if tool is not None:
            return (await tool.acall(dict(call.input))).result(call.id)
        outcome = await self.port.ahandle_tool_call(call.name, dict(call.input))
        return outcome.result(call.id)

    async def arun(self, task: str | None = None) -> RunResult:
        """Async twin of :meth:`run` (provider ``acomplete``, async tools and the engine's
        async twins where it has them)."""
        if task is not None:
            self.port.add_user(task)
        steps: list[StepRecord] = []
        totals = UsageTotals()
        text = ""
        for step in range(1, self.max_steps + 1):
            stop = self._budget_stop(totals)
            if stop is not None:
                return self._result(step, steps, totals, stop, text)
            await self.port.aflush()
            request, payload, estimate = self._begin(step)
            if self._budget_stop(totals, self._expected(estimate)) is not None:
                return self._result(step, steps, totals, "max_prompt_tokens", text)
            retries = 0
            while True:
                try:
                    completion = await self.provider.acomplete(payload)
                    break
                except Exception as exc:
                    self._overflow_or_raise(exc, retries, estimate)
                    retries += 1
                    request, payload = self._request()
                    estimate = self.port.request_tokens(request)
            predicted, cost = self._record(step, request, payload, completion, estimate, retries)
            text = assistant_text(completion.message) or text
            calls = completion.message.tool_calls
            if calls:
                self.port.add_tool_results([await self._acall_tool(c) for c in calls])
            record = self._finish_step(step, completion, estimate, retries, predicted, cost)
            steps.append(record)
            totals = totals.add(record)
            if not calls:
                return self._result(step, steps, totals, "final_answer", text)
        stop = self._budget_stop(totals) or "max_steps"
        return self._result(self.max_steps, steps, totals, stop, text)


def assistant_text(message: Message) -> str:
    """The text blocks of an assistant message joined by newlines (no tool calls, no
    thinking)."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, Text) and b.text)
