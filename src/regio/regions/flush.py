"""Completing and failing pending compactions (the runtime's answers to the queue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from regio.content import Entry
from regio.errors import CompactionError
from regio.regions import events as ev
from regio.regions.compaction import CompactHistory
from regio.regions.results import WritePlan

if TYPE_CHECKING:
    from regio.regions.window import Window

__all__ = ["complete_compaction", "fail_compaction"]


def complete_compaction(
    window: Window, pending_id: str, summary: Entry | str, *, tokens: int | None = None
) -> Entry:
    """Commit a summary for a pending compaction and return the stored summary entry.

    ``compact``: removes exactly the marked entries from their region and appends the
    summary to the paired ``compact_history``. ``merge``: replaces the marked summaries by
    one, at the position of the oldest. The summary's ``meta`` gets ``covers`` (entry ids)
    and ``source``. Raises :class:`CompactionError` (changing nothing) for an unknown id,
    entries no longer present, an empty summary, a summary not smaller than what it
    replaces, or one larger than the whole target region.
    """
    p = window.queue.get(pending_id)
    if p is None:
        known = ", ".join(window.queue.items) or "none"
        raise CompactionError(f"no pending compaction {pending_id!r} (pending: {known})")
    src = window.region(p.region)
    present = {e.id: i for i, e in enumerate(src.entries)}
    missing = [i for i in p.entry_ids if i not in present]
    if missing:
        raise CompactionError(f"{pending_id}: entries {missing} are no longer in {src.name!r}")
    entry = summary if isinstance(summary, Entry) else window.make_entry(summary, tokens=tokens)
    if not entry.text.strip():
        raise CompactionError(f"{pending_id}: the summary is empty; nothing changed")
    if entry.tokens >= p.tokens:
        raise CompactionError(
            f"{pending_id}: the summary ({entry.tokens} tokens) is not smaller than what it "
            f"replaces ({p.tokens} tokens); nothing changed"
        )
    target = window.region(p.target) if p.target else None
    if target is None:
        raise CompactionError(f"{pending_id}: region {src.name!r} has no compact_history")
    if entry.tokens > target.budget:
        raise CompactionError(
            f"{pending_id}: the summary ({entry.tokens} tokens) is larger than region "
            f"{target.name!r} ({target.budget} tokens)"
        )
    meta = {**entry.meta, "covers": list(p.entry_ids), "source": p.region}
    entry = msgspec.structs.replace(entry, role=None, key=None, group=None, meta=meta)
    window.queue.remove(p.id)
    position = min(present[i] for i in p.entry_ids)
    src.remove_ids(p.entry_ids)
    if p.operation == "merge":
        src.insert(position, entry)
    else:
        target.commit(WritePlan(entry))
    window.events.emit(
        ev.CompactionCompleted(
            p.id, p.region, target.name, p.entry_ids, entry.id, p.tokens, entry.tokens
        )
    )
    if isinstance(target, CompactHistory):
        target.check_merge()
    return entry


def fail_compaction(window: Window, pending_id: str, reason: str, *, drop: bool = True) -> None:
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
