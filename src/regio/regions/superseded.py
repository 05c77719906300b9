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
entries holding them. It follows appends in O(appended) and is rebuilt (O(entries)) only after
another change of the entry list (compaction, eviction, release, a rewrite, a loaded state),
each of which already cost O(entries); a write that supersedes nothing costs O(1) amortised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.content import Entry, ToolResult
from regio.regions import events as ev
from regio.regions.base import Refusal
from regio.regions.conversation import SlidingWindow
from regio.regions.entrylist import EntryMark, appended_since, entry_mark

if TYPE_CHECKING:
    from regio.regions.base import Region, WriteResult
    from regio.tokens import TokenCounter

__all__ = ["ProgressIndex", "admit_superseding", "drop_superseded_progress", "open_reports"]


def _superseded(block: object, calls: set[str]) -> bool:
    return isinstance(block, ToolResult) and not block.is_final and block.tool_use_id in calls


def _report_calls(entry: Entry) -> list[str]:
    return [b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult) and not b.is_final]


def open_reports(entries: Any) -> dict[str, list[str]]:
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
    full scans."""

    reports: dict[str, list[str]] = attrs.field(factory=dict)
    rebuilds: int = 0
    _seen: EntryMark | None = None

    def sync(self, region: Region) -> dict[str, list[str]]:
        """Bring the index up to ``region``'s entries and return it: O(appended) after
        appends only (:func:`regio.regions.entrylist.appended_since`), else a full rebuild."""
        entries = region.entries
        start = appended_since(entries, self._seen)
        if start is None:
            self.reports, start = {}, 0
            self.rebuilds += 1
        for e in entries[start:]:
            for cid in _report_calls(e):
                ids = self.reports.setdefault(cid, [])
                if not ids or ids[-1] != e.id:
                    ids.append(e.id)
        self._seen = entry_mark(entries)
        return self.reports

    def _forget(self, region: Region, calls: set[str], keep: str) -> None:
        """After :func:`drop_superseded_progress` removed the reports of ``calls`` except those
        of entry ``keep``: the index follows without a rescan."""
        for cid in calls:
            ids = [i for i in self.reports.get(cid, ()) if i == keep]
            if ids:
                self.reports[cid] = ids
            else:
                self.reports.pop(cid, None)
        self._seen = entry_mark(region.entries)


def _positions(region: Region, ids: set[str]) -> list[int]:
    """Indexes of the entries with ``ids``, scanning from the newest (earlier reports of a
    running job are usually recent)."""
    found: list[int] = []
    entries = region.entries
    for index in range(len(entries) - 1, -1, -1):
        if entries[index].id in ids:
            found.append(index)
            if len(found) == len(ids):
                break
    return found[::-1]


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
    calls = {b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult)}
    if not calls or not isinstance(region, SlidingWindow):
        return ()
    positions: list[int]
    if index is None:
        positions = list(range(len(region.entries)))
    else:
        reports = index.sync(region)
        ids = {i for c in calls for i in reports.get(c, ()) if i != entry.id}
        if not ids:
            return ()
        positions = _positions(region, ids)
    touched = _drop(region, entry, calls, counter, positions)
    if index is not None:
        index._forget(region, calls, entry.id)
    return touched


def _drop(
    region: SlidingWindow,
    entry: Entry,
    calls: set[str],
    counter: TokenCounter | None,
    positions: list[int],
) -> tuple[str, ...]:
    gone: list[str] = []
    touched: list[str] = []
    freed = 0
    for index in positions:
        old = region.entries[index]
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


def admit_superseding(
    window: Any, region: Region, entry: Entry, *, strict: bool = False
) -> WriteResult | Refusal:
    """``window.write(region, entry, strict=strict)``, counting the progress reports that
    ``entry`` supersedes as freed: a newer report replacing one that fills the room (and that
    an open job's group keeps from eviction) is admitted. When the plain write would be
    refused and ``entry`` supersedes earlier reports, the drop and the write are first played
    on a throw-away copy of the window (its own event bus, so nothing is emitted); only if the
    copy admits the write are the reports dropped and the entry written for real, else the
    plain refusal is returned (or raised with ``strict``:
    :class:`regio.errors.RegionFullError`) and nothing changed. ``window`` is the
    :class:`regio.regions.window.Window` owning ``region``; the copy costs O(window) and is
    made only on that refused path."""
    calls = {b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult)}
    if calls and isinstance(window.plan_write(region, entry), Refusal):
        reports = window.progress_index(region).sync(region)
        if any(i != entry.id for c in calls for i in reports.get(c, ())):
            trial = type(window).from_state(window.snapshot_state(), counter=window.counter)
            copy = trial.region(region.name)
            drop_superseded_progress(copy, entry, trial.counter, trial.progress_index(copy))
            if not isinstance(trial.plan_write(copy, entry), Refusal):
                drop_superseded_progress(
                    region, entry, window.counter, window.progress_index(region)
                )
    return window.write(region, entry, strict=strict)
