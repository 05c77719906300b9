"""How entries leave regions: a region's own removals and the window's reclaim cascade.

:class:`Removing` (mixed into :class:`regio.regions.Region`) holds the removals of one region:
``release`` (by key, index or the oldest units), ``trim`` (to a token cap and history window),
``clear``, ``evict``, each emitting its event and settling the pending compactions that marked
the removed entries. :func:`reclaim` is the window's cascade over its regions' removals when
the window is above its high-water mark (:meth:`regio.regions.Window.reclaim`). Protected
units (the newest user message, an open tool-call group) never go.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from regio.content import Entry
from regio.errors import EntryIndexError, ProtectedEntryError, RegionConfigError, UnknownKeyError
from regio.events import EventBus, transactional
from regio.policies import HistoryCaps, ReclaimPhase, UnitAnalysis
from regio.regions import events as ev
from regio.regions.pending import CompactionQueue

__all__ = ["Removing", "reclaim", "reclaimable"]


class _Holder(Protocol):
    """What :class:`Removing` reads of its region."""

    name: str
    entries: Any
    events: EventBus
    queue: CompactionQueue
    _used: int

    @property
    def budget(self) -> int: ...

    @property
    def used_tokens(self) -> int: ...

    def analysis(self) -> UnitAnalysis: ...

    def _changed(self) -> None: ...

    def remove_ids(self, ids: Iterable[str]) -> list[Entry]: ...

    def _drop_pending(self, ids: Iterable[str], *, fallback: bool, reason: str) -> None: ...

    def _remove_and_emit(
        self, ids: list[str], event: Callable[[list[Entry]], Any], *, fallback: bool, reason: str
    ) -> list[Entry]: ...


class Removing:
    """The removals of a region (mixed into :class:`regio.regions.Region`)."""

    def evict(self: _Holder, ids: Iterable[str], reason: str) -> list[Entry]:
        """Remove ``ids`` and emit ``evicted`` (``reason``); returns the removed entries."""
        removed = self.remove_ids(ids)
        self.events.emit(
            ev.Evicted(
                self.name, tuple(e.id for e in removed), sum(e.tokens for e in removed), reason
            )
        )
        return removed

    def remove_ids(self: _Holder, ids: Iterable[str]) -> list[Entry]:
        """Remove the entries with ``ids`` (no events, no pending handling); returns them."""
        gone = set(ids)
        removed = [e for e in self.entries if e.id in gone]
        if removed:
            self.entries = [e for e in self.entries if e.id not in gone]
            self._used -= sum(e.tokens for e in removed)
            self._changed()
        return removed

    def _drop_pending(self: _Holder, ids: Iterable[str], *, fallback: bool, reason: str) -> None:
        for p in self.queue.touching(self.name, ids):
            self.queue.remove(p.id)
            if fallback:
                self.events.emit(ev.CompactionFallback(p.id, self.name, p.entry_ids, reason))
            else:
                self.events.emit(ev.CompactionFailed(p.id, self.name, reason, True))

    @transactional
    def release(
        self: _Holder,
        *,
        key: str | None = None,
        index: int | None = None,
        oldest: int | None = None,
    ) -> list[Entry]:
        """Release by ``key``, by ``index`` (the whole unit of that entry) or the ``oldest`` N
        units of the removal order (protected units are skipped). Returns the removed entries.
        Raises :class:`ProtectedEntryError` for a protected unit (the newest user message or an
        open tool-call group), ``KeyError`` for an unknown key and ``IndexError`` for a bad
        index."""
        given = [x is not None for x in (key, index, oldest)]
        if sum(given) != 1:
            raise RegionConfigError("release needs exactly one of key=, index= or oldest=")
        info = self.analysis()
        if oldest is not None:
            if oldest < 0:
                raise RegionConfigError(f"release(oldest=N) needs N >= 0, got {oldest}")
            ids = [self.entries[i].id for i in info.removal(min(oldest, info.removable_count))]
        else:
            if key is not None:
                matches = [i for i, e in enumerate(self.entries) if e.key == key]
                if not matches:
                    known = ", ".join(sorted(e.key for e in self.entries if e.key)) or "none"
                    raise UnknownKeyError(
                        f"region {self.name!r} has no key {key!r} (keys: {known})"
                    )
                index = matches[0]
            assert index is not None
            n = len(self.entries)
            if not -n <= index < n:
                raise EntryIndexError(f"region {self.name!r} has {n} entries; index {index} is out")
            index %= n
            unit = info.unit_of[index]
            if info.protected[unit]:
                raise ProtectedEntryError(
                    f"entry {self.entries[index].id!r} of region {self.name!r} is the newest "
                    "user message or in an open tool-call group and cannot be released"
                )
            ids = [self.entries[i].id for i in info.units[unit]]
        removed = self.remove_ids(ids)
        if removed:
            self.events.emit(
                ev.Released(self.name, tuple(e.id for e in removed), sum(e.tokens for e in removed))
            )
            self._drop_pending(ids, fallback=False, reason="entries released")
        return removed

    @transactional
    def trim(
        self: _Holder,
        *,
        max_tokens: int | None = None,
        max_items: int | None = None,
        max_units: int | None = None,
        max_turns: int | None = None,
        max_tool_calls: int | None = None,
    ) -> list[Entry]:
        """Evict so the region fits ``max_tokens`` (default: its budget) and the history window
        of ``max_items`` entries / ``max_units`` units / ``max_turns`` earlier turns /
        ``max_tool_calls`` earlier calls (:class:`regio.policies.HistoryCaps`). History windows
        cut before the current turn only; the token cap removes the fewest units of the removal
        order. Protected units are never evicted, so the result may stay above a cap (event
        ``region_over_budget``). Returns the evicted entries."""
        cap = self.budget if max_tokens is None else max_tokens
        info = self.analysis()
        caps = HistoryCaps(max_items, max_units, max_turns, max_tool_calls)
        cut, met = info.history_cut(caps)
        j_hist = info.units_before(cut)
        j = info.fewest_removals(max_tokens=cap, min_removals=j_hist)
        over = j is None or not met
        if j is None:
            j = info.removable_count
        ids = [self.entries[i].id for i in info.removal(j)]
        removed = self._remove_and_emit(
            ids,
            lambda gone: ev.Evicted(self.name, tuple(ids), sum(e.tokens for e in gone), "trim"),
            fallback=True,
            reason="entries evicted (trim)",
        )
        if over:
            self.events.emit(ev.RegionOverBudget(self.name, self.used_tokens, cap, "protected"))
        return removed

    @transactional
    def clear(self: _Holder) -> list[Entry]:
        """Remove every unit that is not protected; returns the removed entries."""
        info = self.analysis()
        ids = [self.entries[i].id for i in info.removal(info.removable_count)]
        return self._remove_and_emit(
            ids,
            lambda gone: ev.Cleared(
                self.name, tuple(e.id for e in gone), sum(e.tokens for e in gone)
            ),
            fallback=False,
            reason="region cleared",
        )

    def _remove_and_emit(
        self: _Holder,
        ids: list[str],
        event: Callable[[list[Entry]], Any],
        *,
        fallback: bool,
        reason: str,
    ) -> list[Entry]:
        """Remove ``ids``; when any went, emit ``event(removed)`` and settle the pending
        compactions that marked them (``fallback``, ``reason``: see :meth:`_drop_pending`)."""
        removed = self.remove_ids(ids)
        if removed:
            self.events.emit(event(removed))
            self._drop_pending(ids, fallback=fallback, reason=reason)
        return removed


class _Named(Protocol):
    """A region as :func:`_reclaimed` reads it: its name."""

    @property
    def name(self) -> str: ...


class _Reclaiming(Protocol):
    """What :func:`reclaim` reads of the window."""

    events: EventBus
    queue: CompactionQueue
    max_tokens: int

    @property
    def regions(self) -> Sequence[Any]: ...

    @property
    def used_tokens(self) -> int: ...

    @property
    def high_water_tokens(self) -> int: ...


def reclaimable(window: _Reclaiming, exclude: object = None) -> int:
    """Tokens the cascade's first two phases could take (wipe and oldest-first regions under
    ``evict``), leaving out ``exclude``."""
    return sum(
        r.used_tokens
        for r in window.regions
        if r is not exclude
        and r.admission == "evict"
        and r.reclaim_phase in (ReclaimPhase.WIPE, ReclaimPhase.OLDEST)
    )


def reclaim(window: _Reclaiming, *, keep: str | None = None) -> int:
    """Run the reclaim cascade if the window is above its high-water mark; returns tokens
    freed. Phases: 1 wipe ``clearable``; 1.5 custom ``on_overflow``;
    2 ``temporary`` oldest unit first, round-robin; 3 queue ``compacting`` regions. Never
    touches ``sliding_window``, ``pinned``, ``compact_history``, ``keyed``, ``checklist`` or
    ``reject`` regions. ``keep``: an entry id never reclaimed (the one just written)."""
    mark = window.high_water_tokens
    before = window.used_tokens
    if before <= mark:
        return 0
    evictable = [r for r in window.regions if r.admission == "evict"]
    for r in evictable:
        if window.used_tokens <= mark:
            break
        wipe = r.reclaim_phase == ReclaimPhase.WIPE
        if wipe and r.entries and all(e.id != keep for e in r.entries):
            _reclaimed(window, r, ReclaimPhase.WIPE, r.clear())
    for r in evictable:
        if window.used_tokens <= mark:
            break
        if r.reclaim_phase == ReclaimPhase.HOOK:
            ids = [i for i in r.overflow_ids(window.used_tokens - mark) if i != keep]
            _reclaimed(window, r, ReclaimPhase.HOOK, r.remove_ids(ids))
    temps = [r for r in evictable if r.reclaim_phase == ReclaimPhase.OLDEST]
    order: dict[str, list[list[str]]] = {}
    for r in temps:
        info = r.analysis()
        order[r.name] = [[r.entries[i].id for i in info.units[u]] for u in info.removable]
    progress = True
    while window.used_tokens > mark and progress:
        progress = False
        for r in temps:
            if window.used_tokens <= mark:
                break
            units = order[r.name]
            while units and keep in units[0]:
                units.pop(0)
            if not units:
                continue
            ids = units.pop(0)
            _reclaimed(window, r, ReclaimPhase.OLDEST, r.remove_ids(ids))
            progress = True
    if window.used_tokens > mark:
        for r in evictable:
            if r.reclaim_phase == ReclaimPhase.QUEUE:
                p = r.request_compaction(reason="reclaim")
                if p is not None:
                    window.events.emit(
                        ev.Reclaimed(
                            r.name,
                            str(ReclaimPhase.QUEUE),
                            p.entry_ids,
                            p.tokens,
                            window.used_tokens,
                            mark,
                        )
                    )
    if window.used_tokens > window.max_tokens:
        window.events.emit(
            ev.RegionOverBudget(
                "<window>", window.used_tokens, window.max_tokens, "nothing reclaimable left"
            )
        )
    return before - window.used_tokens


def _reclaimed(window: _Reclaiming, r: _Named, phase: ReclaimPhase, removed: list[Entry]) -> None:
    if not removed:
        return
    ids = tuple(e.id for e in removed)
    for p in window.queue.touching(r.name, ids):
        window.queue.remove(p.id)
        window.events.emit(ev.CompactionFailed(p.id, r.name, "entries reclaimed", True))
    window.events.emit(
        ev.Reclaimed(
            r.name,
            str(phase),
            ids,
            sum(e.tokens for e in removed),
            window.used_tokens,
            window.high_water_tokens,
        )
    )
