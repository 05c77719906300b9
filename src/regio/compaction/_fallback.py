"""What a failed compaction leaves behind (``compact{compact_count}`` eviction, the
compaction flush).

* :func:`fired_trigger`: the trigger that queued a pending compaction, in its own unit
  (items for a ``compact_count`` batch, tokens otherwise), for the no-progress error.
* :func:`bulk_fallback`: the declared fallback of a ``sliding_window`` with ``compact``
  eviction: if the runtime has not flushed by ``max_items + 2*compact_count``, it falls back
  to bulk eviction (and emits an event saying so). A summary that
  fails (rejected ``no_progress_limit`` times, or content blocked after such a failure) must
  never leave the conversation unbounded, so the flush calls this after every failure of such a
  batch: past the fallback point the oldest units of the removal order (completed groups of the
  current turn included, as for the compaction itself; never the newest user message nor an
  open group) are evicted down to ``max_items``, with events ``evicted`` (reason
  ``compaction_fallback``) and ``compaction_fallback``. A batch its token trigger queued
  (token hysteresis) falls back the same way, by tokens: at or over the token trigger, the
  oldest units are evicted down to the token target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio.policies.eviction import Compact
from regio.regions import PendingCompaction, Region, SlidingWindow
from regio.regions import events as rev

from ._planning import region_target

if TYPE_CHECKING:
    from regio.session._session import Session

__all__ = ["bulk_fallback", "fallback_point", "fired_trigger"]


def fallback_point(region: Region) -> int | None:
    """Point past which ``region`` falls back to bulk eviction (its
    :meth:`Region.fallback_point`: ``max_items + 2*compact_count`` items for a
    ``sliding_window`` with ``compact`` eviction, its token trigger without ``max_items``), or
    ``None`` when it declares no such fallback."""
    return region.fallback_point()


def _token_fallback(region: SlidingWindow) -> list[int]:
    """Entry indexes to evict so ``region`` (at or over its token trigger) keeps at most its
    token target; empty below the trigger."""
    trigger, target = region.token_trigger, region.token_target
    if trigger is None or target is None or region.used_tokens < trigger:
        return []
    info = region.analysis()
    j = info.fewest_removals(max_tokens=target)
    return info.removal(info.removable_count if j is None else j)


def fired_trigger(c: Session, region: Region, p: PendingCompaction) -> tuple[int, int, str]:
    """``(size, trigger, unit)`` of the trigger that queued ``p``: a ``compact_count`` batch
    fires on the item count (``max_items + compact_count`` items); a ``merge`` on the history's
    budget; a whole-context trigger on the window's tokens against ``compact_trigger``; a
    ``threshold`` on the region's trigger tokens; anything else (manual, reclaim, room, overflow,
    ceiling) is measured against the region's hysteresis target (tokens)."""
    eviction = getattr(region, "eviction", None)
    max_items = getattr(region, "max_items", None)
    if (
        p.reason == "compact_count"
        and isinstance(eviction, Compact)
        and max_items is not None
        and isinstance(region, SlidingWindow)  # the kind that counts items
    ):
        return region.item_count(), max_items + eviction.compact_count, "items"
    if p.operation == "merge":
        return region.used_tokens, region.budget, "tokens"
    if p.reason == "window_trigger" and c.options.compact_trigger is not None:
        return c.window.used_tokens, int(c.options.compact_trigger), "tokens"
    if p.reason == "token_trigger" and isinstance(region, SlidingWindow):
        return region.used_tokens, int(region.token_trigger or 0), "tokens"
    trigger = region.trigger_tokens
    if p.reason == "threshold" and trigger is not None:
        return region.used_tokens, int(trigger), "tokens"
    return region.used_tokens, region_target(c, region), "tokens"


def bulk_fallback(c: Session, region: Region, p: PendingCompaction, reason: str) -> tuple[str, ...]:
    """Evict ``region`` down to ``max_items`` when it is past its :func:`fallback_point` after
    the compaction ``p`` failed (module doc). Returns the evicted entry ids (empty when the
    region is not past the point or declares no fallback). Pending items that covered evicted
    entries leave the queue with a ``compaction_fallback`` event; ``p`` itself (already out of
    the queue) is reported the same way."""
    if not isinstance(region, SlidingWindow) or not isinstance(region.eviction, Compact):
        return ()
    keep = region.max_items
    if p.reason == "compact_count" and keep is not None:
        if region.item_count() <= keep + 2 * region.eviction.compact_count:
            return ()
        info = region.analysis()
        count = region.item_count()
        if region.count_units:
            j = min(count - keep, info.removable_count)
        else:
            j = next(
                (x for x, done in enumerate(info.removed_entries) if count - done <= keep),
                info.removable_count,
            )
        indexes = info.removal(j)
        why = f"compaction failed ({reason}); bulk eviction to max_items={keep}"
    else:
        indexes = _token_fallback(region)
        why = (
            f"compaction failed ({reason}); bulk eviction to the token target "
            f"{region.token_target} (trigger {region.token_trigger} tokens)"
        )
    ids = tuple(region.entries[i].id for i in indexes)
    if not ids:
        return ()
    removed = region.remove_ids(ids)
    events = c.window.events
    events.emit(
        rev.Evicted(region.name, ids, sum(e.tokens for e in removed), "compaction_fallback")
    )
    queue = c.window.queue
    reported = {p.id}
    events.emit(rev.CompactionFallback(p.id, region.name, tuple(p.entry_ids), why))
    for other in queue.touching(region.name, ids):
        queue.remove(other.id)
        if other.id not in reported:
            reported.add(other.id)
            events.emit(rev.CompactionFallback(other.id, region.name, tuple(other.entry_ids), why))
    return ids
