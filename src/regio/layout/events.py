"""Events the layout emits (subclasses of :class:`regio.events.Event`).

They travel inside :class:`regio.layout.Request` (``request.events``) so the runtime can forward
them to its :class:`regio.events.EventBus`; they are never emitted by the pure layout itself.
"""

from __future__ import annotations

from regio.events import Event

__all__ = [
    "BreakpointNeverRead",
    "BreakpointPlan",
    "LayoutEvent",
    "NotesSettled",
    "OrphanResultDropped",
    "Repaired",
    "ResultSynthesized",
    "StableRegionChanged",
    "TailSettled",
    "VolatilityObserved",
]


class Repaired(Event, frozen=True, tag="repaired"):
    """The repair pass changed the projection: ``action`` (``moved_results``,
    ``duplicate_result_dropped``, ``call_dropped``, ``merged``, ``conversation_start``, and the
    call id changes of :mod:`regio.callids`: ``id_mapped``, ``call_renamed``,
    ``result_renamed``), the ``tool_use_id`` concerned (empty when none; for an id change the
    id as sent), ``message`` (the index of the message concerned) and ``detail`` (the id given,
    for an id change). The canonical log is unchanged."""

    action: str
    tool_use_id: str = ""
    message: int = -1
    detail: str = ""


class OrphanResultDropped(Event, frozen=True, tag="orphan_result_dropped"):
    """A ``tool_result`` whose ``tool_use`` is absent (or only comes later) was dropped from the
    projection. ``message`` is its index in the source list."""

    tool_use_id: str
    message: int


class ResultSynthesized(Event, frozen=True, tag="result_synthesized"):
    """A call with no result got a fixed neutral result in the projection only. ``pending`` is
    true for a call of the open current-turn group, false for a historical one."""

    tool_use_id: str
    pending: bool


class StableRegionChanged(Event, frozen=True, tag="stable_region_changed"):
    """A region declared ``stable`` rendered different bytes than last time (reported once per
    region). ``explicit_edit`` is true when the region's version changed."""

    region: str
    explicit_edit: bool


class BreakpointNeverRead(Event, frozen=True, tag="breakpoint_never_read"):
    """A breakpoint slot whose marked prefix changed on every request so far (``requests``
    requests): its cache writes are paid and never read."""

    slot: str
    requests: int


class BreakpointPlan(Event, frozen=True, tag="breakpoint_plan"):
    """The planned markers: ``marks`` as (block index, TTL, slot)."""

    strategy: str
    marks: tuple[tuple[int, str, str], ...]


class NotesSettled(Event, frozen=True, tag="notes_settled"):
    """Unsettled grows-region notes were moved into their regions' chunks. ``reason``:
    ``prefix_rewritten`` (first conversation message changed), ``share`` (notes passed the
    declared share of the window), ``region_rewritten``, ``anchor_lost`` or ``note_removed``."""

    reason: str
    entries: tuple[str, ...]


class TailSettled(Event, frozen=True, tag="tail_settled"):
    """The freezing tail's copies were dropped from the conversation and the current values
    re-emitted in the tail (:mod:`regio.layout.tail`). ``reason``: ``prefix_rewritten``
    (compaction or eviction), ``anchor_lost``, ``conversation_rewritten`` (an entry before
    every copy changed or left: old tool results cleared), ``system_changed``, a
    notes-settling reason, ``share`` (stale copies passed the declared ``settle_share`` of
    the window), ``rent`` (their accumulated rent reached the price of the rewrite) or
    ``forecast`` (their rent until the conversation's next rewrite would); ``regions``: the
    region of each dropped copy; ``stale_tokens``: tokens of the stale copies dropped."""

    reason: str
    regions: tuple[str, ...]
    stale_tokens: int


class VolatilityObserved(Event, frozen=True, tag="volatility_observed"):
    """The ``regio`` layout places ``region`` (declared ``declared``) as ``laid_out`` from this
    request on (observed volatility, :mod:`regio.layout.observe`; once per move).

    ``reason``: ``writer`` (``writer``, a capture or route the blueprint declares, replaces
    what it stored), ``removes`` (it removed or rewrote entries between requests), ``changes``
    (a region declared ``stable`` changed between requests twice) or ``appends_only`` (back to
    its declared place: its last ``changes`` changes only appended, and this request rewrote
    the conversation anyway). Figures over its last ``changes`` changes between requests:
    ``churns`` of them removed or rewrote entries; ``appended`` / ``rewritten`` / ``removed``
    entries; ``rewrite_tokens``: tokens the provider had to write again because of them (each
    from the region's first byte to the end of the request); ``first_changed``: the earliest
    token offset they invalidated (``-1``: none)."""

    region: str
    declared: str
    laid_out: str
    reason: str
    changes: int = 0
    churns: int = 0
    appended: int = 0
    rewritten: int = 0
    removed: int = 0
    rewrite_tokens: int = 0
    first_changed: int = -1
    writer: str = ""


LayoutEvent = (
    Repaired
    | OrphanResultDropped
    | ResultSynthesized
    | StableRegionChanged
    | BreakpointNeverRead
    | BreakpointPlan
    | NotesSettled
    | TailSettled
    | VolatilityObserved
)
