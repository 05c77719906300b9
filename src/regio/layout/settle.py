"""Log-structured settling of ``grows`` regions.

A grows region sits before the conversation, so appending to it in place would invalidate the
whole conversation. Under the ``regio`` strategy an entry written mid-run first travels in the
conversation as an append-only **note** (placed after the newest conversation entry at the time
it first appears) and is **settled** into its region's chunks only when the prefix is rewritten
anyway, or when unsettled notes pass ``settle_share`` of the window. Reasons to settle:

* ``prefix_rewritten`` — the first conversation entry changed (compaction or eviction);
* ``region_rewritten`` — a settled entry of a grows region was removed or changed;
* ``note_removed`` — an unsettled entry was removed or changed (the conversation changes anyway);
* ``anchor_lost`` — the conversation entry a note follows is gone;
* ``share`` — unsettled note tokens > ``settle_share`` x window ``max_tokens``;
* a reason forced by the caller (``tail_share``: the freezing tail's stale copies passed
  ``settle_share``; the prefix is rewritten anyway, see :mod:`regio.layout.tail`).

A region that leaves the grows place (observed volatility, :mod:`regio.layout.observe`: it
removed or rewrote entries) takes its notes with it and settles nothing else: the
conversation changes from its first note, the system prompt does not. A region newly laid out
as grows (a ``stable`` region that only appends) starts with every entry settled.

On the first request every entry is settled. Each entry is shown exactly once: in its chunk
when settled, as a note otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import attrs

from regio.content import Entry

from .model import LayoutState, Note
from .protocols import RegionLike

__all__ = ["DEFAULT_SETTLE_SHARE", "Settling", "plan_settling"]

#: Share of the window unsettled ``grows`` notes may reach in the conversation before they are
#: settled; the one declaration of this default (``EngineOptions.settle_share`` and the
#: blueprint's ``layout.settle_share`` read it). 0.1 is what every engine and every bench run
#: has laid out with (the figures of docs/benchmark.md were measured with it).
DEFAULT_SETTLE_SHARE = 0.1


@attrs.frozen
class Settling:
    """Result of :func:`plan_settling`: settled entries per region (region order), notes with
    their entries (placement order), and the settle ``reason`` (``None`` when nothing settled
    beyond what was already settled)."""

    settled: dict[str, list[Entry]]
    notes: list[tuple[Note, Entry]]
    reason: str | None


_ID = attrgetter("id")


def _chunks_rewritten(r: RegionLike, state: LayoutState, digest: Callable[[Entry], str]) -> bool:
    """Whether an entry of a chunk the previous request sent of region ``r`` is gone or
    changed."""
    known = {
        eid: dg
        for c in state.chunks.get(r.name, ())
        for eid, dg in zip(c.entry_ids, c.digests, strict=True)
    }
    if not known:
        return False
    by_id = {e.id: e for e in r.entries}
    rewritten = False
    for eid, dg in known.items():  # every digest is asked for, as the log keeps what is asked
        e = by_id.get(eid)
        if e is None or digest(e) != dg:
            rewritten = True
    return rewritten


def plan_settling(
    grows: Sequence[Any],
    conversation: Sequence[Entry],
    state: LayoutState | None,
    *,
    window_tokens: int,
    settle_share: float = DEFAULT_SETTLE_SHARE,
    force: str | None = None,
    placed: int = 0,
    has_entry: Callable[[str], bool] | None = None,
    digest: Callable[[Entry], str] = attrgetter("digest"),
) -> Settling:
    """Decide which grows-region entries are settled and which travel as notes.

        ``grows``: regions (``name``, ``entries``); ``conversation``: conversation entries in order;
        ``state``: the previous :class:`LayoutState` (``None`` on the first request);
        ``force``: a settle reason decided by the caller (the prefix is rewritten anyway, e.g. the
        freezing tail's stale copies passed their share); ``placed``: this request's number,
        recorded on new notes; ``has_entry``: whether a conversation entry has an id (default: a
    scan of ``conversation``); ``digest``: an entry's digest (default ``Entry.digest``; a
    session passes its render log's, computed once per entry). Raises ``ValueError`` when
    ``settle_share`` is not in (0, 1].
    """
    if not 0 < settle_share <= 1:
        raise ValueError(f"settle_share must be in (0, 1], got {settle_share}")
    everything = {r.name: list(r.entries) for r in grows}
    if state is None or state.requests == 0:
        return Settling(everything, [], None)

    first = conversation[0].digest if conversation else None
    if has_entry is None:
        conv_ids = set(map(_ID, conversation)) if state.notes else set()
        has_entry = conv_ids.__contains__
    reason: str | None = force
    if reason is None and state.first_message is not None and first != state.first_message:
        reason = "prefix_rewritten"

    settled: dict[str, list[Entry]] = {}
    fresh: list[Entry] = []
    fresh_region: dict[str, str] = {}
    for r in grows:
        if r.name not in state.settled:  # newly laid out as grows: it was sent whole until now
            settled[r.name] = list(r.entries)
            continue
        if _chunks_rewritten(r, state, digest):
            reason = reason or "region_rewritten"
        ids = set(state.settled.get(r.name, ()))
        if ids.issuperset(map(_ID, r.entries)):  # all settled: the usual request
            settled[r.name] = list(r.entries)
            continue
        settled[r.name] = [e for e in r.entries if e.id in ids]
        for e in r.entries:
            if e.id not in ids:
                fresh.append(e)
                fresh_region[e.id] = r.name

    fresh_by_id = {e.id: e for e in fresh}
    notes: list[tuple[Note, Entry]] = []
    noted: set[str] = set()
    for note in state.notes:
        if note.region not in settled:  # its region left the grows place: its notes go with it
            continue
        e = fresh_by_id.get(note.entry_id)
        if e is None or digest(e) != note.digest:
            reason = reason or "note_removed"
            continue
        if note.anchor is not None and not has_entry(note.anchor):
            reason = reason or "anchor_lost"
        notes.append((note, e))
        noted.add(e.id)
    anchor = conversation[-1].id if conversation else None
    for e in fresh:
        if e.id not in noted:
            notes.append((Note(e.id, fresh_region[e.id], anchor, digest(e), placed), e))
    if notes and sum(e.tokens for _, e in notes) > settle_share * window_tokens:
        reason = reason or "share"
    if reason is not None:
        return Settling(everything, [], reason if notes else None)
    return Settling(settled, notes, None)
