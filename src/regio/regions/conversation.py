"""``sliding_window``: the conversation as typed messages (DESIGN.md section 2).

Constructor (keyword-only)::

    SlidingWindow(name=, budget=, max_items: int | None = None,
                  eviction: "per_item" | {"bulk": {"overflow": N}} |
                            {"compact": {"compact_count": N}} = "per_item",
                  count_units: bool = False, admission="evict", volatility="rewritten",
                  description="")

``max_items`` counts entries (messages); with ``count_units=True`` it counts units (a whole
turn group is one item, the "extend back to the start of the group" reading of FC-07 a).
The token budget is a hard cap under every strategy; ``max_items`` is soft when only protected
units (current turn, open groups) are left (event ``region_over_budget``).
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from regio.content import Entry
from regio.errors import RegionConfigError
from regio.policies import EvictionStrategy, PerItem, analyze, parse_eviction
from regio.regions import events as ev
from regio.regions.base import Refusal, Region, WritePlan

__all__ = ["SlidingWindow"]


@attrs.define(eq=False, kw_only=True)
class SlidingWindow(Region):
    """The conversation. Never reclaimed by the window; rolls off whole turn groups by its
    eviction strategy; ``compact`` marks oldest items in the window's pending queue."""

    kind: ClassVar[str] = "sliding_window"

    max_items: int | None = None
    eviction: EvictionStrategy = attrs.field(factory=PerItem, converter=parse_eviction)
    count_units: bool = False
    compact_target: str | None = attrs.field(default=None, init=False)
    """Name of the paired ``compact_history`` (set by the window)."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.max_items is not None and self.max_items < 1:
            raise RegionConfigError(
                f"region {self.name!r}: max_items must be >= 1, got {self.max_items}"
            )

    @property
    def is_conversation(self) -> bool:
        """Always true: entries are messages with roles."""
        return True

    def item_count(self, entries: list[Entry] | None = None) -> int:
        """Items as ``max_items`` counts them (entries, or units with ``count_units``)."""
        entries = self.entries if entries is None else entries
        if not self.count_units:
            return len(entries)
        return analyze(entries).units_from[0] if entries else 0

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        count = (
            self.item_count([*self.entries, entry]) if self.count_units else len(self.entries) + 1
        )
        decision = self.eviction.decide(count, self.max_items, bool(self.pending()))
        return self.plan_rolloff(
            entry,
            keep_items=decision.keep_items,
            count_units=self.count_units,
            fallback=decision.fallback,
        )

    def _after_write(self) -> None:
        decision = self.eviction.decide(self.item_count(), self.max_items, bool(self.pending()))
        if decision.mark_items:
            self.mark_oldest(decision.mark_items, reason="compact_count")

    def mark_oldest(self, items: int, *, reason: str) -> None:
        """Queue the oldest ``items`` items (extended to a unit boundary, never protected ones)
        as one :class:`PendingCompaction` targeting the paired ``compact_history``."""
        info = self.analysis()
        caps = (
            {"max_units": info.units_from[0] - items}
            if self.count_units
            else {"max_entries": len(self.entries) - items}
        )
        k = info.smallest_cut(**caps)
        if k is None:
            k = info.largest_cut()
        if k == 0:
            self.events.emit(
                ev.RegionOverBudget(
                    self.name,
                    len(self.entries),
                    self.max_items or 0,
                    "nothing compactable (protected)",
                )
            )
            return
        marked = self.entries[:k]
        p = self.queue.add(
            region=self.name,
            entry_ids=[e.id for e in marked],
            target=self.compact_target,
            reason=reason,
            tokens=sum(e.tokens for e in marked),
        )
        self.events.emit(
            ev.CompactionQueued(
                p.id, self.name, p.target, p.entry_ids, p.tokens, reason, p.operation
            )
        )
