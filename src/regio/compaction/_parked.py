"""Parked tool output leaves with the turn that parked it.

A ``park`` capture (:class:`regio.capture.rules.ParkRule`) moves a large tool output into a
``temporary`` region and leaves a stub in the conversation: the output's first line, what it
reports, and where the rest went. The parked entry carries that stub
(:data:`regio.regions.PARKED_STUB`). Once a compaction has summarized every message holding
the stub, nothing in the conversation points at the output any more: the summary and its
items carry what the stub reported, and the output itself is an orphan the agent can no
longer place (which call produced it, what came of it).

:func:`release_orphaned` then releases it, in the flush that wrote the summary. The region is
laid out in the tail after the conversation (a ``park`` region always is:
:mod:`regio.layout.observe`), and a summary rewrites the cached prefix from the
conversation's start, so the release costs no cache write of its own; left in place, the
output would be written again after every compaction and read on every request until a
newer one displaced it. Measured on generated sessions at a 32k window under Anthropic's
cache (docs/benchmark.md, "Parked output leaves with its turn").

The original stays in the session transcript (the write was recorded there), and a
``released`` event names the entries.
"""

from __future__ import annotations

from collections.abc import Sequence

from regio.regions import PARKED_STUB, SlidingWindow
from regio.session._session import Session

__all__ = ["release_orphaned"]


def orphaned(c: Session) -> list[tuple[str, int]]:
    """The parked entries no conversation message points at any more, as (region, index)
    pairs, highest index first within a region (the order they can be released in)."""
    window = c.window
    held = "\n".join(
        e.text for r in window.regions if isinstance(r, SlidingWindow) for e in r.entries
    )
    found: list[tuple[str, int]] = []
    for region in window.regions:
        if isinstance(region, SlidingWindow):
            continue
        for i in range(len(region.entries) - 1, -1, -1):
            stub = region.entries[i].meta.get(PARKED_STUB)
            if isinstance(stub, str) and stub and stub not in held:
                found.append((region.name, i))
    return found


def release_orphaned(c: Session, summarized: Sequence[str]) -> int:
    """After a flush whose summaries took messages from the regions ``summarized`` (names),
    release every parked output whose stub no conversation message holds any more (module
    doc). Returns the tokens released (``0`` when no conversation was summarized)."""
    if not any(isinstance(c.window.region(name), SlidingWindow) for name in summarized):
        return 0
    freed = 0
    for region, index in orphaned(c):
        removed = c.window.release(region, index=index)
        if removed:  # as Engine.release records it
            c.record("release", region, ids=[e.id for e in removed])
        freed += sum(e.tokens for e in removed)
    return freed
