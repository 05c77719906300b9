"""The :class:`Engine`: owns a window, admits writes, flushes compactions, recovers from
overflow, records usage and emits events (DESIGN.md section 4).

Typical loop::

    engine = Engine.from_blueprint("agent.yaml", summarizer=ExtractiveSummarizer())
    engine.add_user("Fix the failing test in tests/test_api.py")
    request, payload = engine.request()            # flushes pending compactions first
    try:
        response = client.messages.create(**payload)
    except anthropic.BadRequestError as exc:
        engine.recover_overflow(exc)               # compacts; retry once, or raises
    engine.observe(response.usage)                 # calibration + usage ledger
    engine.add_assistant(...); engine.add_tool_result(...)

Budget truth (DESIGN.md section 4): ``ceiling = min(window max, model context window) - output
reserve - tool schemas - system overhead``, compared with the request's estimate corrected by
:class:`regio.tokens.Calibration` (FC-18).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from regio.content import Block, Entry, Message, Text, Thinking, ToolResult, ToolUse
from regio.events import Event, EventBus
from regio.layout import LayoutState, RenderLog, Request, ToolSpec, assemble
from regio.providers import economics_for
from regio.regions import Refusal, Window, WriteResult
from regio.tokens import Calibration

from . import compaction as cp
from .budget import BudgetMixin
from .errors import ContextOverflowError
from .events import CalibrationUpdated, OrphanToolResult, OverBudget, UsageObserved
from .extractive import ExtractiveSummarizer
from .flushing import FlushMixin
from .overflow import classify_overflow
from .recovery import RetryToken, recover
from .render import render_payload
from .summarizer import DEFAULT_STANDING_INSTRUCTIONS
from .transcript import RecordKind, Transcript, TranscriptRecord
from .usage import PriceLookup, UsageLedger, UsageRecord, rule_prices

__all__ = ["Engine"]


@attrs.define(eq=False, kw_only=True)
class Engine(BudgetMixin, FlushMixin):
    """Drives one agent's window (see module doc). Build with :meth:`from_blueprint` or directly
    from a :class:`regio.regions.Window`.

    Options (tokens unless noted): ``provider`` / ``model`` (defaults for :meth:`request`),
    ``context_window`` (the model's window; default the window's ``max_tokens`` plus
    ``output_reserve``), ``output_reserve`` (kept for the answer), ``strategy`` (layout
    strategy), ``ttl``, ``chunk_tokens``, ``settle_share``, ``targets`` (region -> hysteresis
    target), ``compact_trigger`` (whole-context trigger in calibrated tokens, or ``None``),
    ``auto_compact`` (flush and recover automatically), ``no_progress_limit`` (N),
    ``carry_forward`` (``append`` | ``replace``), ``cut_at_turns`` (hysteresis cuts prefer
    user-turn starts, so whole turns go), ``standing_instructions``,
    ``clock`` (seconds; the engine reads time only from it).
    """

    window: Window
    summarizer: Any = attrs.field(factory=ExtractiveSummarizer)
    provider: str = "anthropic"
    model: str = ""
    context_window: int | None = None
    output_reserve: int = 0
    strategy: str = "regio"
    ttl: str = "5m"
    chunk_tokens: int = 1024
    settle_share: float = 0.1
    targets: dict[str, int] = attrs.field(factory=dict)
    compact_trigger: int | None = None
    auto_compact: bool = True
    no_progress_limit: int = 3
    cut_at_turns: bool = False
    carry_forward: str = attrs.field(
        default="append", validator=attrs.validators.in_(("append", "replace"))
    )
    standing_instructions: str = DEFAULT_STANDING_INSTRUCTIONS
    calibration: Calibration = attrs.field(factory=Calibration)
    ledger: UsageLedger = attrs.field(factory=UsageLedger)
    transcript_log: Transcript = attrs.field(factory=Transcript)
    clock: Callable[[], float] = time.time
    session_id: str | None = None
    blueprint_text: str | None = None
    tokenizer: str | None = None
    extra_tools: tuple[ToolSpec, ...] = ()
    book: cp.CompactionBook = attrs.field(factory=cp.CompactionBook)
    layout_state: LayoutState | None = None
    render_log: RenderLog = attrs.field(factory=RenderLog, repr=False)
    last_request: Request | None = None
    last_estimate: int = 0
    last_provider: str = ""
    last_model: str = ""
    overflow_retry: bool = False
    allow_custom_hooks: bool = False

    def __attrs_post_init__(self) -> None:
        if self.no_progress_limit < 1:
            raise ValueError(f"no_progress_limit must be >= 1, got {self.no_progress_limit}")
        if self.window.counter is None:
            raise ValueError(
                "the engine's window needs a token counter (Window(counter=...)); entries are "
                "counted once when written"
            )

    # ----- construction ------------------------------------------------------------------
    @classmethod
    def from_blueprint(
        cls,
        blueprint: Any,
        *,
        summarizer: Any = None,
        token_counter: Any = None,
        allow_custom_hooks: bool = False,
        clock: Callable[[], float] | None = None,
        prices: PriceLookup | None = None,
        **options: Any,
    ) -> Engine:
        """An engine for ``blueprint`` (a path, YAML text or a loaded
        :class:`regio.blueprint.Blueprint`). ``summarizer`` defaults to an
        :class:`ExtractiveSummarizer` sized by the blueprint's ``summarizer`` section;
        ``token_counter`` to the blueprint's tokenizer; ``options`` override engine options.
        Raises :class:`regio.blueprint.BlueprintError` for an invalid blueprint."""
        from .blueprint_bridge import engine_options

        kwargs = engine_options(
            blueprint,
            summarizer=summarizer,
            token_counter=token_counter,
            allow_custom_hooks=allow_custom_hooks,
        )
        if clock is not None:
            kwargs["clock"] = clock
        if prices is not None:
            kwargs["ledger"] = UsageLedger(prices=prices)
        kwargs.update(options)
        return cls(**kwargs)

    # ----- events ------------------------------------------------------------------------
    @property
    def events(self) -> EventBus:
        """The window's event bus (regions, layout and runtime events, in order)."""
        return self.window.events

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every later event; returns an unsubscribe function."""
        return self.window.events.subscribe(callback)

    def emit(self, event: Event) -> None:
        """Emit a runtime event on the window's bus."""
        self.window.events.emit(event)

    # ----- transcript --------------------------------------------------------------------
    def record(
        self,
        kind: RecordKind,
        region: str,
        *,
        entry: Entry | None = None,
        ids: Iterable[str] = (),
    ) -> TranscriptRecord:
        """Append a record to the transcript."""
        return self.transcript_log.add(
            kind, region, turn=self.window.turn, entry=entry, ids=ids, at=float(self.clock())
        )

    def transcript(self) -> tuple[TranscriptRecord, ...]:
        """The full canonical log (append-only; views and compaction never change it)."""
        return tuple(self.transcript_log.records)

    def new_items(self, turn: int | None = None) -> list[Entry]:
        """Conversation messages admitted in ``turn`` (default: the current turn)."""
        return self.transcript_log.new_items(self.window.turn if turn is None else turn)

    # ----- writes ------------------------------------------------------------------------
    def _entry_of(self, region: str, result: WriteResult | Refusal) -> Entry | None:
        if not isinstance(result, WriteResult):
            return None
        r = self.window.region(region)
        return next((e for e in reversed(r.entries) if e.id == result.entry_id), None)

    def write(
        self,
        region: str,
        content: Entry | str | Block | Sequence[Block],
        *,
        key: str | None = None,
        strict: bool = False,
    ) -> WriteResult | Refusal:
        """Write into ``region`` (a key replaces in keyed regions). Returns the window's
        :class:`WriteResult` or :class:`Refusal` (nothing changed); ``strict`` raises
        :class:`regio.errors.RegionFullError` instead (FC-26 a). A write that does not fit a
        ``compacting`` region paired with a ``compact_history`` first summarizes the region's
        oldest units to make room, so nothing rolls off unsummarized (FC-12;
        :func:`regio.runtime.compaction.room_steps`)."""
        if not isinstance(content, Entry):
            content = self.window.make_entry(content, key=key)
        steps = cp.room_steps(self, region, content.tokens)
        if steps is not None:
            self._run(steps)
        result = self.window.write(region, content, key=key, strict=strict)
        entry = self._entry_of(region, result)
        if entry is not None and not (isinstance(result, WriteResult) and result.unchanged):
            self.record("write", region, entry=entry)
        return result

    def append(
        self, region: str, content: str | Block | Sequence[Block], *, strict: bool = False
    ) -> WriteResult | Refusal:
        """Append to ``region`` (the name used for ``grows`` regions); see :meth:`write`."""
        return self.write(region, content, strict=strict)

    def release(
        self,
        region: str,
        *,
        key: str | None = None,
        index: int | None = None,
        oldest: int | None = None,
    ) -> list[Entry]:
        """Release by ``key``, ``index`` (its whole unit) or the ``oldest`` N units; returns the
        removed entries (they stay in the transcript)."""
        removed = self.window.release(region, key=key, index=index, oldest=oldest)
        if removed:
            self.record("release", region, ids=[e.id for e in removed])
        return removed

    def clear(self, region: str) -> list[Entry]:
        """Clear ``region`` (protected units stay); returns the removed entries."""
        removed = self.window.clear(region)
        if removed:
            self.record("clear", region, ids=[e.id for e in removed])
        return removed

    # ----- conversation ------------------------------------------------------------------
    def add_message(self, message: Message, *, tokens: int | None = None) -> Entry:
        """Append ``message`` to the conversation and the transcript; returns its entry.
        Raises :class:`regio.errors.RegionFullError` when the conversation refuses it."""
        conv = self.window.conversation
        if conv is None:
            raise ValueError("this window has no sliding_window region to hold the conversation")
        orphans = [
            b.tool_use_id
            for b in message.tool_results
            if b.tool_use_id not in self.window.call_groups
        ]
        result = self.window.add_message(message, tokens=tokens, strict=True)
        entry = self._entry_of(conv.name, result)
        assert entry is not None
        for call_id in orphans:
            self.emit(OrphanToolResult(call_id, entry.id))
        if message.role == "user" and any(not isinstance(b, ToolResult) for b in message.blocks):
            self.overflow_retry = False
        self.record("message", conv.name, entry=entry)
        return entry

    def add_user(self, text: str | Sequence[Block], *, tokens: int | None = None) -> Entry:
        """Append a user message (starts a new turn)."""
        blocks = (Text(text),) if isinstance(text, str) else tuple(text)
        return self.add_message(Message("user", blocks), tokens=tokens)

    def add_assistant(
        self,
        text: str = "",
        tool_calls: Sequence[ToolUse] = (),
        *,
        thinking: Sequence[Thinking] = (),
        tokens: int | None = None,
    ) -> Entry:
        """Append an assistant message (thinking, text, then tool calls)."""
        return self.add_message(Message.assistant(text, tool_calls, thinking), tokens=tokens)

    def add_tool_result(
        self,
        tool_use_id: str,
        content: str,
        *,
        is_error: bool = False,
        tokens: int | None = None,
    ) -> Entry:
        """Append the result of call ``tool_use_id`` (joins the call's turn group). A result for
        an id no assistant message issued is kept as received and emits the warning event
        ``orphan_tool_result`` naming the id (:class:`OrphanToolResult`)."""
        return self.add_message(
            Message.tool((ToolResult(tool_use_id, content, is_error),)), tokens=tokens
        )

    def stream_assistant(self) -> Any:
        """An :class:`AssistantStream` that appends the streamed assistant message when it
        completes (FC-32); see :mod:`regio.runtime.streaming`."""
        from .streaming import AssistantStream

        return AssistantStream(self)

    # ----- requests ----------------------------------------------------------------------
    def _assemble(self, tools: Sequence[ToolSpec], model: str, provider: str = "") -> Request:
        return assemble(
            self.window,
            self.strategy,
            tools=tools,
            state=self.layout_state,
            ttl=self.ttl,
            economics=economics_for(provider or self.provider or None, model or None),
            chunk_tokens=self.chunk_tokens,
            settle_share=self.settle_share,
            session_id=self.session_id,
            log=self.render_log,
        )

    def request(
        self,
        provider: str | None = None,
        model: str | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        api: str | None = None,
        max_tokens: int | None = None,
        flush: bool = True,
        **extra: Any,
    ) -> tuple[Request, dict[str, Any]]:
        """Lay out the window and render it for ``provider`` (``anthropic``, ``openai``,
        ``openai_responses``, ``openai_compatible``, ``llamacpp``, ``text``, ...).

        At this turn boundary the pending compactions are flushed first (``flush``). A request
        whose calibrated size is over :meth:`ceiling` is compacted to half the allowance and
        laid out again; if it is still over, :class:`ContextOverflowError` is raised (FC-19
        part 3), never only a warning. Returns ``(request, payload)``; the layout state is
        kept for the next call.
        """
        provider = provider or self.provider
        model = model or self.model
        if flush and self.auto_compact:
            self._turn_boundary(provider, model)
        specs = self.tool_specs(tools)
        req = self._assemble(specs, model, provider)
        raw = self.request_estimate(req)
        limit = self.limit
        if self.calibrated(raw, provider, model) > limit:
            if self.auto_compact:
                factor = self.calibration.factor(self.calibration_key(provider, model))
                goal = limit // 2
                need = int((self.calibrated(raw, provider, model) - goal) / factor) + 1
                self._compact_now("ceiling", cp.plan_targets(self, need), None)
                req = self._assemble(specs, model, provider)
                raw = self.request_estimate(req)
            sized = self.calibrated(raw, provider, model)
            if sized > limit:
                self.emit(OverBudget(sized, limit))
                raise ContextOverflowError(
                    f"the request needs {sized} calibrated tokens but the ceiling is {limit} "
                    f"(window {self.window.max_tokens}, output reserve {self.output_reserve}); "
                    "nothing more can be compacted: release entries or raise the budget",
                    estimated=sized,
                    ceiling=limit,
                )
        payload = render_payload(
            req,
            provider,
            api=api,
            model=model,
            max_tokens=max_tokens or self.output_reserve or None,
            log=self.render_log,
            **extra,
        )
        self.layout_state = req.state
        self.last_request = req
        self.last_estimate = raw
        self.last_provider, self.last_model = provider, model
        return req, payload

    # ----- overflow recovery -------------------------------------------------------------
    def recover_overflow(self, error: Any) -> RetryToken | None:
        """Answer a provider error (FC-20). A context-length refusal compacts to half the
        allowance and returns a :class:`RetryToken` (retry the call once); a second refusal
        raises :class:`ContextOverflowError` with the numbers and the provider's error. Any
        other error is re-raised unchanged when it is an exception, else ``None`` is
        returned."""
        return recover(self, error)

    def classify(self, error: Any) -> Any:
        """:func:`regio.runtime.overflow.classify_overflow` of ``error``."""
        return classify_overflow(error)

    # ----- usage -------------------------------------------------------------------------
    def observe(
        self, usage: Any, *, provider: str | None = None, model: str | None = None
    ) -> UsageRecord:
        """Record the provider-reported usage of the last request (Anthropic or OpenAI shapes,
        objects or dicts; ``None`` when the provider reports none). Feeds
        :class:`regio.tokens.Calibration` with the last request's estimate and returns the
        :class:`UsageRecord` (cost from the cache rules' prices)."""
        provider = provider or self.last_provider or self.provider
        model = model or self.last_model or self.model
        estimated = self.last_estimate or None
        record = self.ledger.observe(usage, provider=provider, model=model, estimated=estimated)
        self.emit(
            UsageObserved(
                record.index,
                provider,
                model,
                record.prompt_tokens,
                record.cache_read_tokens,
                record.cache_creation_tokens,
                record.output_tokens,
                estimated,
                record.cost_usd,
            )
        )
        if record.prompt_tokens > 0 and estimated:
            key = self.calibration_key(provider, model)
            factor = self.calibration.observe(key, estimated, record.prompt_tokens)
            self.emit(CalibrationUpdated(key, factor, estimated, record.prompt_tokens))
        if record.prompt_tokens > 0:
            self.overflow_retry = False
        return record

    # ----- tools -------------------------------------------------------------------------
    def tools(self) -> list[ToolSpec]:
        """Definitions of the context tools (JSON schemas) for the agent."""
        from .tools import context_tool_specs

        return context_tool_specs(self)

    def handle_tool_call(self, name: str, arguments: Any) -> Any:
        """Run a context tool; returns a :class:`regio.runtime.tools.ToolOutcome` whose
        ``text`` goes back to the agent. Mistakes and refusals come back as instructive text,
        never as exceptions."""
        from .tools import handle_tool_call

        return handle_tool_call(self, name, arguments)

    # ----- snapshot and persistence ------------------------------------------------------
    def snapshot(self) -> Any:
        """A :class:`regio.runtime.snapshot.EngineSnapshot` (per-region breakdown)."""
        from .snapshot import take_snapshot

        return take_snapshot(self)

    def save(self, path: str | Path) -> Path:
        """Save the whole engine state atomically (JSON, or msgpack for ``.msgpack`` /
        ``.mpk``); returns the path."""
        from .persistence import save_engine

        return save_engine(self, path)

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        summarizer: Any = None,
        token_counter: Any = None,
        allow_custom_hooks: bool = False,
        clock: Callable[[], float] | None = None,
        prices: PriceLookup | None = None,
    ) -> Engine:
        """Restore an engine saved with :meth:`save` (pending compactions, layout state,
        calibration, transcript and ledger included). Raises
        :class:`regio.runtime.errors.RuntimeStateError` for a file that is not an engine
        state."""
        from .persistence import load_engine

        return load_engine(
            cls,
            path,
            summarizer=summarizer,
            token_counter=token_counter,
            allow_custom_hooks=allow_custom_hooks,
            clock=clock,
            prices=prices or rule_prices,
        )
