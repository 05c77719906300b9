"""The phases of the window's reclaim cascade (when the window passes its high-water mark).

A region kind names the phase that takes tokens from it (``Region.reclaim_phase``); kinds with
none are never reclaimed. The order is the cascade's: wiping scratch loses the least, asking a
custom hook lets its author decide, raw tool output goes oldest first, and working notes are
only queued for compaction (summarized at the next turn boundary, never dropped).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ReclaimPhase"]


class ReclaimPhase(StrEnum):
    """The phase of the window's reclaim cascade that takes tokens from a kind (the value is
    the ``phase`` of ``reclaimed`` events): ``WIPE`` clears the region whole, ``HOOK`` asks the
    region's ``on_overflow`` hook, ``OLDEST`` takes its oldest units round-robin, ``QUEUE``
    queues its content for compaction."""

    WIPE = "1"
    HOOK = "1.5"
    OLDEST = "2"
    QUEUE = "3"
