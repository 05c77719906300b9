"""The load-time checks of a :class:`regio.regions.window.Window`'s regions: every
``compact_history`` paired with the one region it summarizes, and the floors of the regions
that never shrink fitting the window. Each raises :class:`regio.errors.WindowConfigError`
with the names and numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from regio.errors import WindowConfigError
from regio.regions.base import Region
from regio.regions.compaction import CompactHistory

__all__ = ["check_floors", "pair_histories"]


def pair_histories(regions: Sequence[Region], by_name: Mapping[str, Region]) -> None:
    """Set each paired source's ``compact_target`` to its ``compact_history``; raises when a
    history names no compacting region, a source has two histories, or a region that queues
    compactions has none."""
    for h in regions:
        if not isinstance(h, CompactHistory) or h.source is None:
            continue
        src = by_name.get(h.source)
        if src is None or src.compaction_order is None:
            raise WindowConfigError(
                f"compact_history {h.name!r}: source {h.source!r} is not a compacting or "
                f"sliding_window region (regions: {', '.join(by_name)})"
            )
        if src.compact_target is not None:
            raise WindowConfigError(
                f"region {src.name!r} has two compact_history regions "
                f"({src.compact_target!r}, {h.name!r}); pair exactly one"
            )
        src.compact_target = h.name
    for r in regions:
        if r.needs_history and r.compact_target is None:
            raise WindowConfigError(
                f"region {r.name!r} queues compactions but no compact_history has "
                f"source: {r.name}; add one to receive its summaries"
            )


def check_floors(regions: Sequence[Region], max_tokens: int) -> None:
    """Raise when the floors (tokens) of the regions that never shrink exceed ``max_tokens``."""
    fixed = [(r.name, r.kind, r.budget_spec.floor(max_tokens)) for r in regions if r.never_shrinks]
    total = sum(f for _, _, f in fixed)
    if total > max_tokens:
        parts = ", ".join(f"{n} ({k}) {f}" for n, k, f in fixed)
        raise WindowConfigError(
            f"regions that never shrink need {total} tokens but the window is "
            f"{max_tokens}: {parts}. Raise the window or lower these budgets"
        )
