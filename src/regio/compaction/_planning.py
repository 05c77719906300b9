"""Which regions to compact and how far: hysteresis targets, compactable regions and tokens,
per-region targets that
free a given amount, and the targets of a manual compaction. Re-exported by
:mod:`regio.compaction._flush`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio.regions import PendingCompaction, Region, SlidingWindow
from regio.session._events import NothingCompacted
from regio.session._sizes import SizeError, count_argument
from regio.turngroups import group_entries

if TYPE_CHECKING:
    from regio.session._session import Session

__all__ = [
    "compactable_regions",
    "compactable_tokens",
    "manual_targets",
    "plan_targets",
    "queue_everything",
    "region_target",
    "report_nothing_compacted",
]


def region_target(c: Session, region: Region) -> int:
    """Low-water mark of ``region`` in tokens (hysteresis target): the engine's explicit
    target, else a ``sliding_window``'s token target (``bulk`` / ``compact`` eviction,
    :mod:`regio.policies.hysteresis`), else half the budget, never above half the trigger."""
    explicit = c.options.targets.get(region.name)
    if explicit is not None:
        return int(explicit)
    if isinstance(region, SlidingWindow) and region.token_target is not None:
        return int(region.token_target)
    target = region.budget // 2
    trigger = region.trigger_tokens
    if trigger is not None:
        target = min(target, trigger // 2)
    return target


def compactable_regions(c: Session) -> list[Region]:
    """Regions whose content compaction can shrink: kinds with a ``compaction_order`` paired
    with a ``compact_history``, in that order (working notes first, the conversation last;
    blueprint order within a kind)."""
    paired = [r for r in c.window.regions if r.compaction_order is not None and r.compact_target]
    return sorted(paired, key=lambda r: r.compaction_order or 0)


def report_nothing_compacted(c: Session, trigger: str) -> None:
    """After a compaction (``trigger``: ``manual``, ``ceiling``, ``overflow``) that compacted
    nothing, say why for every compactable region that holds entries, with a
    ``nothing_compacted`` event (:class:`regio.session._events.NothingCompacted`): its only
    units are open tool calls (``open_calls``: the calls without a final result, which are never
    summarized), the current turn (``current_turn``: the newest user message and what follows),
    or it already is at or below its target (``at_target``)."""
    for region in compactable_regions(c):
        if not region.entries:
            continue
        info = region.analysis()
        open_calls: tuple[str, ...] = ()
        if info.removable:
            reason = "at_target"
        else:
            grouping = group_entries(region.entries)
            before_turn = {
                grouping.assignment[i] for i in range(min(info.turn_start, len(region.entries)))
            }
            open_calls = tuple(
                call
                for index, group in enumerate(grouping.groups)
                if group.open and index in before_turn
                for call in group.pending
            )
            reason = "open_calls" if open_calls else "current_turn"
        c.emit(NothingCompacted(trigger, region.name, reason, open_calls, region.used_tokens))


def compactable_tokens(c: Session) -> int:
    """Tokens compaction could remove right now (whole units before each protected tail)."""
    total = 0
    for region in compactable_regions(c):
        info = region.analysis()
        total += info.removed_tokens[-1]
    return total


def plan_targets(c: Session, free_raw: int) -> dict[str, int]:
    """Per-region targets that free at least ``free_raw`` tokens (raw, uncalibrated), taken from
    working notes first and from the conversation last."""
    targets: dict[str, int] = {}
    need = max(0, free_raw)
    for region in compactable_regions(c):
        if need <= 0:
            break
        targets[region.name] = max(0, region.used_tokens - need)
        need -= region.used_tokens
    return targets


def queue_everything(c: Session, reason: str) -> list[PendingCompaction]:
    """Ask every compactable region to queue its compactable content (``reason``)."""
    queued = []
    for region in compactable_regions(c):
        p = c.window.request_compaction(region, reason=reason)
        if p is not None:
            queued.append(p)
    return queued


def manual_targets(
    c: Session, keep_tokens: int | None = None, keep_fraction: float | None = None
) -> dict[str, int]:
    """Queue every compactable region (reason ``manual``) and return its token target.

    ``keep_tokens``: tokens kept verbatim per region (0 compacts everything compactable);
    ``keep_fraction``: the fraction in ``[0, 1]`` of each region's current size kept verbatim
    (``int(fraction * used tokens)``); both given: the smaller wins; neither: the region's
    hysteresis target (:func:`region_target`). Raises :class:`regio.errors.SizeError`
    (a ``ValueError``) for a ``keep_tokens`` that is not a count or a fraction outside
    ``[0, 1]``."""
    if keep_tokens is not None:
        keep_tokens = count_argument(keep_tokens, "keep_tokens", "compact")
    if keep_fraction is not None and (
        isinstance(keep_fraction, bool)
        or not isinstance(keep_fraction, int | float)
        or not 0 <= keep_fraction <= 1
    ):
        raise SizeError(f"compact: keep_fraction is a fraction in [0, 1], got {keep_fraction!r}")
    queue_everything(c, "manual")
    targets: dict[str, int] = {}
    for region in compactable_regions(c):
        limits = []
        if keep_tokens is not None:
            limits.append(keep_tokens)
        if keep_fraction is not None:
            limits.append(int(keep_fraction * region.used_tokens))
        targets[region.name] = min(limits) if limits else region_target(c, region)
    return targets
