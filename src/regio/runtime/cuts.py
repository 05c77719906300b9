"""Where a compaction cuts: the fewest oldest units of a conversation that bring it to a
token target (:func:`cut_ids`), computed without touching the region or the queue, so the
flush can ask "where would the summary cut" before deciding how to relieve it."""

from __future__ import annotations

from typing import Any

from regio.policies import is_user_turn_start

__all__ = ["cut_ids"]


def cut_ids(
    c: Any,
    region: Any,
    marked: set[int],
    target: int,
    keep_messages: int | None = None,
    saved: dict[int, int] | None = None,
) -> list[str]:
    """Ids of the fewest oldest units of ``region`` among the entries ``marked`` (indexes), in
    its removal order, that leave ``<= target`` tokens and, with ``keep_messages``, ``<=
    keep_messages`` entries (``[]``: nothing needs to go or nothing is compactable);
    ``saved``: entry index -> tokens it would take less (a cut as if those were cleared).
    Changes nothing.

    A keep limit that falls inside a unit (a parallel call and its results; a call and
    its result) *shrinks* the kept tail to the unit boundary: the whole unit is
    summarized, never a part of it, and the kept tail never starts with a tool result. The
    protected units (newest user message, open groups) are always kept, even above the
    limits."""
    entries = region.entries
    info = region.analysis()
    units = [info.units[u] for u in info.removable if set(info.units[u]) <= marked]
    if not units:
        return []
    less = saved or {}
    used = region.used_tokens - sum(less.values())
    removed = [0]
    removed_count = [0]
    for members in units:
        removed.append(removed[-1] + sum(entries[m].tokens - less.get(m, 0) for m in members))
        removed_count.append(removed_count[-1] + len(members))

    def fits(j: int) -> bool:
        if used - removed[j] > target:
            return False
        return keep_messages is None or len(entries) - removed_count[j] <= keep_messages

    def first_kept(j: int) -> int | None:
        gone = {m for members in units[:j] for m in members}
        return next((i for i in range(len(entries)) if i not in gone), None)

    cut = None
    # with ``cut_at_turns`` prefer a cut after which the view starts with a user turn (whole
    # turns go); else (and as a fallback) any unit boundary of the removal order
    for at_turn in (True, False) if c.options.cut_at_turns else (False,):
        for j in range(0, len(units) + 1):
            if not fits(j):
                continue
            if at_turn:
                first = first_kept(j)
                if first is None or not is_user_turn_start(entries[first]):
                    continue
            cut = j
            break
        if cut is not None:
            break
    if cut is None:
        cut = len(units)
    return [entries[m].id for members in units[:cut] for m in members]
