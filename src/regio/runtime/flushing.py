"""Turn-boundary compaction of the engine: triggers, flush, manual compaction (sync and async).

The rules live in :mod:`regio.runtime.compaction`; this mixin drives its generator with the
engine's summarizer, either synchronously or awaiting an async summarizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from . import compaction as cp
from .events import TriggerBelowFloor
from .hierarchy import SummaryOutcome, asummarize_entries, summarize_entries

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["FlushMixin"]


def _e(obj: Any) -> Engine:
    """The mixin's instance as the :class:`Engine` it is part of."""
    return cast("Engine", obj)


class FlushMixin:
    """Compaction methods of :class:`regio.runtime.Engine`."""

    def _boundary_steps(self, provider: str, model: str) -> Any:
        """The flush generator of a turn boundary (shared by :meth:`Engine.request` and
        :meth:`aturn_boundary`): the whole-context trigger, then the pending queue.

        A region with a declared bulk fallback (``sliding_window`` with ``compact`` eviction)
        whose summary fails does not end the turn: the failure is reported by events
        (``compaction_rejected``, ``compaction_no_progress``) and the region falls back to bulk
        eviction past ``max_items + 2*compact_count``; the request's ceiling check still raises
        when the window is too large. Other regions raise
        :class:`CompactionNoProgressError` (FC-25)."""
        targets = _e(self)._whole_trigger_targets(provider, model)
        if targets:
            cp.queue_everything(_e(self), "auto")
        return cp.flush_steps(
            _e(self),
            trigger="auto",
            extra=_e(self)._take_scheduled(),
            targets=targets,
            tolerate_fallback=True,
        )

    def _turn_boundary(self, provider: str, model: str) -> None:
        """The turn-boundary flush of :meth:`Engine.request` (sync summarizer)."""
        _e(self)._run(_e(self)._boundary_steps(provider, model))

    async def aturn_boundary(
        self, provider: str | None = None, model: str | None = None
    ) -> cp.CompactionResult | None:
        """Async twin of the flush :meth:`Engine.request` runs at a turn boundary (whole-context
        trigger measured for ``provider`` / ``model``, default the engine's; tolerated bulk
        fallback), awaiting an async summarizer. Call it, then ``request(..., flush=False)``.
        Returns what was done, or ``None`` when nothing was pending. Raises
        :class:`CompactionNoProgressError` as :meth:`Engine.request` does."""
        provider = provider or _e(self).provider
        model = model or _e(self).model
        return await _e(self)._arun(_e(self)._boundary_steps(provider, model))

    def _take_scheduled(self) -> str | None:
        scheduled = _e(self).book.scheduled
        _e(self).book.scheduled = None
        return scheduled

    def _whole_trigger_targets(self, provider: str, model: str) -> dict[str, int] | None:
        """FC-18 / FC-23 b: the whole-context trigger, measured in calibrated tokens."""
        trigger = _e(self).compact_trigger
        if trigger is None:
            return None
        raw = _e(self).estimate(provider, model)
        shrinkable = cp.compactable_tokens(_e(self))
        floor = _e(self).calibrated(raw - shrinkable, provider, model)
        if floor >= trigger:
            if not _e(self).book.floor_warned:
                _e(self).book.floor_warned = True
                _e(self).emit(TriggerBelowFloor(floor, trigger))
            return None
        sized = _e(self).calibrated(raw, provider, model)
        if sized < trigger:
            return None
        factor = _e(self).calibration.factor(_e(self).calibration_key(provider, model))
        goal = max(floor, trigger // 2)
        targets = cp.plan_targets(_e(self), int((sized - goal) / factor) + 1)
        cp.queue_everything(_e(self), "window_trigger")
        return targets

    def _run(self, steps: Any) -> Any:
        try:
            job = next(steps)
            while True:
                try:
                    outcome = summarize_entries(
                        _e(self).summarizer,
                        job.entries,
                        _e(self).standing_instructions,
                        job.extra,
                        _e(self).counter,
                    )
                except Exception as exc:  # a failed summary is a strike, handled by the flush
                    job = steps.throw(exc)
                    continue
                job = steps.send(outcome)
        except StopIteration as stop:
            return stop.value

    async def _arun(self, steps: Any) -> Any:
        try:
            job = next(steps)
            while True:
                try:
                    outcome: SummaryOutcome = await asummarize_entries(
                        _e(self).summarizer,
                        job.entries,
                        _e(self).standing_instructions,
                        job.extra,
                        _e(self).counter,
                    )
                except Exception as exc:
                    job = steps.throw(exc)
                    continue
                job = steps.send(outcome)
        except StopIteration as stop:
            return stop.value

    def _compact_now(
        self,
        trigger: str,
        targets: dict[str, int] | None,
        extra: str | None,
    ) -> cp.CompactionResult | None:
        if targets:
            cp.queue_everything(_e(self), trigger)
        return _e(self)._run(
            cp.flush_steps(_e(self), trigger=trigger, extra=extra, targets=targets)
        )

    # ----- compaction API ----------------------------------------------------------------
    def pending(self) -> list[Any]:
        """The window's pending-compaction queue, oldest first."""
        return _e(self).window.pending_compactions()

    def flush(self) -> cp.CompactionResult | None:
        """Flush pending compactions now (call at a turn boundary; :meth:`request` does it).
        Returns what was done, or ``None`` when nothing was pending. Raises
        :class:`CompactionNoProgressError` after N passes that free nothing."""
        return _e(self)._run(
            cp.flush_steps(_e(self), trigger="auto", extra=_e(self)._take_scheduled())
        )

    async def aflush(self) -> cp.CompactionResult | None:
        """Async twin of :meth:`flush` (for async summarizers)."""
        return await _e(self)._arun(
            cp.flush_steps(_e(self), trigger="auto", extra=_e(self)._take_scheduled())
        )

    def compact(
        self,
        instructions: str | None = None,
        *,
        keep_tokens: int | None = None,
        keep_messages: int | None = None,
        keep_fraction: float | None = None,
    ) -> cp.CompactionResult | None:
        """Compact now, on demand. ``instructions`` are added to the standing summary
        requirements (never replace them). Keep limits, per compacted region, all optional
        and combined (the tightest wins): ``keep_tokens`` (tokens kept verbatim; 0 compacts
        everything compactable), ``keep_messages`` (entries kept verbatim: "keep the last N
        messages"), ``keep_fraction`` (fraction in ``[0, 1]`` of the region's current size);
        none: each region's hysteresis target. A limit that falls inside a unit (a call and its
        results) shrinks the kept tail to that unit's boundary: the whole unit is summarized
        (FC-03, FC-09; :func:`regio.runtime.compaction.flush_steps`). Returns a
        :class:`CompactionResult`, or ``None`` when there is nothing to compact;
        ``compaction_started`` / ``compaction_finished`` events are emitted either way. Raises
        :class:`ValueError` for a negative limit or a fraction outside ``[0, 1]``."""
        before = _e(self).window.used_tokens
        if keep_messages is not None and keep_messages < 0:
            raise ValueError(f"keep_messages must be >= 0, got {keep_messages}")
        targets = cp.manual_targets(_e(self), keep_tokens, keep_fraction)
        result = _e(self)._run(
            cp.flush_steps(
                _e(self),
                trigger="manual",
                extra=instructions,
                targets=targets,
                check_triggers=False,
                keep_messages=keep_messages,
            )
        )
        return _e(self)._manual_done(result, before)

    async def acompact(
        self,
        instructions: str | None = None,
        *,
        keep_tokens: int | None = None,
        keep_messages: int | None = None,
        keep_fraction: float | None = None,
    ) -> cp.CompactionResult | None:
        """Async twin of :meth:`compact`."""
        before = _e(self).window.used_tokens
        if keep_messages is not None and keep_messages < 0:
            raise ValueError(f"keep_messages must be >= 0, got {keep_messages}")
        targets = cp.manual_targets(_e(self), keep_tokens, keep_fraction)
        result = await _e(self)._arun(
            cp.flush_steps(
                _e(self),
                trigger="manual",
                extra=instructions,
                targets=targets,
                check_triggers=False,
                keep_messages=keep_messages,
            )
        )
        return _e(self)._manual_done(result, before)

    def _manual_done(
        self, result: cp.CompactionResult | None, before: int
    ) -> cp.CompactionResult | None:
        if result is None:
            from .events import CompactionFinished, CompactionStarted

            _e(self).emit(CompactionStarted("manual", (), 0, 0))
            _e(self).emit(CompactionFinished("manual", (), (), before, before, (), 0, ""))
        return result

    def schedule_compaction(self, instructions: str | None = None) -> None:
        """Compact at the next turn boundary (used by the agent's ``compact`` tool, which runs
        mid-turn): queues the compactable content; ``instructions`` are added to the standing
        requirements."""
        cp.queue_everything(_e(self), "manual")
        _e(self).book.scheduled = (instructions or "").strip() or None
