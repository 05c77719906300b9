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

Finding the earlier reports does not scan the window: a :class:`ProgressIndex`, owned by the
window for each conversation region, maps every call with reports in the region to the
entries holding them and where they are. It follows appends in O(appended) and its own
removals in O(its entries), and is rebuilt (O(entries)) only after another change of the entry
list (compaction, eviction, release, a rewrite, a loaded state), each of which already cost
O(entries); a write that supersedes nothing costs O(1) amortised.

A newer report that the region cannot admit as is may fit in place of the reports it
supersedes: :func:`admit_superseding` plans the write again on a planning copy of the region
as it would be after the drop (:func:`plan_drop`, a :class:`DropPlan`), changing nothing, and
drops for real only when that plan admits the write.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs
import msgspec

from regio.content import Entry, ToolResult
from regio.policies import is_user_turn_start
from regio.regions import events as ev
from regio.regions.base import Refusal
from regio.regions.conversation import SlidingWindow
from regio.regions.entrylist import EntryMark, appended_since, entry_mark

if TYPE_CHECKING:
    from regio.regions.base import Region, WritePlan, WriteResult
    from regio.tokens import TokenCounter

__all__ = [
    "DropPlan",
    "ProgressIndex",
    "admit_superseding",
    "drop_superseded_progress",
    "open_reports",
    "plan_drop",
]


def _superseded(block: object, calls: set[str]) -> bool:
    return isinstance(block, ToolResult) and not block.is_final and block.tool_use_id in calls


def _report_calls(entry: Entry) -> list[str]:
    return [b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult) and not b.is_final]


def open_reports(entries: Iterable[Entry]) -> dict[str, list[str]]:
    """The full scan: call id -> ids of the entries of ``entries`` holding a progress report
    (``final=False``) of that call, oldest first (O(entries))."""
    out: dict[str, list[str]] = {}
    for e in entries:
        for cid in _report_calls(e):
            ids = out.setdefault(cid, [])
            if not ids or ids[-1] != e.id:
                ids.append(e.id)
    return out


@attrs.define(eq=False)
class ProgressIndex:
    """Which entries of one region hold progress reports, per call id (see module docstring).

    State of the session that owns the region (the :class:`regio.regions.window.Window`); never
    saved: :meth:`sync` rebuilds it from the entries after a load. ``rebuilds`` counts the
    full scans. ``positions`` maps each entry id in ``reports`` to its index in the entry
    list (kept through appends and through the index's own removals)."""

    reports: dict[str, list[str]] = attrs.field(factory=dict)
    rebuilds: int = 0
    positions: dict[str, int] = attrs.field(factory=dict)
    _seen: EntryMark | None = None

    def sync(self, region: Region) -> dict[str, list[str]]:
        """Bring the index up to ``region``'s entries and return it: O(appended) after
        appends only (:func:`regio.regions.entrylist.appended_since`), else a full rebuild."""
        entries = region.entries
        start = appended_since(entries, self._seen)
        if start is not None and start == len(entries):
            return self.reports  # unchanged since the last look: the mark still holds
        if start is None:
            self.reports, self.positions, start = {}, {}, 0
            self.rebuilds += 1
        for at in range(start, len(entries)):
            e = entries[at]
            for cid in _report_calls(e):
                ids = self.reports.setdefault(cid, [])
                if not ids or ids[-1] != e.id:
                    ids.append(e.id)
                self.positions[e.id] = at
        self._seen = entry_mark(entries)
        return self.reports

    def _forget(self, region: Region, calls: set[str], keep: str, gone: Sequence[int]) -> None:
        """After :func:`drop_superseded_progress` removed the reports of ``calls`` except those
        of entry ``keep``, and the entries at positions ``gone`` (increasing): the index
        follows without a rescan (O(entries it holds))."""
        for cid in calls:
            ids = [i for i in self.reports.get(cid, ()) if i == keep]
            if ids:
                self.reports[cid] = ids
            else:
                self.reports.pop(cid, None)
        held = {i for ids in self.reports.values() for i in ids}
        self.positions = {
            i: at - bisect.bisect_left(gone, at) for i, at in self.positions.items() if i in held
        }
        self._seen = entry_mark(region.entries)


def _positions(region: Region, ids: set[str], index: ProgressIndex | None = None) -> list[int]:
    """Indexes (increasing) of the entries with ``ids``: from ``index``'s positions when each
    is checked to hold its entry (O(ids)), else by scanning from the newest (earlier reports
    of a running job are usually recent)."""
    entries = region.entries
    n = len(entries)
    if index is not None:
        hinted = {i: index.positions.get(i, -1) for i in ids}
        if all(0 <= at < n and entries[at].id == i for i, at in hinted.items()):
            return sorted(hinted.values())
    found: list[int] = []
    for at in range(n - 1, -1, -1):
        if entries[at].id in ids:
            found.append(at)
            if len(found) == len(ids):
                break
    return found[::-1]


@attrs.frozen
class DropPlan:
    """What :func:`drop_superseded_progress` would change in a region (computed without
    changing anything): ``rewrites`` (position, the entry without the superseded reports,
    recounted), ``gone`` (positions of the entries that held only superseded reports,
    increasing), ``touched`` (ids of both, in order) and ``freed`` (tokens)."""

    rewrites: tuple[tuple[int, Entry], ...]
    gone: tuple[int, ...]
    touched: tuple[str, ...]
    freed: int


def plan_drop(
    region: Region,
    entry: Entry,
    counter: TokenCounter | None,
    index: ProgressIndex | None = None,
) -> DropPlan | None:
    """The :class:`DropPlan` of the progress reports ``entry`` supersedes in ``region`` (see
    :func:`drop_superseded_progress`), or ``None`` when it supersedes nothing. With ``index``
    the earlier reports are looked up: O(entries touched) plus the scan from the newest entry
    back to the oldest of them; without, every entry is scanned."""
    calls = {b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult)}
    if not calls or not isinstance(region, SlidingWindow):
        return None
    positions: list[int]
    if index is None:
        positions = list(range(len(region.entries)))
    else:
        reports = index.sync(region)
        ids = {i for c in calls for i in reports.get(c, ()) if i != entry.id}
        if not ids:
            return None
        positions = _positions(region, ids, index)
    rewrites: list[tuple[int, Entry]] = []
    gone: list[int] = []
    touched: list[str] = []
    freed = 0
    for at in positions:
        old = region.entries[at]
        if old.id == entry.id or not any(_superseded(b, calls) for b in old.blocks):
            continue
        kept = tuple(b for b in old.blocks if not _superseded(b, calls))
        touched.append(old.id)
        if not kept:
            gone.append(at)
            freed += old.tokens
            continue
        slim = msgspec.structs.replace(old, blocks=kept)
        if counter is not None:
            tokens = int(counter.count_entry(slim))
        else:
            tokens = max(1, old.tokens * len(kept) // len(old.blocks))
        tokens = min(tokens, old.tokens)
        freed += old.tokens - tokens
        rewrites.append((at, msgspec.structs.replace(slim, tokens=tokens)))
    if not touched:
        return None
    return DropPlan(tuple(rewrites), tuple(gone), tuple(touched), freed)


def drop_superseded_progress(
    region: Region,
    entry: Entry,
    counter: TokenCounter | None,
    index: ProgressIndex | None = None,
) -> tuple[str, ...]:
    """Remove from ``region`` the progress reports that ``entry`` (just admitted) supersedes:
    every ``final=False`` result, in an earlier entry, of a call that ``entry`` holds a result
    for. A partly superseded entry is rewritten in place and recounted with ``counter`` (its
    tokens scaled by the blocks kept without one). Emits ``evicted`` (reason
    ``superseded_progress``) with the ids of the entries touched and the tokens freed; returns
    those ids (empty when nothing was superseded). With ``index`` (the region's
    :class:`ProgressIndex`) the earlier reports are looked up, not scanned for."""
    drop = plan_drop(region, entry, counter, index)
    if drop is None:
        return ()
    _apply(region, entry, drop, index)
    return drop.touched


def _apply(region: Region, entry: Entry, drop: DropPlan, index: ProgressIndex | None) -> None:
    """Carry out ``drop`` (planned by :func:`plan_drop` on ``region`` as it is now)."""
    assert isinstance(region, SlidingWindow)
    for at, slim in drop.rewrites:
        region.rewrite_entry(at, slim)
    if drop.gone:
        region.remove_ids([region.entries[at].id for at in drop.gone])
    region.events.emit(ev.Evicted(region.name, drop.touched, drop.freed, "superseded_progress"))
    if index is not None:
        calls = {b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult)}
        index._forget(region, calls, entry.id, drop.gone)


def _as_dropped(region: SlidingWindow, drop: DropPlan) -> SlidingWindow:
    """A planning copy of ``region`` as it would be after ``drop`` (nothing changes)."""
    entries = list(region.entries)
    for at, slim in drop.rewrites:
        entries[at] = slim
    for at in reversed(drop.gone):
        del entries[at]
    counts = region.history_counts()  # O(appended) on the live region
    trial = region.planning_copy(entries, region.used_tokens - drop.freed)
    # the dropped and rewritten entries hold superseded tool results only: no tool_use and
    # no turn start, so only the entry count and the first entry change (no recount)
    first = bool(entries) and is_user_turn_start(entries[0])
    # the copy's own mark (its new entry list), so its first history_counts() is O(1)
    trial._counts = (
        entry_mark(trial.entries),
        msgspec.structs.replace(counts, entries=len(entries), first_is_start=first),
    )
    return trial


class SupersedingWindow(Protocol):
    """What :func:`admit_superseding` reads of the window owning the region
    (:class:`regio.regions.Window`): its token counter, its progress indexes and its two-step
    write."""

    @property
    def counter(self) -> TokenCounter | None: ...

    def progress_index(self, region: str | Region) -> ProgressIndex: ...

    def plan_write(
        self, region: str | Region, entry: Entry, *, as_if: Region | None = None
    ) -> WritePlan | Refusal: ...

    def write_plan(
        self, region: str | Region, entry: Entry, plan: WritePlan | Refusal, *, strict: bool = False
    ) -> WriteResult | Refusal: ...


def admit_superseding(
    window: SupersedingWindow, region: Region, entry: Entry, *, strict: bool = False
) -> WriteResult | Refusal:
    """``window.write(region, entry, strict=strict)``, counting the progress reports that
    ``entry`` supersedes as freed: a newer report replacing one that fills the room (and that
    an open job's group keeps from eviction) is admitted. When the plain write would be
    refused and ``entry`` supersedes earlier reports, the write is planned again as if they
    were dropped (:func:`plan_drop`, then ``window.plan_write`` on a planning copy of the
    region: no event, nothing changes); only if that plan admits the write are the reports
    dropped and the entry written for real, else the plain refusal is emitted and returned
    (or raised with ``strict``: :class:`regio.errors.RegionFullError`) and nothing changed.
    ``window`` is the :class:`regio.regions.window.Window` owning ``region``. Beyond the
    plain plan, a refused report costs the reports' lookup and one more plan of the region:
    no copy of the window (measured in ``benchmarks/test_bench_superseding_refused.py``)."""
    plan = window.plan_write(region, entry)
    if isinstance(plan, Refusal) and isinstance(region, SlidingWindow):
        index = window.progress_index(region)
        drop = plan_drop(region, entry, window.counter, index)
        if drop is not None:
            trial = window.plan_write(region, entry, as_if=_as_dropped(region, drop))
            if not isinstance(trial, Refusal):
                _apply(region, entry, drop, index)
                plan = window.plan_write(region, entry)
    return window.write_plan(region, entry, plan, strict=strict)
