"""Where a compaction cuts: the fewest oldest units of a conversation that bring it to a
token target (:func:`cut_ids`), computed without touching the region or the queue, so the
flush can ask "where would the summary cut" before deciding how to relieve it.

**Seen before cut.** Every tool result reaches the model at least once (whole or trimmed)
before a clearing or a summary covers it: an entry holding tool results admitted after the
last request was laid out (:func:`unsent_from`: the session's ``last_next_entry``) is never
cut from the conversation by an automatic compaction, with its unit, nor cleared by the relief
chain. (A result admitted
in a tight window used to be summarized at the very next turn boundary, before any request
carried it.) Text the model wrote, or a user message, is not held: the model wrote the one,
and the newest user message is protected anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from regio.content import Entry, ToolResult
from regio.policies import is_user_turn_start
from regio.regions.entrylist import entry_number

if TYPE_CHECKING:
    from regio.regions import Region
    from regio.session._session import Session

__all__ = ["cut_ids", "entry_number", "unsent", "unsent_from"]


def unsent_from(c: Session) -> int | None:
    """The first entry number no request has carried yet (the window's next entry number
    when the last request was laid out), or ``None`` before this engine laid out any request
    or without a session: nothing is held back then (an agent's tool results answer calls of
    a response to a request; a history loaded or imported in bulk compacts as before)."""
    state = c.state
    if state is None or state.last_sent_at is None:
        return None
    return int(state.last_next_entry)


def unsent(entries: Sequence[Entry], mark: int | None) -> set[int]:
    """Indexes of the ``entries`` holding tool results numbered from ``mark`` on
    (:func:`unsent_from`; none for ``None``)."""
    if mark is None:
        return set()
    out = set()
    for i, e in enumerate(entries):
        n = entry_number(e.id)
        if n is not None and n >= mark and any(isinstance(b, ToolResult) for b in e.blocks):
            out.add(i)
    return out


def cut_ids(
    c: Session,
    region: Region,
    marked: set[int],
    target: int,
    keep_messages: int | None = None,
    saved: dict[int, int] | None = None,
    held: set[int] | None = None,
) -> list[str]:
    """Ids of the fewest oldest units of ``region`` among the entries ``marked`` (indexes), in
    its removal order, that leave ``<= target`` tokens and, with ``keep_messages``, ``<=
    keep_messages`` entries (``[]``: nothing needs to go or nothing is compactable);
    ``saved``: entry index -> tokens it would take less (a cut as if those were cleared);
    ``held``: entry indexes never cut (with their units: the entries no request carried yet,
    :func:`unsent`). Never leaves the region below its ``keep_at_least`` tokens (a
    conversation's declared floor: the cut stops at the last unit boundary above it). Changes
    nothing.

    A keep limit that falls inside a unit (a parallel call and its results; a call and
    its result) *shrinks* the kept tail to the unit boundary: the whole unit is
    summarized, never a part of it, and the kept tail never starts with a tool result. The
    protected units (newest user message, open groups) are always kept, even above the
    limits."""
    entries = region.entries
    info = region.analysis()
    keep = held or set()
    units = [
        info.units[u]
        for u in info.removable
        if set(info.units[u]) <= marked and not keep.intersection(info.units[u])
    ]
    if not units:
        return []
    less = saved or {}
    used = region.used_tokens - sum(less.values())
    removed = [0]
    removed_count = [0]
    for members in units:
        removed.append(removed[-1] + sum(entries[m].tokens - less.get(m, 0) for m in members))
        removed_count.append(removed_count[-1] + len(members))

    floor = getattr(region, "keep_at_least", None) or 0
    deepest = max((j for j in range(len(units) + 1) if used - removed[j] >= floor), default=0)
    units = units[:deepest]

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
