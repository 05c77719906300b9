"""Re-planning queued compactions whose units changed after they were queued.

A compaction is planned when a trigger fires and completed later by the runtime. In between,
a tool result that answers a call open at queue time merges that call's group with every
tool-calling group that starts after the call (calls and results spread over several
assistant messages form one unit, :func:`regio.content.group_messages`). A queued span that
held such a group is then no longer whole units, and completing it as queued would split a
turn group. :func:`settle_marks` runs after every committed write of a region and cuts each of
its queued ``compact`` items down to the marked units that are still whole and unprotected
(``compaction_narrowed``), or drops an item none of whose units are left whole
(``compaction_failed`` with ``dropped=True``; the region's trigger queues a fresh item over
the current units).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from regio.regions import events as ev

if TYPE_CHECKING:
    from regio.regions.base import Region

__all__ = ["settle_marks"]


def settle_marks(region: Region) -> None:
    """Cut every queued ``compact`` item of ``region`` to its still-whole, unprotected marked
    units; drop an item with none left. Items that are still whole units are untouched."""
    pending = [p for p in region.pending() if p.operation == "compact"]
    if not pending:
        return
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
