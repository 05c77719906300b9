"""Saved state of a window (msgspec; the runtime persists it as JSON or msgpack)."""

from __future__ import annotations

from typing import Any

import msgspec

from regio.content import Entry
from regio.regions.pending import PendingCompaction

__all__ = ["FinishGate", "OpenItem", "RegionState", "WindowState"]


class RegionState(msgspec.Struct):
    """One region: ``kind``, constructor ``options``, ``entries``, ``version`` and kind-specific
    counters in ``extra`` (keyed LRU stamps, checklist next id)."""

    kind: str
    name: str
    options: dict[str, Any]
    entries: list[Entry]
    version: int
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


class WindowState(msgspec.Struct):
    """A whole window, losslessly: regions, the pending-compaction queue and the counters
    (next entry id, next pending id, turn, call id -> group id)."""

    max_tokens: int
    high_water: float
    regions: list[RegionState]
    pending: list[PendingCompaction]
    next_entry: int
    next_pending: int
    turn: int
    call_groups: dict[str, str] = msgspec.field(default_factory=dict)
    format: int = 1


class OpenItem(msgspec.Struct, frozen=True):
    """An open checklist item: region, item id, text."""

    region: str
    item_id: str
    text: str


class FinishGate(msgspec.Struct, frozen=True):
    """Answer of ``Window.finish_gate()``: ``blocked`` when a checklist with ``gate: true`` still
    has open items (listed in ``open_items``)."""

    blocked: bool
    open_items: tuple[OpenItem, ...] = ()
