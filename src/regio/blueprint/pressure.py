"""Warnings, with numbers, about what a conversation's eviction will cost under token pressure
(``docs/runtime.md``, "Token hysteresis"): a ``bulk`` / ``compact`` step that frees too little
(a target too close to its trigger, a ``compact_count`` / ``overflow`` smaller than a turn)
runs on every turn. :func:`pressure_notes` says, per conversation, what its step is and what
``per_item`` costs (it rewrites the cached conversation on every write once full).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from regio.blueprint.spec import Blueprint, SlidingWindowSpec
from regio.errors import RegionConfigError
from regio.policies import hysteresis as hy

__all__ = ["TURN_SHARES", "check_pressure", "pressure_notes"]

Warn = Callable[[tuple[str | int, ...], str], None]

#: Smallest turn the target check assumes, as a share of the conversation budget.
TURN_SHARES = (0.01,)

#: Items a tool-using turn adds (the assistant's call and its result).
ITEMS_PER_TURN = 2


def check_pressure(bp: Blueprint, budgets: Mapping[int, int], warn: Warn) -> None:
    """Warn for each ``sliding_window`` of ``bp`` (``budgets``: resolved tokens per region
    index) whose ``bulk`` / ``compact`` step evicts or compacts on every turn (module doc)."""
    for index, spec in enumerate(bp.regions):
        if not isinstance(spec, SlidingWindowSpec) or index not in budgets:
            continue
        if spec.eviction.strategy != "per_item":
            _check_step(spec, budgets[index], ("regions", index, "eviction"), warn)


def pressure_notes(bp: Blueprint, budgets: Mapping[int, int]) -> list[str]:
    """One line per ``sliding_window`` of ``bp`` saying what token pressure does and costs."""
    notes = []
    write, read = hy.DEFAULT_MULTIPLIERS
    for index, spec in enumerate(bp.regions):
        if not isinstance(spec, SlidingWindowSpec) or index not in budgets:
            continue
        budget, ev = budgets[index], spec.eviction
        if ev.strategy == "per_item":
            notes.append(
                f"{spec.name}: per_item: once full ({budget:,} tokens) every write drops the "
                f"oldest turn group and the next request writes about {budget:,} tokens to the "
                f"cache again ({write / read:.1f}x their cache-read price) on every turn"
            )
            continue
        default = (
            hy.DEFAULT_COMPACT_TRIGGER if ev.strategy == "compact" else hy.DEFAULT_BULK_TRIGGER
        )
        try:
            trigger = min(budget, hy.resolve_mark(ev.trigger or default, budget))
            target = None if ev.target is None else hy.resolve_mark(ev.target, budget)
        except RegionConfigError:
            continue
        step = "compacts" if ev.strategy == "compact" else "evicts"
        if target is None:
            turn = int(0.03 * budget)
            shown = (
                f"a target from the cache prices and the measured tokens per turn (e.g. "
                f"{hy.cost_target(trigger, turn):,} tokens for {turn:,}-token turns)"
            )
        else:
            shown = f"{target:,} tokens"
        line = f"{spec.name}: at {trigger:,} tokens it {step} down to {shown} in one step"
        if spec.elastic is not False:
            others = sum(b for i, b in budgets.items() if i != index)
            line += (
                f"; elastic: it grows past its {budget:,}-token budget into what the window "
                f"has free (up to {max(budget, bp.window_tokens - others):,} tokens with every "
                f"other region full, {bp.window_tokens:,} with them empty) and its marks "
                "follow that room"
            )
        notes.append(line)
    return notes


def _check_step(
    spec: SlidingWindowSpec, budget: int, path: tuple[str | int, ...], warn: Warn
) -> None:
    ev = spec.eviction
    verb = "compacts" if ev.strategy == "compact" else "bulk-evicts"
    count = ev.compact_count if ev.strategy == "compact" else ev.overflow
    key = "compact_count" if ev.strategy == "compact" else "overflow"
    if spec.max_items is not None and count <= ITEMS_PER_TURN:
        warn(
            (*path, key),
            f"{key}: {count} items: a tool-using turn adds {ITEMS_PER_TURN} items, so past "
            f"max_items ({spec.max_items}) the conversation {verb} on every turn; "
            "raise it to 10 or more",
        )
    default = hy.DEFAULT_COMPACT_TRIGGER if ev.strategy == "compact" else hy.DEFAULT_BULK_TRIGGER
    try:
        trigger = min(budget, hy.resolve_mark(ev.trigger or default, budget))
        target = None if ev.target is None else hy.resolve_mark(ev.target, budget)
    except RegionConfigError as exc:
        warn(path, str(exc))
        return
    if target is None:  # derived from the cache prices at run time: freed in steps
        return
    freed = trigger - target
    smallest = int(TURN_SHARES[0] * budget)
    if target >= trigger or freed < smallest:
        warn(
            (*path, "target"),
            f"target {target} tokens is {'not below' if target >= trigger else 'only'} "
            f"{'' if target >= trigger else f'{freed} tokens below '}the {trigger}-token "
            f"trigger: a turn of {smallest} tokens ({TURN_SHARES[0]:.0%} of the budget) or "
            f"more passes the trigger again at once, so the conversation {verb} on "
            "every turn; lower the target (half the trigger is a safe start)",
        )
