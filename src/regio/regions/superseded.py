"""Superseded progress reports leave the window.

A progress report (``ToolResult(final=False)``) is rendered only while it is the latest result
of its call: the layout sends the latest result of every call and drops the earlier ones
(:mod:`regio.layout.repair`). Kept in the conversation, every earlier report would still count
against the region's budget, and while the call is open its group cannot be evicted, so a long
job's progress stream (one report per percent) would fill the window with tokens that are
never sent. When a newer result (progress or final) of a call is admitted,
:func:`drop_superseded_progress` takes the call's earlier reports out of the region: an entry
that held only such reports leaves, an entry that also holds other blocks (results of parallel
calls) keeps them under its id, role and group. The canonical transcript keeps every report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from regio.content import Entry, ToolResult
from regio.regions import events as ev
from regio.regions.conversation import SlidingWindow

if TYPE_CHECKING:
    from regio.regions.base import Region
    from regio.tokens import TokenCounter

__all__ = ["drop_superseded_progress"]


def _superseded(block: object, calls: set[str]) -> bool:
    return isinstance(block, ToolResult) and not block.is_final and block.tool_use_id in calls


def drop_superseded_progress(
    region: Region, entry: Entry, counter: TokenCounter | None
) -> tuple[str, ...]:
    """Remove from ``region`` the progress reports that ``entry`` (just admitted) supersedes:
    every ``final=False`` result, in an earlier entry, of a call that ``entry`` holds a result
    for. A partly superseded entry is rewritten in place and recounted with ``counter`` (its
    tokens scaled by the blocks kept without one). Emits ``evicted`` (reason
    ``superseded_progress``) with the ids of the entries touched and the tokens freed; returns
    those ids (empty when nothing was superseded)."""
    calls = {b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult)}
    if not calls or not isinstance(region, SlidingWindow):
        return ()
    gone: list[str] = []
    touched: list[str] = []
    freed = 0
    for index, old in enumerate(list(region.entries)):
        if old.id == entry.id or not any(_superseded(b, calls) for b in old.blocks):
            continue
        kept = tuple(b for b in old.blocks if not _superseded(b, calls))
        touched.append(old.id)
        if not kept:
            gone.append(old.id)
            freed += old.tokens
            continue
        slim = msgspec.structs.replace(old, blocks=kept)
        if counter is not None:
            tokens = int(counter.count_entry(slim))
        else:
            tokens = max(1, old.tokens * len(kept) // len(old.blocks))
        tokens = min(tokens, old.tokens)
        freed += old.tokens - tokens
        region.rewrite_entry(index, msgspec.structs.replace(slim, tokens=tokens))
    if gone:
        region.remove_ids(gone)
    if touched:
        region.events.emit(ev.Evicted(region.name, tuple(touched), freed, "superseded_progress"))
    return tuple(touched)
