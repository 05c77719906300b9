"""The pending-compaction queue: the single source of truth for "marked for compaction".

Regions put :class:`PendingCompaction` items here; the runtime reads them with
``Window.pending_compactions()`` and answers each with ``Window.complete_compaction`` or
``Window.fail_compaction``. A region never keeps a private "pending" flag: whether an entry is
marked is always answered by this queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import attrs
import msgspec

__all__ = ["CompactionQueue", "PendingCompaction"]


class PendingCompaction(msgspec.Struct, frozen=True):
    """One unit of compaction work for the runtime.

    * ``id``: ``pc-<n>``, unique in the window;
    * ``region``: the region whose entries are to be summarized;
    * ``entry_ids``: exactly the entries the summary replaces (whole units, oldest first);
    * ``target``: the ``compact_history`` region that receives the summary (for a ``merge``,
      the history region itself);
    * ``reason``: ``compact_count`` | ``threshold`` | ``reclaim`` | ``history_over_budget`` |
      ``manual``;
    * ``tokens``: tokens of those entries;
    * ``operation``: ``compact`` (entries -> one summary in ``target``) or ``merge`` (oldest
      summaries of a ``compact_history`` -> one summary in their place);
    * ``attempts``: failed attempts so far (see ``Window.fail_compaction``).
    """

    id: str
    region: str
    entry_ids: tuple[str, ...]
    target: str | None
    reason: str
    tokens: int
    operation: Literal["compact", "merge"] = "compact"
    attempts: int = 0


@attrs.define
class CompactionQueue:
    """Ordered pending compactions (oldest first) with id allocation."""

    items: dict[str, PendingCompaction] = attrs.field(factory=dict)
    next_seq: int = 1

    def add(
        self,
        *,
        region: str,
        entry_ids: Iterable[str],
        target: str | None,
        reason: str,
        tokens: int,
        operation: Literal["compact", "merge"] = "compact",
    ) -> PendingCompaction:
        """Queue a new item and return it."""
        item = PendingCompaction(
            id=f"pc-{self.next_seq}",
            region=region,
            entry_ids=tuple(entry_ids),
            target=target,
            reason=reason,
            tokens=tokens,
            operation=operation,
        )
        self.next_seq += 1
        self.items[item.id] = item
        return item

    def get(self, pending_id: str) -> PendingCompaction | None:
        """The item with ``pending_id`` or None."""
        return self.items.get(pending_id)

    def put(self, item: PendingCompaction) -> None:
        """Replace (or restore) an item under its id, keeping queue order for known ids."""
        self.items[item.id] = item

    def remove(self, pending_id: str) -> PendingCompaction | None:
        """Take an item out of the queue."""
        return self.items.pop(pending_id, None)

    def all(self) -> list[PendingCompaction]:
        """Every item, oldest first."""
        return list(self.items.values())

    def for_region(self, region: str) -> list[PendingCompaction]:
        """Items whose entries belong to ``region``."""
        return [p for p in self.items.values() if p.region == region]

    def touching(self, region: str, entry_ids: Iterable[str]) -> list[PendingCompaction]:
        """Items of ``region`` that cover any of ``entry_ids``."""
        ids = set(entry_ids)
        return [p for p in self.for_region(region) if ids.intersection(p.entry_ids)]
