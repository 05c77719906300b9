"""Completing, narrowing and failing pending compactions (the runtime's answers to the
queue)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.content import Entry
from regio.errors import CompactionError
from regio.regions import events as ev
from regio.regions.base import Region
from regio.regions.compaction import CompactHistory
from regio.regions.pending import PendingCompaction
from regio.regions.protocols import WindowSurface
from regio.regions.results import WritePlan

__all__ = [
    "complete_compaction",
    "fail_compaction",
    "narrow_compaction",
    "refresh_compaction",
]


def _check_units(src: Region, p: PendingCompaction, ids: Sequence[str]) -> None:
    """Raise :class:`CompactionError` unless ``ids`` are whole, unprotected units of ``src``."""
    info = src.analysis()
    index = {e.id: i for i, e in enumerate(src.entries)}
    chosen = {index[i] for i in ids}
    for i in sorted(chosen):
        unit = info.unit_of[i]
        if info.protected[unit]:
            raise CompactionError(
                f"{p.id}: entry {src.entries[i].id!r} of {src.name!r} is the newest user "
                "message or in an open tool-call group; it is never compacted"
            )
        missing = [src.entries[m].id for m in info.units[unit] if m not in chosen]
        if missing:
            raise CompactionError(
                f"{p.id}: the marked entries split a turn group of {src.name!r} (missing "
                f"{missing}); compact whole units only"
            )


def _superseded(p: PendingCompaction, target: Region, supersedes: Sequence[str]) -> list[Entry]:
    """The summaries of ``target`` named by ``supersedes`` (checked: a ``compact`` only, every
    id present)."""
    if not supersedes:
        return []
    if p.operation != "compact":
        raise CompactionError(f"{p.id}: a merge cannot supersede other summaries")
    in_target = {e.id: e for e in target.entries}
    unknown = [i for i in supersedes if i not in in_target]
    if unknown:
        raise CompactionError(f"{p.id}: superseded summaries {unknown} are not in {target.name!r}")
    return [in_target[i] for i in dict.fromkeys(supersedes)]


def _queued(
    window: WindowSurface, pending_id: str, *, refuse_merge: str | None = None
) -> PendingCompaction:
    """The queued item ``pending_id``. Raises :class:`CompactionError` naming the pending ids
    when it is unknown, and for a ``merge`` when ``refuse_merge`` (what cannot be done to it)
    is given."""
    p = window.queue.get(pending_id)
    if p is None:
        known = ", ".join(window.queue.items) or "none"
        raise CompactionError(f"no pending compaction {pending_id!r} (pending: {known})")
    if refuse_merge is not None and p.operation != "compact":
        raise CompactionError(f"{pending_id}: a merge cannot be {refuse_merge}")
    return p


def complete_compaction(
    window: WindowSurface,
    pending_id: str,
    summary: Entry | str,
    *,
    tokens: int | None = None,
    supersedes: Sequence[str] = (),
) -> Entry:
    """Commit a summary for a pending compaction and return the stored summary entry.

    ``compact``: removes exactly the marked entries from their region and appends the
    summary to the paired ``compact_history``. ``merge``: replaces the marked summaries by
    one, at the position of the oldest. ``supersedes``: ids of summaries in the target
    ``compact_history`` that the new summary carries forward (a rolling summary); they leave
    the history in the same commit, and the size check counts them as replaced. The summary's
    ``meta`` gets ``covers`` (entry ids), ``source`` and, with ``supersedes``, ``supersedes``.

    Raises :class:`CompactionError` (changing nothing) for an unknown id, entries no longer
    present, marked entries that are no longer whole unprotected units (newest user message,
    open group, split group), an unknown superseded id, an empty summary, a summary not smaller
    than what it replaces (marked entries plus superseded summaries, in tokens), or one larger
    than the whole target region.
    """
    p = _queued(window, pending_id)
    src = window.region(p.region)
    present = {e.id: i for i, e in enumerate(src.entries)}
    missing = [i for i in p.entry_ids if i not in present]
    if missing:
        raise CompactionError(f"{pending_id}: entries {missing} are no longer in {src.name!r}")
    if p.operation == "compact":
        _check_units(src, p, p.entry_ids)
    entry = summary if isinstance(summary, Entry) else window.make_entry(summary, tokens=tokens)
    if not entry.text.strip():
        raise CompactionError(f"{pending_id}: the summary is empty; nothing changed")
    target = window.region(p.target) if p.target else None
    if target is None:
        raise CompactionError(f"{pending_id}: region {src.name!r} has no compact_history")
    superseded = _superseded(p, target, supersedes)
    replaced = p.tokens + sum(e.tokens for e in superseded)
    if entry.tokens >= replaced:
        what = f"{p.tokens} tokens" + (
            f" + {replaced - p.tokens} of superseded summaries" if superseded else ""
        )
        raise CompactionError(
            f"{pending_id}: the summary ({entry.tokens} tokens) is not smaller than what it "
            f"replaces ({what}); nothing changed"
        )
    if entry.tokens > target.budget:
        raise CompactionError(
            f"{pending_id}: the summary ({entry.tokens} tokens) is larger than region "
            f"{target.name!r} ({target.budget} tokens)"
        )
    return _commit(window, p, src, target, entry, superseded, present)


def _commit(
    window: WindowSurface,
    p: PendingCompaction,
    src: Region,
    target: Region,
    entry: Entry,
    superseded: list[Entry],
    present: dict[str, int],
) -> Entry:
    """Apply a checked compaction: the summary replaces the marked entries (and the
    superseded summaries); returns the stored summary."""
    meta = {**entry.meta, "covers": list(p.entry_ids), "source": p.region}
    if superseded:
        meta["supersedes"] = [e.id for e in superseded]
    entry = msgspec.structs.replace(entry, role=None, key=None, group=None, meta=meta)
    window.queue.remove(p.id)
    position = min(present[i] for i in p.entry_ids)
    src.remove_ids(p.entry_ids)
    if superseded:
        target.remove_ids([e.id for e in superseded])
    if p.operation == "merge":
        src.insert(position, entry)
    else:
        target.commit(WritePlan(entry))
    window.events.emit(
        ev.CompactionCompleted(
            p.id,
            p.region,
            target.name,
            p.entry_ids,
            entry.id,
            p.tokens,
            entry.tokens,
            tuple(e.id for e in superseded),
        )
    )
    if isinstance(target, CompactHistory):
        target.check_merge()
    return entry


def refresh_compaction(window: WindowSurface, pending_id: str) -> PendingCompaction | None:
    """Re-mark a queued ``compact`` item with the whole current compactable content of its
    region (every unit of the removal order), keeping its id and queue position.

    A mark is a snapshot: a unit protected when it was queued (the then newest user message,
    a then open group) may be compactable by flush time. The runtime refreshes an item that
    compacts "everything down to a target" (reasons ``threshold``, ``reclaim``, ``manual``,
    ``window_trigger``) before narrowing it; a ``compact_count`` item is flushed as queued.
    Emits ``compaction_refreshed`` when the marked entries change. Returns the item, or
    ``None`` (queue unchanged) when nothing in the region is compactable any more. Raises
    :class:`CompactionError` for an unknown id or a ``merge``.
    """
    p = _queued(window, pending_id, refuse_merge="refreshed")
    src = window.region(p.region)
    info = src.analysis()
    marked = [src.entries[i] for i in info.removal(info.removable_count)]
    if not marked:
        return None
    ids = tuple(e.id for e in marked)
    if ids == p.entry_ids:
        return p
    fresh = msgspec.structs.replace(p, entry_ids=ids, tokens=sum(e.tokens for e in marked))
    window.queue.put(fresh)
    window.events.emit(ev.CompactionRefreshed(p.id, p.region, ids, fresh.tokens))
    return fresh


def narrow_compaction(
    window: WindowSurface, pending_id: str, entry_ids: Sequence[str]
) -> PendingCompaction:
    """Cut a queued ``compact`` item down to ``entry_ids`` (hysteresis: compact only part of a
    queued batch). The item keeps its id and queue position; ``tokens`` is recounted and a
    ``compaction_narrowed`` event is emitted. Returns the narrowed item (the same one when
    nothing changes).

    Raises :class:`CompactionError` for an unknown id, a ``merge``, an empty selection, ids
    that are not marked in the item or no longer in the region, or a selection that is not
    whole unprotected units.
    """
    p = _queued(window, pending_id, refuse_merge="narrowed")
    wanted = set(entry_ids)
    if not wanted:
        raise CompactionError(
            f"{pending_id}: narrowing to nothing; use fail_compaction(id, reason) to drop it"
        )
    extra = sorted(wanted - set(p.entry_ids))
    if extra:
        raise CompactionError(f"{pending_id}: entries {extra} are not marked in this item")
    src = window.region(p.region)
    by_id = {e.id: e for e in src.entries}
    gone = sorted(i for i in wanted if i not in by_id)
    if gone:
        raise CompactionError(f"{pending_id}: entries {gone} are no longer in {src.name!r}")
    kept = tuple(i for i in p.entry_ids if i in wanted)
    _check_units(src, p, kept)
    if kept == p.entry_ids:
        return p
    narrowed = msgspec.structs.replace(p, entry_ids=kept, tokens=sum(by_id[i].tokens for i in kept))
    window.queue.put(narrowed)
    window.events.emit(
        ev.CompactionNarrowed(p.id, p.region, kept, narrowed.tokens, p.tokens - narrowed.tokens)
    )
    return narrowed


def fail_compaction(
    window: WindowSurface, pending_id: str, reason: str, *, drop: bool = True
) -> None:
    """Record a failed compaction; nothing in any region changes.

    With ``drop`` (default) the mark leaves the queue and the entries are unmarked (the
    region queues them again at its next trigger). With ``drop=False`` the mark stays
    queued for a retry and its ``attempts`` counter grows. Raises :class:`CompactionError`
    for an unknown id.
    """
    p = window.queue.get(pending_id)
    if p is None:
        raise CompactionError(f"no pending compaction {pending_id!r}")
    if drop:
        window.queue.remove(pending_id)
    else:
        window.queue.put(msgspec.structs.replace(p, attempts=p.attempts + 1))
    window.events.emit(ev.CompactionFailed(p.id, p.region, reason, drop))
