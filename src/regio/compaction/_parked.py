"""Parked tool output leaves with the turn that parked it.

A ``park`` capture (:class:`regio.capture.rules.ParkRule`) moves a large tool output into a
``temporary`` region and leaves a stub in the conversation: the output's first line, what it
reports, and where the rest went. The parked entry carries that stub
(:data:`regio.regions.PARKED_STUB`) and, for a tool result, the call's id
(:data:`regio.regions.PARKED_CALL`). Once a compaction has summarized the message holding
the stub, or relief has cleared the result to a placeholder, nothing in the conversation
points at the output any more: the summary and its items (or the placeholder) carry what the
stub reported, and the output itself is an orphan the agent can no longer place (which call
produced it, what came of it).

:func:`release_orphaned` then releases it, in the flush that summarized or cleared. The
message that holds a parked tool result is the one holding that call's result: it stands for
the output unless relief cleared it (:data:`regio.policies.relief.CLEARED_META`; a trim keeps
its head and tail, and the output stays). A parked observation's is the one whose text holds
the stub. An output is released only when its result left the conversation (a message this
flush summarized held it, or its message holds it cleared), no message still stands for it,
and a request has already carried it (never one parked in the step being admitted).

Under the ``regio`` layout a ``park`` region sits in the tail after the conversation
(:mod:`regio.layout.observe`), and a summary (or a clearing) rewrites the cached prefix from
the conversation's start (or the cleared message), so the release costs no cache write of its
own; left in place, the
output would be written again after every compaction and read on every request until a
newer one displaced it. Measured on generated sessions at 32k-128k windows
(docs/benchmark.md, "Parked output leaves with its turn").

The original stays in the session transcript (the write was recorded there), and a
``released`` event names the entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from regio.content import Entry, ToolResult
from regio.policies.relief import CLEARED_META
from regio.regions import PARKED_CALL, PARKED_STUB, SlidingWindow
from regio.session._session import Session

from ._cuts import entry_number, unsent_from

__all__ = ["conversation_entries", "release_orphaned"]


def conversation_entries(c: Session) -> dict[str, Entry]:
    """The entries of every conversation (a :class:`SlidingWindow`) by id."""
    return {e.id: e for r in c.window.regions if isinstance(r, SlidingWindow) for e in r.entries}


def _stands_for(message: Entry, parked: Entry) -> bool | None:
    """Whether the conversation ``message`` holds what stands for the ``parked`` output:
    ``True`` it does, ``False`` it holds the call's result cleared by relief, ``None`` it
    holds nothing of it."""
    call = parked.meta.get(PARKED_CALL)
    if isinstance(call, str) and call:
        if not any(isinstance(b, ToolResult) and b.tool_use_id == call for b in message.blocks):
            return None
        return call not in message.meta.get(CLEARED_META, ())
    return True if str(parked.meta[PARKED_STUB]) in message.text else None


def orphaned(c: Session, summarized: Iterable[Entry]) -> list[tuple[str, int]]:
    """The parked entries :func:`release_orphaned` releases (module doc), as (region, index)
    pairs, highest index first within a region (the order they can be released in)."""
    mark = unsent_from(c)
    parked = [
        (region.name, i, e)
        for region in c.window.regions
        if not isinstance(region, SlidingWindow)
        for i, e in enumerate(region.entries)
        if e.meta.get(PARKED_STUB)
        and (number := entry_number(e.id)) is not None
        and mark is not None
        and number < mark  # a request has carried it
    ]
    if not parked:
        return []
    gone, held = list(summarized), conversation_entries(c).values()
    found: list[tuple[str, int]] = []
    for name, i, entry in reversed(parked):
        states = {_stands_for(m, entry) for m in held}
        if True in states:
            continue
        if False in states or any(_stands_for(m, entry) is not None for m in gone):
            found.append((name, i))
    return found


def release_orphaned(c: Session, before: Mapping[str, Entry], replaced: Iterable[str]) -> int:
    """After a flush whose summaries replaced the conversation entries ``replaced`` (ids;
    ``before``: the conversations' entries by id as the flush found them) or whose relief
    cleared results, release every parked output whose result left the conversation (module
    doc). Returns the tokens released."""
    summarized = [before[i] for i in replaced if i in before]
    freed = 0
    for region, index in orphaned(c, summarized):
        removed = c.window.release(region, index=index)
        if removed:  # as Engine.release records it
            c.record("release", region, ids=[e.id for e in removed])
        freed += sum(e.tokens for e in removed)
    return freed
