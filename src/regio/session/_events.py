"""Events of the runtime (:class:`regio.events.Event` subclasses, tag in ``kind``).

The window emits the region-level decisions (``written``, ``refused``, ``evicted``,
``compaction_queued``, ``compaction_completed``, ``compaction_failed``, ...); the engine adds
the ones below on the same bus. Token figures are tokens, costs USD.
"""

from __future__ import annotations

from regio.events import Event

__all__ = [
    "CalibrationUpdated",
    "CompactionFinished",
    "CompactionNoProgress",
    "CompactionRejected",
    "CompactionStarted",
    "ItemsDropped",
    "ItemsFallback",
    "ItemsUpdated",
    "NothingCompacted",
    "OrphanToolResult",
    "OverBudget",
    "OverflowFailed",
    "OverflowRecovered",
    "StreamCallDiscarded",
    "SummaryShortened",
    "TextRepaired",
    "ToolCallHandled",
    "TriggerBelowFloor",
    "UsageObserved",
]


class CompactionStarted(Event, frozen=True, tag="compaction_started"):
    """A compaction pass begins. ``trigger``: ``auto`` | ``manual`` | ``overflow``;
    ``pending_ids`` the queue items it works on; ``tokens`` the compactable size before;
    ``target_tokens`` the size it aims for (hysteresis)."""

    trigger: str
    pending_ids: tuple[str, ...]
    tokens: int
    target_tokens: int


class CompactionFinished(Event, frozen=True, tag="compaction_finished"):
    """A compaction pass ended. ``replaced_ids`` left the prompt view, ``kept_ids`` stayed;
    ``tokens_before`` / ``tokens_after`` are the window's used tokens; ``summary_ids`` the new
    summaries; ``summarizer_calls`` the requests made; ``preview`` the first summary's start."""

    trigger: str
    replaced_ids: tuple[str, ...]
    kept_ids: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    summary_ids: tuple[str, ...]
    summarizer_calls: int
    preview: str


class CompactionRejected(Event, frozen=True, tag="compaction_rejected"):
    """A summary was refused and nothing changed. ``reason``: ``empty`` | ``refusal`` |
    ``oversized`` | ``error``; ``strikes`` the no-progress strikes so far."""

    pending_id: str
    region: str
    reason: str
    message: str
    strikes: int


class CompactionNoProgress(Event, frozen=True, tag="compaction_no_progress"):
    """``attempts`` passes in a row freed nothing; :class:`CompactionNoProgressError` follows."""

    region: str | None
    attempts: int
    size: int
    trigger: int


class NothingCompacted(Event, frozen=True, tag="nothing_compacted"):
    """A compaction (``trigger``: ``manual``, ``ceiling`` or ``overflow``) compacted nothing in
    ``region`` (``tokens`` used), and why (``reason``): ``open_calls`` -- its only units
    before the current turn are tool calls without a final result (``open_calls``), which are
    never summarized until they are answered; ``current_turn`` -- it holds only the current
    turn; ``at_target`` -- it is already at or below its target."""

    trigger: str
    region: str
    reason: str
    open_calls: tuple[str, ...]
    tokens: int


class TriggerBelowFloor(Event, frozen=True, tag="trigger_below_floor"):
    """A whole-context trigger is below what can never shrink; emitted once."""

    floor: int
    trigger: int


class OverBudget(Event, frozen=True, tag="over_budget"):
    """The prompt view is over the ceiling after every compaction the engine could run."""

    used: int
    ceiling: int


class OverflowRecovered(Event, frozen=True, tag="overflow_recovered"):
    """A provider length refusal was answered by a compaction; the caller retries once.
    ``reported`` / ``maximum`` from the provider, ``tokens_before`` / ``tokens_after`` the
    engine's calibrated estimate of the prompt."""

    reported: int | None
    maximum: int | None
    tokens_before: int
    tokens_after: int
    factor: float


class OverflowFailed(Event, frozen=True, tag="overflow_failed"):
    """A second length refusal (or a first one with nothing left to compact)."""

    reported: int | None
    maximum: int | None
    estimated: int
    reason: str


class UsageObserved(Event, frozen=True, tag="usage_observed"):
    """Provider usage of one call (see :class:`regio.session._usage.UsageRecord`)."""

    index: int
    provider: str
    model: str
    prompt_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    output_tokens: int
    estimated_tokens: int | None
    cost_usd: float | None


class CalibrationUpdated(Event, frozen=True, tag="calibration_updated"):
    """The calibration factor of ``key`` (``provider:model``) is now ``factor``."""

    key: str
    factor: float
    estimated: int
    reported: int


class ToolCallHandled(Event, frozen=True, tag="tool_call_handled"):
    """A context tool ran; ``ok`` is false when its result tells the agent about a mistake."""

    name: str
    ok: bool
    message: str


class StreamCallDiscarded(Event, frozen=True, tag="stream_call_discarded"):
    """A streamed tool call whose arguments never finished was not saved."""

    call_id: str
    name: str
    received_chars: int


class OrphanToolResult(Event, frozen=True, tag="orphan_tool_result"):
    """A tool result was added for a call id no assistant message issued (warning). The entry
    ``entry_id`` stays in the conversation and the log as received (the log is
    append-only); the layout's repair drops it from every rendered request. Check the
    call id your loop passes to ``Engine.add_tool_result``."""

    tool_use_id: str
    entry_id: str


class TextRepaired(Event, frozen=True, tag="text_repaired"):
    """An admitted value held text or numbers no request or save can hold, repaired before
    anything was stored (:mod:`regio.session._textadmit`, :mod:`regio.textrepair`): lone UTF-16
    surrogates replaced by U+FFFD, surrogate pairs joined into the character they encode,
    numbers outside what JSON and msgpack hold (an integer past 64 bits, ``NaN``, an infinity)
    in tool arguments or metadata kept as their text. ``where`` is the call (``add_message``,
    ``write(notes)``, ``handle_tool_call(context_write)``, ``summary(notes)``, ...),
    ``places`` the fields changed (``blocks[0].text``), ``position`` the first surrogate's
    index in the first of them, ``replaced`` / ``joined`` / ``converted`` the totals and
    ``detail`` one line for a log."""

    where: str
    places: tuple[str, ...]
    position: int
    replaced: int
    joined: int
    detail: str
    converted: int = 0


class ItemsUpdated(Event, frozen=True, tag="items_updated"):
    """A compaction of ``source`` changed the durable items of ``region`` (a
    ``compact_history``): ``added`` the keys of items it added, ``superseded`` the texts of
    earlier items a later item of their subject replaced, ``closed`` the to-dos a later
    sentence completed (they stay in the transcript); ``count`` the items kept."""

    region: str
    source: str
    added: tuple[str, ...]
    superseded: tuple[str, ...]
    closed: tuple[str, ...]
    count: int


class ItemsDropped(Event, frozen=True, tag="items_dropped"):
    """Durable items of ``region`` left the window for room: ``texts`` (they stay in the
    transcript). ``reason``: ``budget`` (the history's budget, past its last merge) or
    ``target`` (a requested size, ``Engine.compact(target_tokens=...)``)."""

    region: str
    texts: tuple[str, ...]
    reason: str


class ItemsFallback(Event, frozen=True, tag="items_fallback"):
    """The summarizer's reply left out constraints the extractor found (``dropped``), so the
    extracted items were used instead of the reply's; ``rejected``: reply items whose text is
    not in the summarized input."""

    region: str
    source: str
    dropped: tuple[str, ...]
    rejected: tuple[str, ...]


class SummaryShortened(Event, frozen=True, tag="summary_shortened"):
    """The prose of a summary of ``region`` from regio's extractive summarizer was longer than
    its ``compact_history`` ``target`` holds (``budget`` tokens): its last lines were cut to
    ``tokens`` (from ``tokens_before``), so that the compaction makes progress. The cut lines
    stay in the transcript; durable items are kept apart (``items_dropped`` names any that
    leave)."""

    region: str
    target: str
    budget: int
    tokens_before: int
    tokens: int
