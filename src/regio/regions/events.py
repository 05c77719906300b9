"""Events emitted by regions and the window (every decision is one)."""

from __future__ import annotations

from regio.events import Event

__all__ = [
    "Cleared",
    "CompactionCompleted",
    "CompactionFailed",
    "CompactionFallback",
    "CompactionNarrowed",
    "CompactionQueued",
    "CompactionRefreshed",
    "Evicted",
    "Reclaimed",
    "Refused",
    "RegionOverBudget",
    "Released",
    "Replaced",
    "Unchanged",
    "Written",
]


class Written(Event, frozen=True, tag="written"):
    """An entry was admitted: ``used``/``budget`` of the region afterwards (tokens)."""

    region: str
    entry_id: str
    tokens: int
    used: int
    budget: int
    version: int


class Refused(Event, frozen=True, tag="refused"):
    """A write was refused; nothing changed. ``reason``: ``region_full`` | ``too_large`` |
    ``window_full`` | ``entry_limit`` | ``hook``."""

    region: str
    entry_tokens: int
    used: int
    budget: int
    available: int
    reason: str
    message: str


class Replaced(Event, frozen=True, tag="replaced"):
    """A keyed write replaced the entry with the same key in place."""

    region: str
    key: str
    entry_id: str
    old_value: str
    new_value: str
    old_tokens: int
    new_tokens: int


class Unchanged(Event, frozen=True, tag="unchanged"):
    """A write was a no-op (same key and value, duplicate checklist item); nothing changed."""

    region: str
    key: str
    entry_id: str


class Evicted(Event, frozen=True, tag="evicted"):
    """Whole units rolled off a region. ``reason``: ``tokens`` | ``max_items`` |
    ``max_entries`` | ``compaction_fallback`` | ``hook`` | ``ceiling`` (the engine's request
    ceiling, :mod:`regio.compaction._ceiling`)."""

    region: str
    entry_ids: tuple[str, ...]
    tokens: int
    reason: str


class Released(Event, frozen=True, tag="released"):
    """Entries were released explicitly (by key, index or oldest N)."""

    region: str
    entry_ids: tuple[str, ...]
    tokens: int


class Cleared(Event, frozen=True, tag="cleared"):
    """A region was cleared (``clear()``); protected units, if any, were kept."""

    region: str
    entry_ids: tuple[str, ...]
    tokens: int


class Reclaimed(Event, frozen=True, tag="reclaimed"):
    """Window reclaim took entries from a region. ``phase``: ``1`` clearable, ``1.5`` custom,
    ``2`` temporary, ``3`` compaction queued (no entries removed yet)."""

    region: str
    phase: str
    entry_ids: tuple[str, ...]
    tokens: int
    window_used: int
    high_water_tokens: int


class CompactionQueued(Event, frozen=True, tag="compaction_queued"):
    """A :class:`PendingCompaction` entered the queue."""

    pending_id: str
    region: str
    target: str | None
    entry_ids: tuple[str, ...]
    tokens: int
    reason: str
    operation: str


class CompactionFallback(Event, frozen=True, tag="compaction_fallback"):
    """A pending compaction was not flushed in time; its entries were evicted instead."""

    pending_id: str
    region: str
    entry_ids: tuple[str, ...]
    reason: str


class CompactionCompleted(Event, frozen=True, tag="compaction_completed"):
    """The runtime completed a compaction: ``entry_ids`` left ``region``; ``summary_id`` went
    to ``target``."""

    pending_id: str
    region: str
    target: str
    entry_ids: tuple[str, ...]
    summary_id: str
    tokens_before: int
    tokens_after: int
    superseded: tuple[str, ...] = ()
    """Summaries of ``target`` the new one carried forward and replaced (rolling summary)."""


class CompactionRefreshed(Event, frozen=True, tag="compaction_refreshed"):
    """A queued compaction was re-marked with its region's whole current compactable content
    (units protected when it was queued may have become compactable)."""

    pending_id: str
    region: str
    entry_ids: tuple[str, ...]
    tokens: int


class CompactionNarrowed(Event, frozen=True, tag="compaction_narrowed"):
    """A queued compaction was cut down to ``entry_ids`` (hysteresis); ``released`` tokens are
    no longer marked."""

    pending_id: str
    region: str
    entry_ids: tuple[str, ...]
    tokens: int
    released: int


class CompactionFailed(Event, frozen=True, tag="compaction_failed"):
    """A compaction failed; nothing changed. ``dropped``: the mark left the queue."""

    pending_id: str
    region: str
    reason: str
    dropped: bool


class RegionOverBudget(Event, frozen=True, tag="region_over_budget"):
    """A region (or the window, ``region == "<window>"``) stays over a soft limit because the
    excess is protected (current turn / open group) or waits for a merge compaction."""

    region: str
    used: int
    budget: int
    reason: str
