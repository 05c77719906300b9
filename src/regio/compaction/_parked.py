"""Parked tool output leaves with the turn that parked it.

A ``park`` capture (:class:`regio.capture.rules.ParkRule`) moves a large tool output into a
``temporary`` region and leaves a stub in the conversation: the output's first line, what it
reports, and where the rest went. The parked entry carries that stub
(:data:`regio.regions.PARKED_STUB`) and, for a tool result, the call's id as the client sent
it (:data:`regio.regions.PARKED_CALL`). Once a compaction has summarized the message holding
the result, or relief has cleared the result to a placeholder, nothing in the conversation
points at the output any more: the summary and its items (or the placeholder, with its
extract) carry what the stub reported, and the output itself is an orphan the agent can no
longer place (which call produced it, what came of it).

:func:`release_orphaned` then releases it, in the flush that summarized or cleared. The
message that holds a parked tool result is the one holding that call's result (its id as the
engine admitted it when the capture recorded that, else as sent:
:func:`regio.regions.parked_for`); it stands for the output unless relief
cleared it (:data:`regio.policies.relief.CLEARED_META`; a trim keeps head and tail, and the
output stays). A parked observation's message is the one whose text holds the stub. An output is
released only when its result left the conversation (a message this flush summarized held
it, or its message holds it cleared), no message still stands for it, and a request has
already carried it (never one parked in the step being admitted).

Under the ``regio`` layout a ``park`` region sits in the tail after the conversation
(:mod:`regio.layout.observe`), and a summary (a clearing) rewrites the cached prefix from the
conversation's start (the cleared message) on, so the release costs no cache write of its
own; left in place, the output would be written again after every compaction and read on
every request until a newer one displaced it. Measured on generated sessions at 32k-128k
windows (docs/benchmark.md, "Parked output leaves with its turn").

The output stays in the session transcript (the write was recorded there), a ``released``
event names the entry, and ``context_restore`` of the call brings back the output, not the
stub (:func:`regio.compaction.relief._originals.restore` resolves a stub to the output the
transcript holds, however the output left its region). Outputs whose result
left the conversation another way (bulk eviction, a manual compaction of results no request
carried) stay until a newer park displaces them or the window reclaims them.
"""

from __future__ import annotations

from collections.abc import Sequence

from regio.content import Entry, ToolResult
from regio.policies.relief import CLEARED_META
from regio.regions import PARKED_CALL, PARKED_STUB, SlidingWindow, parked_for
from regio.session._session import Session

from ._cuts import entry_number, unsent_from

__all__ = ["release_orphaned"]


def _results(message: Entry, parked: Entry) -> list[ToolResult]:
    """The results in the conversation ``message`` that may stand for the ``parked`` output: those
    of its call (:func:`regio.regions.parked_for`: exactly, or as sent) (several when the client
    reused one id), or for a parked observation a text holding its stub (returned as a result of no
    call)."""
    call = parked.meta.get(PARKED_CALL)
    if isinstance(call, str) and call:
        return [
            b
            for b in message.blocks
            if isinstance(b, ToolResult) and parked_for(parked, b.tool_use_id)
        ]
    stub = str(parked.meta[PARKED_STUB])
    return [ToolResult("", stub)] if stub in message.text else []


def _stands_for(message: Entry, parked: Entry) -> bool | None:
    """Whether the conversation ``message`` holds what stands for the ``parked`` output:
    ``True`` it does (one matching result is not cleared), ``False`` it holds only results
    relief cleared, ``None`` it holds nothing of it."""
    results = _results(message, parked)
    if not results:
        return None
    cleared = message.meta.get(CLEARED_META, ())
    return any(r.tool_use_id not in cleared for r in results)


def orphaned(c: Session, summarized: Sequence[Entry]) -> list[tuple[str, int]]:
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
    held = [e for r in c.window.regions if isinstance(r, SlidingWindow) for e in r.entries]
    found: list[tuple[str, int]] = []
    for name, i, entry in reversed(parked):
        states = [(m, _stands_for(m, entry)) for m in held]
        if any(state for _, state in states):
            continue
        left = [m for m, state in states if state is False] + list(summarized)
        if any(_results(m, entry) for m in left):
            found.append((name, i))
    return found


def release_orphaned(c: Session, summarized: Sequence[Entry]) -> int:
    """After a flush whose summaries replaced the entries ``summarized`` (as their regions
    held them) or whose relief cleared results, release every parked output whose result left
    the conversation (module doc). Returns the tokens released."""
    freed = 0
    for region, index in orphaned(c, summarized):
        removed = c.window.release(region, index=index)
        if removed:  # as Engine.release records it
            c.record("release", region, ids=[e.id for e in removed])
        freed += sum(e.tokens for e in removed)
    return freed
