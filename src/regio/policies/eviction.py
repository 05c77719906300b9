"""Eviction strategies of ``sliding_window`` regions.

* ``per_item``: while over ``max_items`` (or tokens), drop the oldest unit.
* ``bulk{overflow}``: nothing happens until ``max_items + overflow`` items, then drop back to
  ``max_items``; between bulk events the conversation prefix holds still.
* ``compact{compact_count}``: over ``max_items + compact_count`` the oldest ``compact_count``
  items are marked pending compaction (a :class:`regio.regions.PendingCompaction` in the
  window's queue); if the runtime has not flushed them by ``max_items + 2*compact_count``,
  fall back to bulk eviction back to ``max_items`` (event ``compaction_fallback``).

A strategy only decides *how many items* to keep; the region turns that into a cut at a unit
boundary (:mod:`regio.policies.units`). Tokens (:mod:`regio.policies.hysteresis`): ``bulk``
and ``compact`` carry a token ``trigger`` and ``target`` (tokens or ``"N%"`` of the region
budget). Past the trigger ``compact`` queues a compaction down to the target and ``bulk``
evicts down to the target in one step; ``per_item`` drops the fewest oldest units that make a
write fit, on every write that needs it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from regio.errors import RegionConfigError
from regio.policies.hysteresis import Mark, check_mark

__all__ = ["Bulk", "Compact", "EvictionDecision", "EvictionStrategy", "PerItem", "parse_eviction"]


class EvictionDecision(msgspec.Struct, frozen=True):
    """What a strategy wants for ``count`` items.

    ``keep_items``: cut back to at most this many items (None = no item-driven eviction);
    ``mark_items``: queue this many oldest items for compaction (None = no mark);
    ``fallback``: the eviction is the compaction fallback.
    """

    keep_items: int | None = None
    mark_items: int | None = None
    fallback: bool = False


class PerItem(msgspec.Struct, frozen=True, tag="per_item", tag_field="name"):
    """Drop the oldest unit while over ``max_items``."""

    def decide(self, count: int, max_items: int | None, pending: bool) -> EvictionDecision:
        """Decision for ``count`` items (``pending``: a compaction of the region is queued)."""
        if max_items is not None and count > max_items:
            return EvictionDecision(keep_items=max_items)
        return EvictionDecision()


class Bulk(msgspec.Struct, frozen=True, tag="bulk", tag_field="name"):
    """Hold still until ``max_items + overflow`` items, then drop back to ``max_items``."""

    overflow: int = 10
    #: Token high-water mark: a write that would pass it evicts down to ``target``;
    #: ``None``: the region budget.
    trigger: Mark | None = None
    #: Token low-water target of a bulk eviction; ``None``: the cost-derived default.
    target: Mark | None = None

    def __post_init__(self) -> None:
        if self.overflow < 1:
            raise RegionConfigError(f"bulk eviction: overflow must be >= 1, got {self.overflow}")
        check_mark(self.trigger, "bulk eviction: trigger")
        check_mark(self.target, "bulk eviction: target")

    def decide(self, count: int, max_items: int | None, pending: bool) -> EvictionDecision:
        """Decision for ``count`` items."""
        if max_items is not None and count > max_items + self.overflow:
            return EvictionDecision(keep_items=max_items)
        return EvictionDecision()


class Compact(msgspec.Struct, frozen=True, tag="compact", tag_field="name"):
    """Mark the oldest ``compact_count`` items for compaction; bulk fallback if not flushed."""

    compact_count: int = 10
    #: Token high-water mark: at or over it a compaction down to ``target`` is queued;
    #: ``None``: 90% of the region budget.
    trigger: Mark | None = None
    #: Token low-water target of that compaction; ``None``: the cost-derived default.
    target: Mark | None = None

    def __post_init__(self) -> None:
        if self.compact_count < 1:
            raise RegionConfigError(
                f"compact eviction: compact_count must be >= 1, got {self.compact_count}"
            )
        check_mark(self.trigger, "compact eviction: trigger")
        check_mark(self.target, "compact eviction: target")

    def decide(self, count: int, max_items: int | None, pending: bool) -> EvictionDecision:
        """Decision for ``count`` items."""
        if max_items is None:
            return EvictionDecision()
        if count > max_items + 2 * self.compact_count:
            return EvictionDecision(keep_items=max_items, fallback=pending)
        if count > max_items + self.compact_count and not pending:
            return EvictionDecision(mark_items=self.compact_count)
        return EvictionDecision()


EvictionStrategy = PerItem | Bulk | Compact
StrategyName = Literal["per_item", "bulk", "compact"]


def parse_eviction(value: object) -> EvictionStrategy:
    """Build a strategy from ``"per_item"``, ``"bulk"``, ``{"bulk": {"overflow": 20}}``,
    ``{"name": "compact", "compact_count": 8}`` or an existing strategy.

    Raises :class:`RegionConfigError` naming the accepted forms.
    """
    if isinstance(value, PerItem | Bulk | Compact):
        return value
    try:
        if isinstance(value, str):
            return msgspec.convert({"name": value}, EvictionStrategy)
        if isinstance(value, dict):
            if "name" in value:
                return msgspec.convert(value, EvictionStrategy)
            if len(value) == 1:
                ((name, opts),) = value.items()
                return msgspec.convert({"name": name, **(opts or {})}, EvictionStrategy)
    except msgspec.ValidationError as exc:
        raise RegionConfigError(
            f"eviction {value!r}: {exc}; use 'per_item', {{'bulk': {{'overflow': N}}}} or "
            "{'compact': {'compact_count': N}}"
        ) from exc
    raise RegionConfigError(
        f"eviction {value!r} is not a strategy; use 'per_item', {{'bulk': {{'overflow': N}}}} "
        "or {'compact': {'compact_count': N}}"
    )
