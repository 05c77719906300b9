"""Parked tool output leaves with the turn that parked it.

A ``park`` capture (:class:`regio.capture.rules.ParkRule`) moves a large tool output into a
``temporary`` region and leaves a stub in the conversation: the output's first line, what it
reports, and where the rest went. The parked entry carries that stub
(:data:`regio.regions.PARKED_STUB`) and, for a tool result, the call's id
(:data:`regio.regions.PARKED_CALL`). Once a compaction has summarized the message holding
the stub, nothing in the conversation points at the output any more: the summary and its
items carry what the stub reported, and the output itself is an orphan the agent can no
longer place (which call produced it, what came of it).

:func:`release_orphaned` then releases it, in the flush that wrote the summary. The message
that holds a parked tool result is the one holding that call's result, whatever relief made
of its text (a placeholder, a trim); a parked observation's is the one whose text holds the
stub. An output is released only when a message this flush summarized held it, no message
still in a conversation does, and a request has already carried it (never one parked in the
step that is being admitted).

Under the ``regio`` layout a ``park`` region sits in the tail after the conversation
(:mod:`regio.layout.observe`), and a summary rewrites the cached prefix from the
conversation's start, so the release costs no cache write of its own; left in place, the
output would be written again after every compaction and read on every request until a
newer one displaced it. Measured on generated sessions at 32k-128k windows
(docs/benchmark.md, "Parked output leaves with its turn").

The original stays in the session transcript (the write was recorded there), and a
``released`` event names the entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from regio.content import Entry, ToolResult
from regio.regions import PARKED_CALL, PARKED_STUB, SlidingWindow
from regio.session._session import Session

from ._cuts import entry_number, unsent_from

__all__ = ["conversation_entries", "release_orphaned"]


def conversation_entries(c: Session) -> dict[str, Entry]:
    """The entries of every conversation (a :class:`SlidingWindow`) by id."""
    return {e.id: e for r in c.window.regions if isinstance(r, SlidingWindow) for e in r.entries}


def _holds(message: Entry, parked: Entry) -> bool:
    """Whether the conversation ``message`` holds what stands for the ``parked`` output."""
    call = parked.meta.get(PARKED_CALL)
    if isinstance(call, str) and call:
        return any(isinstance(b, ToolResult) and b.tool_use_id == call for b in message.blocks)
    return str(parked.meta[PARKED_STUB]) in message.text


def orphaned(c: Session, summarized: Iterable[Entry]) -> list[tuple[str, int]]:
    """The parked entries :func:`release_orphaned` releases (module doc), as (region, index)
    pairs, highest index first within a region (the order they can be released in)."""
    mark = unsent_from(c)
    gone = list(summarized)
    if mark is None or not gone:
        return []
    held = conversation_entries(c).values()
    found: list[tuple[str, int]] = []
    for region in c.window.regions:
        if isinstance(region, SlidingWindow):
            continue
        for i in range(len(region.entries) - 1, -1, -1):
            parked = region.entries[i]
            number = entry_number(parked.id)
            if not parked.meta.get(PARKED_STUB) or number is None or number >= mark:
                continue
            if any(_holds(m, parked) for m in gone) and not any(_holds(m, parked) for m in held):
                found.append((region.name, i))
    return found


def release_orphaned(c: Session, before: Mapping[str, Entry], replaced: Iterable[str]) -> int:
    """After a flush whose summaries replaced the conversation entries ``replaced`` (ids;
    ``before``: the conversations' entries by id as the flush found them), release every
    parked output whose turn left with them (module doc). Returns the tokens released."""
    summarized = [before[i] for i in replaced if i in before]
    freed = 0
    for region, index in orphaned(c, summarized):
        removed = c.window.release(region, index=index)
        if removed:  # as Engine.release records it
            c.record("release", region, ids=[e.id for e in removed])
        freed += sum(e.tokens for e in removed)
    return freed
