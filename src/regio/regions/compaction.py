"""``compacting`` and ``compact_history`` regions.

Constructors (keyword-only)::

    Compacting(name=, budget=, compact_at: float | None = 0.8,
               threshold_tokens: int | None = None, admission="evict", ...)
    CompactHistory(name=, budget=, source: str, admission="evict", volatility="grows", ...)

A ``compact_history`` also holds its source's durable items, in one entry after the summaries
(:data:`ITEMS_META`; written by the runtime at each compaction, ``regio.compaction._durable``).

A ``compacting`` region over ``compact_at * budget`` (or over ``threshold_tokens``) queues its
whole compactable content (complete units only: never the newest user message nor an open
group; completed groups after the newest user message are compactable) as one
:class:`PendingCompaction` for its paired ``compact_history`` (the one whose ``source`` names
it). A ``compact_history`` over budget queues a ``merge`` of its oldest
summaries (never drops them); until the merge completes it may stay over budget (event
``region_over_budget``).

A ``compact_history`` defaults to ``volatility="grows"``, the one exception to the
``rewritten`` default. It holds summaries, append-only, and
the layout gives it its slot right before the conversation: a
summary stands for turns older than the conversation, so it must come before them, and the
request must end with the current question after the summary. A ``rewritten`` history
would go to the tail, after the question. Its prefix changes only when a compaction commits
(a merge of its oldest summaries, or a rolling summary with ``supersedes``), and a compaction
rewrites the conversation prefix anyway, so the cache loses nothing extra.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from regio.content import Entry
from regio.errors import RegionConfigError
from regio.regions import events as ev
from regio.regions.base import ReclaimPhase, Refusal, Region, WritePlan
from regio.regions.pending import PendingCompaction
from regio.regions.settle import settle_marks

__all__ = ["ITEMS_META", "CompactHistory", "Compacting"]

#: The ``meta`` key of a ``compact_history``'s item section: one entry, always the last, whose
#: ``meta[ITEMS_META]`` lists the durable items it renders (``regio.compaction._durable``).
ITEMS_META = "durable_items"


@attrs.define(eq=False, kw_only=True)
class Compacting(Region):
    """Working notes (or history) that may be summarized; window reclaim phase 3."""

    kind: ClassVar[str] = "compacting"
    reclaim_phase: ClassVar[ReclaimPhase | None] = ReclaimPhase.QUEUE
    agent_writable: ClassVar[bool] = True
    compaction_order: ClassVar[int | None] = 0
    summarizes_before_rolloff: ClassVar[bool] = True

    compact_at: float | None = 0.8
    threshold_tokens: int | None = None

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.compact_at is not None and not 0 < self.compact_at <= 1:
            raise RegionConfigError(
                f"region {self.name!r}: compact_at is a fraction of the budget in (0, 1], "
                f"got {self.compact_at}"
            )
        if self.threshold_tokens is not None and self.threshold_tokens < 1:
            raise RegionConfigError(
                f"region {self.name!r}: threshold_tokens must be >= 1, got {self.threshold_tokens}"
            )

    @property
    def trigger_tokens(self) -> int | None:
        """The smallest trigger in tokens (``compact_at * budget`` or ``threshold_tokens``)."""
        triggers = []
        if self.compact_at is not None:
            triggers.append(int(self.compact_at * self.budget))
        if self.threshold_tokens is not None:
            triggers.append(self.threshold_tokens)
        return min(triggers) if triggers else None

    @property
    def over_threshold(self) -> bool:
        """True when used tokens pass the trigger."""
        trigger = self.trigger_tokens
        return trigger is not None and self.used_tokens > trigger

    def _after_write(self) -> None:
        settle_marks(self)
        if self.over_threshold and not self.pending():
            self.request_compaction(reason="threshold")

    @property
    def needs_history(self) -> bool:
        """Always true: a compacting region's summaries go to its ``compact_history``."""
        return True

    def request_compaction(self, *, reason: str = "manual") -> PendingCompaction | None:
        """Queue the whole compactable content: every unit of the removal order (all but the
        newest user message and open groups; :mod:`regio.policies.units`).

        Returns the queued item, or None when nothing is compactable or an item is already
        pending for this region (one at a time, so no entry is ever summarized twice).
        """
        if self.pending():
            return None
        info = self.analysis()
        if info.removable_count == 0:
            return None
        marked = [self.entries[i] for i in info.removal(info.removable_count)]
        return self.queue_compaction(marked, reason)


@attrs.define(eq=False, kw_only=True)
class CompactHistory(Region):
    """Summaries, append-only. Never rolls off, never reclaimed; over budget its oldest
    summaries are queued to be merged into one (``operation="merge"``)."""

    kind: ClassVar[str] = "compact_history"
    never_shrinks_kind: ClassVar[bool] = True
    agent_releasable: ClassVar[bool] = False
    kind_rank: ClassVar[int] = 0
    holds_summaries: ClassVar[bool] = True

    source: str | None = None
    volatility: str = attrs.field(
        default="grows", validator=attrs.validators.in_(("stable", "grows", "rewritten"))
    )

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        if self.admission == "reject" and self.used_tokens + entry.tokens > self.budget:
            return self.refusal(entry, "region_full")
        return WritePlan(entry)

    def _after_write(self) -> None:
        self.check_merge()

    def summaries(self) -> list[Entry]:
        """The summaries, oldest first (the item section left out)."""
        return [e for e in self.entries if ITEMS_META not in e.meta]

    def item_entry(self) -> Entry | None:
        """The item section, if there is one."""
        for entry in reversed(self.entries):
            if ITEMS_META in entry.meta:
                return entry
        return None

    def queue_merge(self, entries: list[Entry], reason: str) -> PendingCompaction:
        """Queue a merge of ``entries`` (summaries of this history) into one; returns it."""
        return self.queue.add(
            region=self.name,
            entry_ids=[e.id for e in entries],
            target=self.name,
            reason=reason,
            tokens=sum(e.tokens for e in entries),
            operation="merge",
        )

    def check_merge(self) -> PendingCompaction | None:
        """Queue a merge of the oldest summaries when over budget and none is pending (the
        item section is never merged: past the last merge its lowest-priority items are
        dropped instead, by the runtime)."""
        over = self.used_tokens - self.budget
        if over <= 0 or self.pending():
            return None
        taken: list[Entry] = []
        for e in self.summaries():
            taken.append(e)
            if len(taken) >= 2 and sum(t.tokens for t in taken) > over:
                break
        if len(taken) < 2:
            self.events.emit(
                ev.RegionOverBudget(
                    self.name, self.used_tokens, self.budget, "one summary left; nothing to merge"
                )
            )
            return None
        p = self.queue_merge(taken, "history_over_budget")
        self.events.emit(
            ev.CompactionQueued(
                p.id, self.name, p.target, p.entry_ids, p.tokens, p.reason, p.operation
            )
        )
        self.events.emit(
            ev.RegionOverBudget(
                self.name, self.used_tokens, self.budget, "waiting for merge compaction"
            )
        )
        return p
