"""Policies used by regions: budgets, unit boundaries, eviction strategies, admission, volatility,
reclaim phases.

See ``docs/regions.md`` for when to pick which.
"""

from __future__ import annotations

from regio.policies.budget import Budget
from regio.policies.eviction import (
    Bulk,
    Compact,
    EvictionDecision,
    EvictionStrategy,
    PerItem,
    parse_eviction,
)
from regio.policies.reclaim import ReclaimPhase
from regio.policies.units import (
    HistoryCaps,
    HistoryCounts,
    UnitAnalysis,
    analyze,
    is_user_turn_start,
)

ADMISSIONS: tuple[str, ...] = ("evict", "reject")
"""Admission policies: ``evict`` makes room by the region's rules, ``reject`` refuses."""

VOLATILITIES: tuple[str, ...] = ("stable", "grows", "rewritten")
"""Volatility of a region; ``rewritten`` is the default."""

__all__ = [
    "ADMISSIONS",
    "VOLATILITIES",
    "Budget",
    "Bulk",
    "Compact",
    "EvictionDecision",
    "EvictionStrategy",
    "HistoryCaps",
    "HistoryCounts",
    "PerItem",
    "ReclaimPhase",
    "UnitAnalysis",
    "analyze",
    "is_user_turn_start",
    "parse_eviction",
]
