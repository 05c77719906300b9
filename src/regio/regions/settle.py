"""Re-planning queued compactions whose units changed after they were queued.

A compaction is planned when a trigger fires and completed later by the runtime. In between,
a tool result that answers a call open at queue time merges that call's group with every
tool-calling group that starts after the call (calls and results spread over several
assistant messages form one unit, :func:`regio.turngroups.group_messages`). A queued span that
held such a group is then no longer whole units, and completing it as queued would split a
turn group. :func:`settle_marks` runs after every committed write of a region and cuts each of
its queued ``compact`` items down to the marked units that are still whole and unprotected
(``compaction_narrowed``), or drops an item none of whose units are left whole
(``compaction_failed`` with ``dropped=True``; the region's trigger queues a fresh item over
the current units).

Only a tool result can change the units of queued items (it joins a call's group with the
groups after it, or extends an open group); an entry without one (a user message, an assistant
message with or without calls) leaves whole, unprotected units whole and unprotected (a
property test checks this against the full analysis). So when the region was only appended to
since the last settle (same entry list, same rewrite epoch, same queued items) and the new
entries hold no tool result, the analysis (O(entries)) is skipped: such a write costs O(new
entries) while a compaction is queued (the last settle is remembered in
``Region.settle_memo``, a cache that is never saved). A write holding a tool result still
runs the analysis.
The engine flushes queued compactions before it adds messages, so in its loop a compaction is
rarely queued at a write at all (measured: no settle in a 700-turn session); the skip matters
to windows driven directly, where compactions stay queued until the caller completes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from regio.content import ToolResult
from regio.regions import events as ev
from regio.regions.entrylist import appended_since, entry_mark

if TYPE_CHECKING:
    from regio.regions.base import Region

__all__ = ["settle_marks"]


def settle_marks(region: Region) -> None:
    """Cut every queued ``compact`` item of ``region`` to its still-whole, unprotected marked
    units; drop an item with none left. Items that are still whole units are untouched."""
    pending = [p for p in region.pending() if p.operation == "compact"]
    if not pending:
        return
    if _unchanged(region, pending):
        return
    _settle(region, pending)
    _remember(region, [p for p in region.pending() if p.operation == "compact"])


def _key(region: Region, pending: list[Any]) -> tuple[Any, ...]:
    return (entry_mark(region.entries), tuple((p.id, p.entry_ids) for p in pending))


def _remember(region: Region, pending: list[Any]) -> None:
    region.settle_memo = _key(region, pending)


def _unchanged(region: Region, pending: list[Any]) -> bool:
    """Whether ``region`` was only appended to since the last settle
    (:func:`regio.regions.entrylist.appended_since`), with the same queued items, and no
    appended entry holds a tool result (then nothing can need settling)."""
    before = region.settle_memo
    if before is None:
        return False
    start = appended_since(region.entries, before[0])
    if start is None or before[1] != tuple((p.id, p.entry_ids) for p in pending):
        return False
    if start == len(region.entries):
        return True  # unchanged since the last settle: the memo still holds
    if any(isinstance(b, ToolResult) for e in region.entries[start:] for b in e.blocks):
        return False
    _remember(region, pending)
    return True


def _settle(region: Region, pending: list[Any]) -> None:
    info = region.analysis()
    index = {e.id: i for i, e in enumerate(region.entries)}
    for p in pending:
        chosen = {index[i] for i in p.entry_ids if i in index}
        keep = [
            i
            for i in sorted(chosen)
            if not info.protected[info.unit_of[i]]
            and all(m in chosen for m in info.units[info.unit_of[i]])
        ]
        if len(keep) == len(p.entry_ids):
            continue
        if not keep:
            region.queue.remove(p.id)
            region.events.emit(
                ev.CompactionFailed(
                    p.id,
                    p.region,
                    "the marked entries are no longer whole units (a late tool result merged "
                    "them into an open group); dropped, the next trigger queues them again",
                    True,
                )
            )
            continue
        ids = tuple(region.entries[i].id for i in keep)
        tokens = sum(region.entries[i].tokens for i in keep)
        region.queue.put(msgspec.structs.replace(p, entry_ids=ids, tokens=tokens))
        region.events.emit(ev.CompactionNarrowed(p.id, p.region, ids, tokens, p.tokens - tokens))
