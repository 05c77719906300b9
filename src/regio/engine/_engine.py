"""The :class:`Engine`: a thin front over the parts that drive one agent's window.

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

Parts (none of them knows the engine): :class:`EngineOptions` (frozen; handed to the parts by
:func:`regio.engine._parts.apply_options`), :class:`EngineBudget` (counting; ``ceiling =
min(window max, model context window) - output reserve - tool schemas - system overhead``,
against the estimate corrected by :class:`regio.tokens.Calibration`), :class:`Session` (the
compaction flush, sync and async), :class:`SessionState`, :class:`UsageLedger`, overflow
recovery (:mod:`regio.engine._recovery`), the context tools (:mod:`regio.engine._tools`) and
persistence (:mod:`regio.persistence._statefile`). Events go through the window's bus. Every call
that can end in a summary has an async twin awaiting the summarizer (``aadd_message``,
``arequest``, ...: :class:`regio.engine._asyncentries.AsyncEntries`), driving the same steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs

from regio.compaction import _flush as cp
from regio.compaction import _flushes as flushing
from regio.compaction._compactor import run_steps
from regio.compaction._delegation import adopt_steps
from regio.compaction._writes import clear_region, release_from, write_steps
from regio.content import Block, Entry, Message, Thinking, ToolUse
from regio.events import Event, EventBus, transactional
from regio.layout import RenderLog, Request, ToolSpec
from regio.providers.overflow import OverflowInfo, classify_overflow
from regio.regions import PendingCompaction, Refusal, Window, WriteResult
from regio.sdk._objects import response_message, usage_of
from regio.session._budget import EngineBudget
from regio.session._options import EngineOptions
from regio.session._session import CompactionBook, CompactionResult, Session
from regio.session._state import SessionState
from regio.session._transcript import Transcript, TranscriptRecord
from regio.session._usage import PriceLookup, UsageLedger, UsageRecord, normalize_usage
from regio.summarizers._extractive import engine_summarizer
from regio.tokens import Calibration, TokenCounter

from ._asyncentries import AsyncEntries, tool_message, user_message
from ._history import HistoryRepaired
from ._parts import apply_options
from ._recovery import RetryToken, recover_steps
from ._repairs import repair_window
from ._requests import observe_usage
from ._saving import SavedEngine
from ._snapshot import EngineSnapshot, take_snapshot
from ._streaming import AssistantStream
from ._tools import ContextToolOutcome, offered_tool_specs, tool_steps

if TYPE_CHECKING:
    from pathlib import Path

    from regio.blueprint import Blueprint
    from regio.summarizers._protocol import SummaryFn

__all__ = ["Engine"]

#: Keyword arguments of :class:`Engine` that are session state (:class:`SessionState`).
_STATE_NAMES = tuple(a.name for a in attrs.fields(SessionState))


class Engine(AsyncEntries, SavedEngine):
    """Drives one agent's window (see module doc). Build with :meth:`from_blueprint`, or from a
    :class:`regio.regions.Window` (with a token counter) and :class:`EngineOptions`; option
    keywords (``Engine(window, strategy="naive")``) override ``options``.

    ``summarizer`` (default :class:`ExtractiveSummarizer`) is any sync or async summarizer;
    ``clock`` (seconds) is the only time source. ``calibration``, ``ledger``,
    ``transcript_log``, ``book`` and the :class:`SessionState` fields restore a saved engine.
    Raises :class:`ValueError` for a window without a token counter or an option out of
    range, :class:`TypeError` for an unknown keyword."""

    def __init__(
        self,
        window: Window,
        *,
        options: EngineOptions | None = None,
        summarizer: SummaryFn | None = None,
        clock: Callable[[], float] = time.time,
        calibration: Calibration | None = None,
        ledger: UsageLedger | None = None,
        transcript_log: Transcript | None = None,
        book: CompactionBook | None = None,
        **values: Any,
    ) -> None:
        if window.counter is None:
            raise ValueError("the engine's window needs a token counter (Window(counter=...))")
        overrides, rest = EngineOptions.split(values)
        state = {k: rest.pop(k) for k in _STATE_NAMES if k in rest}
        if rest:
            raise TypeError(f"Engine() got unknown keyword arguments: {', '.join(sorted(rest))}")
        opts = attrs.evolve(options or EngineOptions(), **overrides)
        summarizer = engine_summarizer(summarizer, window.counter)
        self.window = window
        self.budget = EngineBudget(
            window=window, options=opts, calibration=calibration or Calibration()
        )
        self.session = Session(
            window=window,
            options=opts,
            summarizer=summarizer,
            book=book or CompactionBook(),
            transcript=transcript_log or Transcript(),
            clock=clock,
        )
        self.ledger = ledger or UsageLedger()
        self.state = SessionState(**state)
        self.session.state = self.state
        self.options = opts  # the cache terms follow the options
        self.store_mark: Any = (
            None  # its place in a session store (regio.persistence.store.StoreMark)
        )

    # ----- construction ------------------------------------------------------------------
    @classmethod
    def from_blueprint(
        cls,
        blueprint: str | Path | Blueprint,
        *,
        summarizer: SummaryFn | None = None,
        token_counter: TokenCounter | None = None,
        allow_custom_hooks: bool = False,
        clock: Callable[[], float] | None = None,
        prices: PriceLookup | None = None,
        **options: Any,
    ) -> Engine:
        """An engine for ``blueprint`` (a path, YAML text or a loaded
        :class:`regio.blueprint.Blueprint`). ``summarizer`` defaults to an
        :class:`ExtractiveSummarizer` sized by the blueprint's ``summarizer`` section;
        ``token_counter`` to the blueprint's tokenizer; ``options`` are :class:`EngineOptions`
        fields that override the blueprint's. Raises :class:`regio.blueprint.BlueprintError`
        for an invalid blueprint."""
        from ._from_blueprint import engine_options

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

    # ----- parts -------------------------------------------------------------------------
    @property
    def options(self) -> EngineOptions:
        """The engine's :class:`EngineOptions` (frozen; assign new ones to change them: they
        reach the budget, the session and the cache terms, :func:`apply_options`)."""
        return self.budget.options

    @options.setter
    def options(self, value: EngineOptions) -> None:
        apply_options(self.window, self.budget, self.session, value)

    @property
    def summarizer(self) -> Any:
        """The summarizer compactions call (assignable)."""
        return self.session.summarizer

    @summarizer.setter
    def summarizer(self, value: SummaryFn) -> None:
        self.session.summarizer = value
        apply_options(self.window, self.budget, self.session, self.options)  # its size

    @property
    def render_log(self) -> RenderLog:
        """The session's :class:`regio.layout.RenderLog` (assignable)."""
        return self.state.render_log

    @render_log.setter
    def render_log(self, value: RenderLog) -> None:
        self.state.render_log = value

    @property
    def calibration(self) -> Calibration:
        """Estimate corrections per ``provider:model`` (the budget's)."""
        return self.budget.calibration

    @property
    def book(self) -> CompactionBook:
        """Compaction bookkeeping (strikes, versions, the last result)."""
        return self.session.book

    @property
    def transcript_log(self) -> Transcript:
        """The canonical append-only log."""
        return self.session.transcript

    @property
    def counter(self) -> TokenCounter:
        """The token counter (the window's; ``Engine()`` refuses a window without one)."""
        return cast("TokenCounter", self.window.counter)

    @property
    def limit(self) -> int:
        """:attr:`EngineBudget.limit` (tokens)."""
        return self.budget.limit

    def ceiling(self, extra_tools: Iterable[ToolSpec] | None = None) -> int:
        """:meth:`EngineBudget.ceiling` (tokens; ``None``: with the last request's tools)."""
        return self.budget.ceiling(extra_tools)

    def size(self, provider: str | None = None, model: str | None = None) -> int:
        """:meth:`EngineBudget.size`: calibrated estimate of the next request (tokens)."""
        return self.budget.size(provider, model)

    def tool_specs(self, extra: Iterable[ToolSpec] = ()) -> list[ToolSpec]:
        """The context tools followed by the application's tools."""
        return self.budget.tool_specs(extra)

    # ----- events and transcript ---------------------------------------------------------
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

    def transcript(self) -> tuple[TranscriptRecord, ...]:
        """The full canonical log (append-only; views and compaction never change it)."""
        return tuple(self.transcript_log.records)

    def new_items(self, turn: int | None = None) -> list[Entry]:
        """Conversation messages admitted in ``turn`` (default: the current turn)."""
        return self.transcript_log.new_items(self.window.turn if turn is None else turn)

    # ----- writes ------------------------------------------------------------------------
    @transactional
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
        :class:`regio.errors.RegionFullError` instead. A write that does not fit a
        ``compacting`` region paired with a ``compact_history`` first summarizes the region's
        oldest units to make room, so nothing rolls off unsummarized
        (:func:`regio.compaction._room.room_steps`; one the window cannot hold
        first compacts an elastic conversation that grew into its room,
        :func:`regio.compaction._room.window_room_steps`)."""
        steps = write_steps(self.session, region, content, key=key, strict=strict)
        return run_steps(self.session, steps)

    def append(
        self, region: str, content: str | Block | Sequence[Block], *, strict: bool = False
    ) -> WriteResult | Refusal:
        """Append to ``region`` (the name used for ``grows`` regions); see :meth:`write`."""
        return self.write(region, content, strict=strict)

    @transactional
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
        return release_from(self.session, region, key=key, index=index, oldest=oldest)

    @transactional
    def clear(self, region: str) -> list[Entry]:
        """Clear ``region`` (protected units stay); returns the removed entries."""
        return clear_region(self.session, region)

    # ----- conversation ------------------------------------------------------------------
    @transactional
    def add_message(
        self, message: Message, *, tokens: int | None = None, observation: bool = False
    ) -> Entry:
        """Append ``message`` to the conversation and the transcript; returns its entry.
        ``observation``: a user message that is an environment observation
        (:meth:`add_observation`).
        Raises :class:`ValueError` for ``observation`` on anything but a user text and
        :class:`regio.errors.RegionFullError` when the conversation refuses the message."""
        return run_steps(self.session, self._message_steps(message, tokens, observation))

    def add_user(
        self, text: str | Sequence[Block], *, tokens: int | None = None, observation: bool = False
    ) -> Entry:
        """Append a user message (starts a new turn); ``observation``: an environment
        observation (:meth:`add_observation`)."""
        return self.add_message(user_message(text), tokens=tokens, observation=observation)

    def add_observation(self, text: str | Sequence[Block], *, tokens: int | None = None) -> Entry:
        """Append an environment observation sent as a user message (a plain-text agent's file
        view or test run): rendered as user text, but read as tool output -- the summarizers
        keep only its errors, never constraints, to-dos or values
        (:mod:`regio.summarizers.observations`). Its entry has ``meta["observation"] = True``."""
        return self.add_user(text, tokens=tokens, observation=True)

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
        final: bool = True,
        media: Sequence[Any] = (),
    ) -> Entry:
        """Append the result of call ``tool_use_id`` (joins the call's turn group); ``media``:
        :class:`regio.media.Image` / ``Document`` blocks the tool returned; ``final=False`` is
        a progress report keeping the group open (:class:`ToolResult`). A result for an id no
        assistant message issued is kept and emits ``orphan_tool_result`` (the id)."""
        message = tool_message(tool_use_id, content, is_error, final, media)
        return self.add_message(message, tokens=tokens)

    def add_response(self, response: object, *, observe: bool = False) -> Entry:
        """Append the assistant message of a provider response: an Anthropic ``Message``, an
        OpenAI ``ChatCompletion`` or a Responses ``Response``, as SDK object or dict
        (:func:`regio.sdk._objects.response_message`). With ``observe`` its usage is also
        recorded (:meth:`observe`). Anything else raises a :class:`regio.errors.RegioError`
        naming the place (``SDKInputError``, ``ProviderResponseError``, ``UsageError``), and
        nothing is stored."""
        message, usage = response_message(response)
        if observe:  # the usage is read first, so a usage it cannot read stores nothing
            normalize_usage(usage := usage_of(usage))
        entry = self.add_message(message)
        if observe:
            self.observe(usage)
        return entry

    def stream_assistant(self) -> AssistantStream:
        """An :class:`AssistantStream` that appends the streamed assistant message when it
        completes; see :mod:`regio.engine._streaming`."""
        return AssistantStream(self.add_message, self.emit)

    # ----- requests ----------------------------------------------------------------------
    @transactional
    def request(
        self,
        provider: str | None = None,
        model: str | None = None,
        *,
        tools: Sequence[Any] = (),
        api: str | None = None,
        max_tokens: int | None = None,
        flush: bool = True,
        **extra: Any,
    ) -> tuple[Request, dict[str, Any]]:
        """Lay out the window and render it for ``provider`` (``anthropic``, ``openai``,
        ``openai_responses``, ``openai_compatible``, ``llamacpp``, ``text``, ...).

        At this turn boundary the pending compactions are flushed first (``flush``). A request
        whose calibrated size is over :attr:`limit` is compacted to half the allowance and
        laid out again; if it is still over, :class:`ContextOverflowError` is raised, never
        only a warning. ``tools`` are :class:`ToolSpec` s or the SDKs' tool dicts
        (:func:`regio.sdk._objects.tool_specs`). Returns ``(request, payload)``; the layout
        state is kept for the next call."""
        steps = self._request_steps(provider, model, tools, api, max_tokens, flush, extra)
        return run_steps(self.session, steps)

    # ----- overflow recovery and usage ---------------------------------------------------
    @transactional
    def recover_overflow(self, error: object) -> RetryToken | None:
        """Answer a provider error. A context-length refusal compacts to half the allowance
        and returns a :class:`RetryToken` (retry the call once); a second refusal raises
        :class:`ContextOverflowError` with the numbers and the provider's error. Any other
        error is re-raised unchanged when it is an exception, else ``None`` is returned."""
        return run_steps(self.session, recover_steps(self.session, self.budget, self.state, error))

    def classify(self, error: object) -> OverflowInfo | None:
        """:func:`regio.providers.overflow.classify_overflow`: the length refusal or None."""
        return classify_overflow(error)

    @transactional
    def observe(
        self, usage: object, *, provider: str | None = None, model: str | None = None
    ) -> UsageRecord:
        """Record the provider-reported usage of the last request (Anthropic or OpenAI shapes,
        objects or dicts; ``None`` when the provider reports none). Feeds
        :class:`regio.tokens.Calibration` with the last request's estimate and returns the
        :class:`UsageRecord` (cost in USD from the cache rules' prices). SDK usage objects and
        whole responses are read by :func:`regio.sdk._objects.usage_of`; anything else raises
        :class:`regio.sdk._objects.SDKInputError`."""
        record = observe_usage(
            self.ledger, self.budget, self.state, self.emit, usage_of(usage), provider, model
        )
        self.budget.reserve(self.state.last_provider or None, self.state.last_model or None)
        return record

    # ----- compaction --------------------------------------------------------------------
    def pending(self) -> list[PendingCompaction]:
        """The window's pending-compaction queue, oldest first."""
        return self.window.pending_compactions()

    @transactional
    def flush(self) -> CompactionResult | None:
        """Flush pending compactions now (call at a turn boundary; :meth:`request` does it).
        Returns what was done, or ``None`` when nothing was pending. Raises
        :class:`CompactionNoProgressError` after N passes that free nothing."""
        return run_steps(self.session, flushing.queued_steps(self.session))

    @transactional
    def compact(
        self,
        instructions: str | None = None,
        *,
        keep_tokens: int | None = None,
        keep_messages: int | None = None,
        keep_fraction: float | None = None,
        target_tokens: int | None = None,
    ) -> CompactionResult | None:
        """Compact now, on demand. ``instructions`` are added to the standing summary
        requirements (never replace them). Keep limits, per compacted region, all optional
        and combined (the tightest wins): ``keep_tokens`` (tokens kept verbatim; 0 compacts
        everything compactable), ``keep_messages`` (entries kept verbatim: "keep the last N
        messages"), ``keep_fraction`` (fraction in ``[0, 1]`` of the region's current size);
        none: each region's hysteresis target. A limit that falls inside a unit (a call and its
        results) shrinks the kept tail to that unit's boundary: the whole unit is summarized.
        ``target_tokens``: the window's size to reach (tokens): stored summaries merged, then
        the lowest-priority durable items dropped as far as it takes (events name what went;
        :mod:`regio.compaction._reach`); ``tokens_after`` says where it stopped.
        Returns a :class:`CompactionResult`, or ``None`` when there is nothing to compact;
        ``compaction_started`` / ``compaction_finished`` events are emitted either way. Raises
        :class:`ValueError` for a negative limit or target, or a fraction outside ``[0, 1]``."""
        limits = (keep_tokens, keep_messages, keep_fraction, target_tokens)
        return run_steps(self.session, flushing.manual_steps(self.session, instructions, *limits))

    @transactional
    def adopt_compaction(self, api: str, item: object) -> CompactionResult | None:
        """The provider compacted the last request's conversation and returned ``item`` (its
        compaction block or item for ``api``): :func:`regio.compaction._delegation.adopt_steps`,
        which keeps a readable summary of the same span beside it. ``None``: nothing to compact.
        Raises :class:`regio.compaction._delegation.ProviderCompactionError` for a bad item."""
        return run_steps(self.session, adopt_steps(self.session, api, item))

    @transactional
    def schedule_compaction(self, instructions: str | None = None) -> None:
        """Compact at the next turn boundary (used by the agent's ``compact`` tool, which runs
        mid-turn): queues the compactable content; ``instructions`` are added to the standing
        requirements."""
        cp.schedule_compaction(self.session, instructions)

    # ----- tools -------------------------------------------------------------------------
    def tools(self) -> list[ToolSpec]:
        """The context tools offered to the agent (``options.context_tools`` picks them)."""
        return offered_tool_specs(self.window, self.options.context_tools, self.options.relief)

    @transactional
    def handle_tool_call(self, name: str, arguments: object) -> ContextToolOutcome:
        """Run a context tool; returns a :class:`ContextToolOutcome` whose ``text`` goes back
        to the agent. Mistakes and refusals come back as instructive text, never as
        exceptions."""
        return run_steps(self.session, tool_steps(self.session, name, arguments))

    @transactional
    def repair(self) -> list[HistoryRepaired]:
        """Make a broken conversation valid in place, losing nothing from the transcript
        (:mod:`regio.engine._repairs`); returns each change (also an event). Idempotent."""
        return repair_window(self.session)

    # ----- snapshot (saving and loading: SavedEngine) ------------------------------------
    def snapshot(self) -> EngineSnapshot:
        """A per-region breakdown of the window (:class:`EngineSnapshot`)."""
        return take_snapshot(self.session, self.budget, self.ledger, self.state.last_request)
