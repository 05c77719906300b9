"""The compaction flushes an engine runs, each one flush generator with its
:class:`regio.compaction._flush.FlushPolicy` (the sync and async drivers of
:class:`regio.session._session.Session` run the same generators):

* :func:`boundary_steps` -- the turn boundary of ``Engine.request`` / ``Engine.aturn_boundary``:
  the whole-context trigger, then the pending queue;
* :func:`queued_steps` -- ``Engine.flush`` / ``Engine.aflush``;
* :func:`pressure_steps` -- a compaction forced by size (the request ceiling, overflow recovery);
* :func:`manual_steps` -- ``Engine.compact`` / ``Engine.acompact``.

The rules themselves live in :mod:`regio.compaction._flush`.
"""

from __future__ import annotations

import msgspec

from regio.policies.eviction import Compact
from regio.regions import PendingCompaction, SlidingWindow
from regio.session._budget import EngineBudget
from regio.session._events import CompactionFinished, CompactionStarted, TriggerBelowFloor
from regio.session._session import CompactionResult, Session, Steps
from regio.session._sizes import count_argument
from regio.session._textadmit import admit_value

from . import _flush as cp
from ._planning import report_nothing_compacted
from ._reach import reach_steps

__all__ = [
    "boundary_steps",
    "manual_steps",
    "pressure_steps",
    "queue_expired",
    "queued_steps",
    "soft_mark",
    "whole_trigger_targets",
]


def whole_trigger_targets(
    c: Session, budget: EngineBudget, provider: str, model: str
) -> dict[str, int] | None:
    """Targets of the whole-context trigger (``options.compact_trigger``, calibrated tokens)
    when the next request of ``provider`` / ``model`` reaches it, else ``None``. A trigger the
    content that can never shrink already reaches is reported once (``trigger_below_floor``)
    and ignored."""
    trigger = c.options.compact_trigger
    if trigger is None:
        return None
    raw = budget.estimate(provider, model)
    shrinkable = cp.compactable_tokens(c)
    floor = budget.calibrated(raw - shrinkable, provider, model)
    if floor >= trigger:
        if not c.book.floor_warned:
            c.book.floor_warned = True
            c.emit(TriggerBelowFloor(floor, trigger))
        return None
    sized = budget.calibrated(raw, provider, model)
    if sized < trigger:
        return None
    factor = budget.calibration.factor(budget.calibration_key(provider, model))
    goal = max(floor, trigger // 2)
    targets = cp.plan_targets(c, int((sized - goal) / factor) + 1)
    cp.queue_everything(c, "window_trigger")
    return targets


def boundary_steps(
    c: Session, budget: EngineBudget, provider: str, model: str
) -> Steps[CompactionResult | None]:
    """The flush of a turn boundary: the whole-context trigger, then the pending queue.

    A region with a declared bulk fallback (``sliding_window`` with ``compact`` eviction)
    whose summary fails does not end the turn: the failure is reported by events
    (``compaction_rejected``, ``compaction_no_progress``) and the region falls back to bulk
    eviction past ``max_items + 2*compact_count``; the request's ceiling check still raises
    when the window is too large. Other regions raise :class:`CompactionNoProgressError`.
    The window's reserve is set for ``provider`` / ``model`` first (what an elastic region
    may fill: :meth:`regio.session._budget.EngineBudget.reserve`)."""
    budget.reserve(provider, model)
    queue_expired(c)
    targets = whole_trigger_targets(c, budget, provider, model)
    if targets:
        cp.queue_everything(c, "auto")
    return cp.flush_steps(c, cp.FlushPolicy.boundary(c.take_scheduled(), targets))


def soft_mark(region: SlidingWindow) -> int | None:
    """Tokens past which an expired cache compacts ``region`` early: half way from its token
    target to its steady token trigger (``None`` without token hysteresis under
    ``compact``). The steady trigger (:meth:`SlidingWindow.hysteresis` ``steady=True``) does
    not wait for an early compaction to pay back: with the cache expired the next request
    writes the whole prefix anyway, so the compaction's rewrite is not a bet on the future."""
    if not isinstance(region.eviction, Compact):
        return None
    marks = region.hysteresis(steady=True)
    if marks is None:
        return None
    trigger, target = marks
    return target + (trigger - target) // 2


def queue_expired(c: Session) -> list[PendingCompaction]:
    """Timing (``docs/runtime.md``, "Compaction's own cost"): when the cached prefix has
    expired -- the clock is past the last request's time plus the cache TTL
    (``c.cache_ttl_s``) -- the next request rewrites the cache anyway, so a conversation above
    its :func:`soft_mark` is queued for compaction now (reason ``cache_expired``;
    :meth:`Session.cache_expired`)."""
    if not c.cache_expired():
        return []
    queued = []
    for region in c.window.regions:
        if not isinstance(region, SlidingWindow) or region.pending():
            continue
        mark = soft_mark(region)
        if mark is not None and region.compact_target and region.used_tokens >= mark:
            p = c.window.request_compaction(region, reason="cache_expired")
            if p is not None:
                queued.append(p)
    return queued


def queued_steps(c: Session) -> Steps[CompactionResult | None]:
    """Flush the pending queue (and the ``compact`` tool's scheduled instructions)."""
    return cp.flush_steps(c, cp.FlushPolicy.queued(c.take_scheduled()))


def pressure_steps(
    c: Session, trigger: str, targets: dict[str, int] | None
) -> Steps[CompactionResult | None]:
    """Compact every compactable region toward ``targets`` now (``trigger``: ``ceiling`` or
    ``overflow``)."""
    if targets:
        cp.queue_everything(c, trigger)
    result = yield from cp.flush_steps(c, cp.FlushPolicy.pressure(trigger, targets))
    if result is None:
        report_nothing_compacted(c, trigger)
    return result


def manual_steps(
    c: Session,
    instructions: str | None,
    keep_tokens: int | None,
    keep_messages: int | None,
    keep_fraction: float | None,
    target_tokens: int | None = None,
) -> Steps[CompactionResult | None]:
    """A compaction on demand (see ``Engine.compact``); ``compaction_started`` /
    ``compaction_finished`` are emitted even when there is nothing to compact. With
    ``target_tokens`` the window is then brought to that size (:mod:`regio.compaction._reach`);
    without a keep limit each region then keeps at most what the target leaves it beside
    the rest of the window. Raises :class:`ValueError` for a negative limit or target, or a
    fraction outside ``[0, 1]``."""
    before = c.window.used_tokens
    if keep_messages is not None:
        keep_messages = count_argument(keep_messages, "keep_messages", "compact")
    if target_tokens is not None:
        target_tokens = count_argument(target_tokens, "target_tokens", "compact")
    targets = cp.manual_targets(c, keep_tokens, keep_fraction)
    instructions = admit_value(c.emit, instructions, "compact", "instructions")
    if target_tokens is not None and keep_tokens is None and keep_fraction is None:
        for name in targets:
            others = c.window.used_tokens - c.window.region(name).used_tokens
            targets[name] = min(targets[name], max(0, target_tokens - others))
    policy = cp.FlushPolicy.manual(instructions, targets, keep_messages)
    result = yield from cp.flush_steps(c, policy)
    if target_tokens is not None and c.window.used_tokens > target_tokens:
        merged = yield from reach_steps(c, target_tokens)
        if merged is not None:
            result = CompactionResult(
                trigger="manual",
                replaced_ids=(*(result.replaced_ids if result else ()), *merged.replaced_ids),
                kept_ids=merged.kept_ids,
                tokens_before=before,
                tokens_after=c.window.used_tokens,
                summary_ids=(*(result.summary_ids if result else ()), *merged.summary_ids),
                summary_preview=(result or merged).summary_preview,
                summarizer_calls=(result.summarizer_calls if result else 0)
                + merged.summarizer_calls,
                rejected=(*(result.rejected if result else ()), *merged.rejected),
            )
        elif result is not None:
            result = msgspec.structs.replace(result, tokens_after=c.window.used_tokens)
    if result is None:
        c.emit(CompactionStarted("manual", (), 0, 0))
        report_nothing_compacted(c, "manual")
        c.emit(CompactionFinished("manual", (), (), before, before, (), 0, ""))
    return result
