"""Room for a write: compaction that runs before a write so nothing rolls off unsummarized
and every region gets the floor it is guaranteed.

* :func:`room_steps` -- a write into a region that summarizes before it rolls off (a paired
  ``compacting`` region, a ``sliding_window`` under ``compact`` eviction) that would pass the
  region's budget first compacts the region's oldest units to its hysteresis target. A write
  larger than the whole region can never fit: it runs no compaction (the region refuses it,
  changing nothing).
* :func:`window_room_steps` -- **budgets bend**: an elastic conversation may have grown into
  room another region's budget guarantees. A write into that region that the window cannot
  hold compacts the conversation first, by what the write needs (never below the
  conversation's own hysteresis target's depth: one compaction, not one per write).
"""

from __future__ import annotations

from regio.regions import SlidingWindow
from regio.session._session import CompactionResult, Session, Steps

from ._flush import FlushPolicy, flush_steps
from ._planning import region_target

__all__ = ["room_steps", "window_room_steps"]


def room_steps(c: Session, region_name: str, tokens: int) -> Steps[CompactionResult | None] | None:
    """Compaction that makes room for a write of ``tokens`` into ``region_name``.

    A ``compacting`` region paired with a ``compact_history`` (admission ``evict``), or a
    ``sliding_window`` under ``compact`` eviction whose token-trigger compaction has not been
    flushed yet, would otherwise roll its oldest units off to fit the write, and they would
    never reach the summary. Instead, its fewest oldest compactable units that bring it to its
    hysteresis target (:func:`region_target`), and at least leave room for the write, are
    summarized first (previous summary carried forward, as in every flush). Returns the flush
    generator to drive, or ``None`` when the write fits (or the region is not such a region,
    or the write is larger than the whole region, which refuses it); units that cannot be
    compacted (the newest user message, open groups) stay, and the write then rolls off or is
    refused by the region as usual. (The conversation's messages are checked before this runs:
    :func:`regio.engine._turnfit.check`.)"""
    region = c.window.region(region_name)
    # a conversation under ``compact`` eviction summarizes before it rolls off (token
    # hysteresis); its declared fallback eviction tolerates a failed summary
    conversation = isinstance(region, SlidingWindow) and region.needs_history
    summarizes = region.summarizes_before_rolloff or conversation
    if not summarizes or region.compact_target is None:
        return None
    if region.admission != "evict" or region.used_tokens + tokens <= region.budget:
        return None
    limit = region.max_entry_tokens
    if not conversation and (tokens > region.budget or (limit is not None and tokens > limit)):
        return None  # it can never fit: refused as it is, nothing summarized for it
    c.window.request_compaction(region, reason="room")
    target = max(0, min(region_target(c, region), region.budget - tokens))
    return flush_steps(c, FlushPolicy.room(region.name, target, tolerate_fallback=conversation))


def window_room_steps(
    c: Session, region_name: str, tokens: int
) -> Steps[CompactionResult | None] | None:
    """Compaction of an elastic conversation that makes the window hold a write of ``tokens``
    into another region ``region_name`` (module doc), or ``None`` when the window holds it
    already, when that write is larger than its region (refused as it is), or when no elastic
    conversation holds more than its own budget."""
    window = c.window
    region = window.region(region_name)
    need = window.used_tokens + tokens - (window.max_tokens - window.reserved_tokens)
    if need <= 0 or tokens > region.budget:
        return None
    for conv in window.regions:
        if (
            conv is region
            or not isinstance(conv, SlidingWindow)
            or not conv.is_elastic
            or not conv.needs_history
            or conv.compact_target is None
            or conv.used_tokens <= conv.floor_tokens
        ):
            continue
        goal = max(conv.floor_tokens, conv.used_tokens - need)
        target = min(region_target(c, conv), goal)
        if window.request_compaction(conv, reason="room") is None and not conv.pending():
            return None
        return flush_steps(c, FlushPolicy.room(conv.name, target, tolerate_fallback=True))
    return None
