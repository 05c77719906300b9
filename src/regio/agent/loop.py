"""The agent loop: engine -> provider -> assistant turn -> tools -> engine, until done.

One **step** is one provider call:

1. at the turn boundary, flush pending compactions (``engine.request`` does it before laying
   out; never mid-turn);
2. assemble and render the request (``engine.request(provider.api, provider.model)``);
3. stop before sending when the request would pass ``max_prompt_tokens``;
4. call the provider; on a context-length refusal (recognised by
   :func:`regio.providers.overflow.classify_overflow`) hand the error to
   ``engine.recover_overflow`` (one compaction to half the allowance) and retry **once**; a
   second refusal raises :class:`regio.errors.ContextOverflowError`
   (see ``docs/runtime.md``). Any other provider error propagates unchanged;
5. report usage to ``engine.observe`` and ask the attached :class:`CachePredictor` (if any)
   what it predicted;
6. record the assistant turn (``engine.add_assistant``); without tool calls it is the final
   answer and the run stops;
7. run every tool call of the turn, in order (parallel calls are answered together): user
   :class:`regio.agent.tools.Tool` s by name, the engine's context tools through
   ``engine.handle_tool_call``; unknown tools, bad arguments and tool exceptions come back to
   the agent as error tool results, never raised; then record the results.

Every engine call that can end in a summary (adding the task, the assistant turn and the tool
results; the request; overflow recovery; context tools) is an effect of the run's one step
generator: :meth:`AgentLoop.run` answers it with the engine's sync entry, :meth:`AgentLoop.arun`
awaits its async twin (``aadd_message``, ``arequest``, ``arecover_overflow``,
``ahandle_tool_call``: :mod:`regio.engine._asyncentries`), so an async summarizer is awaited on
every path that compacts, never refused.

The run stops on a final answer (``final_answer``), after ``max_steps`` steps (``max_steps``),
or when a budget is spent (``max_prompt_tokens``: reported prompt tokens summed over steps;
``max_usd``: priced with ``pricing``).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from regio.clients import ProviderAdapter
from regio.content import Message, Text, ToolResult, ToolUse
from regio.drive import adrive, drive
from regio.errors import ContextOverflowError
from regio.events import EventBus
from regio.providers.overflow import classify_overflow
from regio.providers.wire import INVALID_ARGUMENTS_KEY
from regio.session._declared import adopt_context_window, declared_context_window
from regio.session._toolargs import echo

from .engine_port import EnginePort
from .errors import AgentConfigError
from .events import RunFinished, StepCompleted, StepStarted
from .predict import CachePredictor
from .tools import Tool, UserToolOutcome
from .types import Completion, LoopPricing, RunResult, RunTotals, StepRecord

if TYPE_CHECKING:
    from regio.engine import Engine
    from regio.layout.model import Request

__all__ = ["STOP_REASONS", "AgentLoop"]

#: Every value :attr:`RunResult.stop_reason` can take.
STOP_REASONS = ("final_answer", "max_steps", "max_prompt_tokens", "max_usd")


def _check_positive(
    instance: AgentLoop, attribute: attrs.Attribute[Any], value: float | None
) -> None:
    if value is not None and value <= 0:
        raise AgentConfigError(f"AgentLoop.{attribute.name} must be > 0 (or None), got {value!r}")


@attrs.define
class AgentLoop:
    """Drives one agent through an engine and a provider.

    * ``engine``: a :class:`regio.engine.Engine` (anything offering the calls listed in
      :class:`regio.agent.engine_port.EnginePort`);
    * ``provider``: a :class:`regio.agent.providers.ProviderAdapter`;
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

    engine: Engine
    provider: ProviderAdapter
    tools: Sequence[Tool] = ()
    max_steps: int = attrs.field(default=20, validator=_check_positive)
    max_prompt_tokens: int | None = attrs.field(default=None, validator=_check_positive)
    max_usd: float | None = attrs.field(default=None, validator=_check_positive)
    pricing: LoopPricing | None = None
    predictor: CachePredictor | None = None
    events: EventBus = attrs.field(default=None)
    port: EnginePort = attrs.field(init=False)
    _by_name: dict[str, Tool] = attrs.field(init=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        self.port = EnginePort(self.engine)
        declared = declared_context_window(self.provider)
        if declared is not None:  # the provider's model window, when it declares one
            adopt_context_window(self.engine, declared, type(self.provider).__name__)
        if self.events is None:
            bus = getattr(self.engine, "events", None)
            self.events = bus if isinstance(bus, EventBus) else EventBus()
        if self.max_usd is not None and self.pricing is None:
            raise AgentConfigError(
                "AgentLoop.max_usd needs pricing=LoopPricing(input=..., output=...) to price calls"
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

    def _budget_stop(self, totals: RunTotals, estimate: int | None = None) -> str | None:
        if self.max_prompt_tokens is not None:
            upcoming = totals.prompt_tokens + (estimate or 0)
            if totals.prompt_tokens >= self.max_prompt_tokens or (
                estimate is not None and upcoming > self.max_prompt_tokens
            ):
                return "max_prompt_tokens"
        if self.max_usd is not None and (totals.cost_usd or 0.0) >= self.max_usd:
            return "max_usd"
        return None

    def _overflow_or_raise(
        self, error: Exception, retries: int, estimate: int
    ) -> Generator[_Effect, Any, None]:
        """Recover from a length refusal (first time) or raise (not an overflow / second)."""
        info = classify_overflow(error)
        if info is None:
            raise error
        if retries >= 1:
            # The engine owns the numbers of a second refusal; let it raise first.
            yield _EngineCall("recover_overflow", (error,))
            raise ContextOverflowError(
                "the provider refused the request for length again after one compaction "
                f"(reported {info.reported}, maximum {info.maximum}, estimated {estimate}); "
                "lower the window budget in the blueprint or use a model with a larger window",
                reported=info.reported,
                maximum=info.maximum,
                estimated=estimate,
                provider_error=error,
            ) from error
        yield _EngineCall("recover_overflow", (error,))

    def _request(self) -> _EngineCall:
        """The effect laying out the next request (the engine flushes at the turn boundary)."""
        args = (self.provider.api, self.provider.model, getattr(self.provider, "max_tokens", None))
        return _EngineCall("request", args)

    def _expected(self, estimate: int) -> int:
        """The engine's calibrated expectation of the reported prompt size (tokens)."""
        return self.port.calibrated_tokens(estimate, self.provider.api, self.provider.model)

    def _stop_before(self, run: _Run, step: int) -> RunResult | None:
        """The result when a budget is already spent before ``step`` starts, else ``None``."""
        stop = self._budget_stop(run.totals)
        return None if stop is None else self._result(run, stop)

    def _open(
        self, run: _Run, step: int, request: Request, payload: dict[str, Any]
    ) -> _Attempt | RunResult:
        """Step ``step`` laid out as ``request`` / ``payload``: emit ``step_started`` and stop
        when the calibrated estimate would pass ``max_prompt_tokens``."""
        estimate = self.port.request_tokens(request, self.provider.api)
        used, budget = self.port.window_state()
        self.events.emit(StepStarted(step, estimate, used, budget))
        if self._budget_stop(run.totals, self._expected(estimate)) is not None:
            return self._result(run, "max_prompt_tokens")
        return _Attempt(step, request, payload, estimate)

    def _retry(self, attempt: _Attempt, error: Exception) -> Generator[_Effect, Any, None]:
        """Recover from a length refusal and re-lay the request, or raise (see
        :meth:`_overflow_or_raise`)."""
        yield from self._overflow_or_raise(error, attempt.retries, attempt.estimate)
        attempt.retries += 1
        attempt.request, attempt.payload = yield self._request()
        attempt.estimate = self.port.request_tokens(attempt.request, self.provider.api)

    def _accept(
        self, run: _Run, attempt: _Attempt, completion: Completion
    ) -> Generator[_Effect, Any, list[ToolUse]]:
        """Observe usage, predict, price and record the assistant turn; returns its tool
        calls (empty: final answer)."""
        self.port.observe(completion, self.provider.api)
        if self.predictor is not None:
            attempt.predicted = self.predictor.predict(attempt.request, attempt.payload, completion)
        if self.pricing is not None:
            attempt.cost = self.pricing.cost(completion.usage)
        yield _EngineCall("adopt_compactions", (completion, self.provider.api))
        yield _EngineCall("add_assistant", (completion.message,))
        run.text = assistant_text(completion.message) or run.text
        return list(completion.message.tool_calls)

    def _close(
        self,
        run: _Run,
        attempt: _Attempt,
        completion: Completion,
        results: list[ToolResult],
    ) -> RunResult | None:
        """Emit ``step_completed`` (the tool ``results`` are recorded) and return the result
        when the turn was the final answer (no tool calls), else ``None``."""
        usage = completion.usage
        used, budget = self.port.window_state()
        record = StepRecord(
            step=attempt.step,
            prompt_tokens=usage.prompt_tokens,
            cached_tokens=usage.cached_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
            predicted_cached_tokens=attempt.predicted,
            estimated_prompt_tokens=attempt.estimate,
            window_used=used,
            window_budget=budget,
            tool_calls=tuple(c.name for c in completion.message.tool_calls),
            overflow_retries=attempt.retries,
            cost_usd=attempt.cost,
            prompt_ms=usage.prompt_ms,
            unreported=usage.unreported,
        )
        self.events.emit(StepCompleted(**{f: getattr(record, f) for f in record.__struct_fields__}))
        run.steps.append(record)
        run.totals = run.totals.add(record)
        return None if completion.message.tool_calls else self._result(run, "final_answer")

    def _exhausted(self, run: _Run) -> RunResult:
        """The result after ``max_steps`` steps without a final answer."""
        return self._result(run, self._budget_stop(run.totals) or "max_steps")

    def _bad_call(self, call: ToolUse) -> UserToolOutcome | None:
        if INVALID_ARGUMENTS_KEY in call.input:
            return UserToolOutcome(
                f"Error: the arguments of {call.name} were not a valid JSON object "
                f"({call.input[INVALID_ARGUMENTS_KEY][:200]!r}). Call {call.name} again with "
                "a JSON object.",
                is_error=True,
            )
        if call.name not in self._by_name and call.name not in self.port.context_tool_names():
            known = sorted({*self._by_name, *self.port.context_tool_names()})
            return UserToolOutcome(
                f"Error: there is no tool named {echo(call.name)}. Available tools: "
                f"{', '.join(known) or '(none)'}.",
                is_error=True,
            )
        return None

    def _result(self, run: _Run, reason: str) -> RunResult:
        self.events.emit(
            RunFinished(reason, len(run.steps), run.totals.prompt_tokens, run.totals.cached_tokens)
        )
        return RunResult(
            final_text=run.text, stop_reason=reason, steps=tuple(run.steps), usage=run.totals
        )

    # ------------------------------------------------------------------ the run, as steps

    def _steps(self, task: str | None) -> Generator[_Effect, Any, RunResult]:
        """The whole run as one generator (see module docstring): it yields the effects that
        differ between sync and async (engine calls that can end in a summary, provider call,
        tool call) and receives their results; a provider error is thrown in at its call."""
        if task is not None:
            yield _EngineCall("add_user", (task,))
        run = _Run()
        for step in range(1, self.max_steps + 1):
            done = self._stop_before(run, step)
            if done is not None:
                return done
            request, payload = yield self._request()
            attempt = self._open(run, step, request, payload)
            if isinstance(attempt, RunResult):
                return attempt
            while True:
                try:
                    completion = yield _Complete(attempt.payload)
                    break
                except Exception as exc:
                    yield from self._retry(attempt, exc)
            results = []
            for call in (yield from self._accept(run, attempt, completion)):
                results.append((yield _CallTool(call)))
            if results:
                yield _EngineCall("add_tool_results", (results,))
            done = self._close(run, attempt, completion, results)
            if done is not None:
                return done
        return self._exhausted(run)

    # ------------------------------------------------------------------ sync driver

    def _call_tool(self, call: ToolUse) -> ToolResult:
        bad = self._bad_call(call)
        if bad is not None:
            return bad.result(call.id)
        tool = self._by_name.get(call.name)
        if tool is not None:
            return tool.call(dict(call.input)).result(call.id)
        return self.port.handle_tool_call(call.name, dict(call.input)).result(call.id)

    def _do(self, effect: _Effect) -> Any:
        if isinstance(effect, _Complete):
            return self.provider.complete(effect.payload)
        if isinstance(effect, _CallTool):
            return self._call_tool(effect.call)
        return getattr(self.port, effect.name)(*effect.args)

    def run(self, task: str | None = None) -> RunResult:
        """Run until a final answer or a limit (see module docstring).

        ``task`` is added as a user message first (``None``: continue the engine's current
        conversation). Returns a :class:`RunResult`. Raises
        :class:`regio.errors.ContextOverflowError` on a second length refusal in one
        step and re-raises any other provider error.
        """
        return drive(self._steps(task), self._do)

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

    async def _ado(self, effect: _Effect) -> Any:
        if isinstance(effect, _Complete):
            return await self.provider.acomplete(effect.payload)
        if isinstance(effect, _CallTool):
            return await self._acall_tool(effect.call)
        return await getattr(self.port, f"a{effect.name}")(*effect.args)

    async def arun(self, task: str | None = None) -> RunResult:
        """:meth:`run` with provider ``acomplete``, async tools, and every engine call that can
        end in a summary awaited through the engine's async twin (``aadd_message``,
        ``arequest``, ...), so an async summarizer is awaited on every path that compacts."""
        return await adrive(self._steps(task), self._ado)


@attrs.frozen
class _EngineCall:
    """Effect: the engine call :class:`EnginePort` ``name`` with ``args``, one that can end in
    a summary; the sync driver calls ``port.<name>``, the async one awaits ``port.a<name>``."""

    name: str
    args: tuple[Any, ...]


@attrs.frozen
class _Complete:
    """Effect: one provider call with ``payload``; answers with a :class:`Completion`."""

    payload: dict[str, Any]


@attrs.frozen
class _CallTool:
    """Effect: run one tool call; answers with its :class:`ToolResult`."""

    call: ToolUse


_Effect = _EngineCall | _Complete | _CallTool


@attrs.define
class _Run:
    """The state of one run: steps recorded so far, their usage totals, the last text."""

    steps: list[StepRecord] = attrs.Factory(list)
    totals: RunTotals = attrs.Factory(RunTotals)
    text: str = ""


@attrs.define
class _Attempt:
    """One step's request as sent (re-laid after an overflow recovery) and what the loop
    learnt about it."""

    step: int
    request: Request
    payload: dict[str, Any]
    estimate: int
    retries: int = 0
    predicted: int | None = None
    cost: float | None = None


def assistant_text(message: Message) -> str:
    """The text blocks of an assistant message joined by newlines (no tool calls, no
    thinking)."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, Text) and b.text)
