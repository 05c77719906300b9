"""Region kinds and the :class:`Window`.

Public names: :class:`Region` and its kinds (:class:`Pinned`, :class:`SlidingWindow`,
:class:`Compacting`, :class:`CompactHistory`, :class:`Keyed`, :class:`Temporary`,
:class:`Clearable`, :class:`Checklist`, :class:`Custom`), ``REGION_KINDS`` and
:func:`make_region`, :class:`Window`, :class:`Refusal`, :class:`WriteResult`,
:class:`PendingCompaction`, :class:`WindowState`, and the events in :mod:`regio.regions.events`.
"""

from __future__ import annotations

from regio.regions.base import Refusal, Region, Releasable, WritePlan, WriteResult
from regio.regions.compaction import CompactHistory, Compacting
from regio.regions.conversation import SlidingWindow
from regio.regions.custom import Custom
from regio.regions.keyed import Checklist, Keyed
from regio.regions.pending import CompactionQueue, PendingCompaction
from regio.regions.registry import KIND_ALIASES, REGION_KINDS, make_region
from regio.regions.simple import (
    PARKED_ADMITTED,
    PARKED_CALL,
    PARKED_STUB,
    Clearable,
    Pinned,
    Temporary,
    is_parked_stub,
    parked_for,
    parked_pointer,
)
from regio.regions.state import FinishGate, OpenItem, RegionState, WindowState
from regio.regions.window import Window

__all__ = [
    "KIND_ALIASES",
    "PARKED_ADMITTED",
    "PARKED_CALL",
    "PARKED_STUB",
    "REGION_KINDS",
    "Checklist",
    "Clearable",
    "CompactHistory",
    "Compacting",
    "CompactionQueue",
    "Custom",
    "FinishGate",
    "Keyed",
    "OpenItem",
    "PendingCompaction",
    "Pinned",
    "Refusal",
    "Region",
    "RegionState",
    "Releasable",
    "SlidingWindow",
    "Temporary",
    "Window",
    "WindowState",
    "WritePlan",
    "WriteResult",
    "is_parked_stub",
    "make_region",
    "parked_for",
    "parked_pointer",
]
