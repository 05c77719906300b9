"""The compaction flush.

The window's regions queue :class:`regio.regions.PendingCompaction` items; the engine flushes
them here, at turn boundaries. Rules:

* **Units only.** A pending item is always the oldest whole units of its region's removal order
  (the newest user message and every open group never enter it; completed groups after the
  newest user message do, so a long single-turn tool loop can be compacted;
  :mod:`regio.policies.units`).
* **Hysteresis.** A ``threshold`` / ``reclaim`` / ``manual`` / ``window`` item is refreshed
  (``Window.refresh_compaction``: units protected when it was queued may be compactable now)
  and narrowed (``Window.narrow_compaction``) to its fewest oldest units that bring its
  region to the region's *target* (default half its budget, never above half its trigger).
  A ``compact_count`` item (``sliding_window`` eviction) and a ``merge``
  are flushed as queued.
* **Carry-forward.** A compaction's summarizer input is the previous summary of the same
  source (if any), verbatim, followed by exactly the units it replaces (a tool result of
  theirs that only ``keep_last`` kept from clearing read as its clear-stage placeholder:
  :mod:`regio.compaction.relief._kept`; the durable items are extracted from the units as
  the window holds them).
  With ``carry_forward="replace"`` the new summary supersedes the previous one in the
  ``compact_history`` (``Window.complete_compaction(..., supersedes=...)``: a rolling summary
  whose ``meta["covers_all"]`` lists every id it stands for, size-checked against the units
  plus the summary it replaces); with ``"append"`` (default) summaries accumulate.
* **Commit gate.** A summary that is empty, the error text of a failed call, a refusal, a
  request for more input, over ``max_summary_tokens`` or not smaller than its input changes
  nothing (:func:`regio.summarizers._protocol.check_summary`); the item stays queued and a strike
  is counted. ``no_progress_limit`` (N = 3) strikes in a row raise
  :class:`CompactionNoProgressError` (event ``compaction_no_progress``) instead of looping;
  the exhausted content is not retried until it changes, and strikes reset only after a
  compaction brings the region below its trigger.

The flush is one generator that yields summarizer jobs, steered by one :class:`FlushPolicy`
value, so the sync and async drivers of :class:`regio.session._session.Session` share
every rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from regio.compaction.relief._chain import relieve_after, relieve_queued
from regio.compaction.relief._cut import relieve_before_cuts
from regio.compaction.relief._kept import kept_as_placeholders
from regio.compaction.relief._memo import ReliefMemo
from regio.compaction.relief._originals import with_originals
from regio.content import Entry, content_hash
from regio.errors import (
    CompactionError,
    CompactionNoProgressError,
    SummarizerError,
    SummaryRejected,
)
from regio.regions import CompactHistory, PendingCompaction, SlidingWindow
from regio.session._events import (
    CompactionFinished,
    CompactionNoProgress,
    CompactionRejected,
    CompactionStarted,
)
from regio.session._session import CompactionBook, CompactionResult, Session, Steps, SummaryJob
from regio.session._textadmit import admit_value

from . import _durable as durable
from ._commit import commit_summary
from ._cuts import cut_ids, unsent, unsent_from
from ._fallback import bulk_fallback, fallback_point, fired_trigger
from ._inputs import previous_summary, summary_inputs, widen_merge
from ._parked import release_orphaned
from ._planning import (
    compactable_regions,
    compactable_tokens,
    manual_targets,
    plan_targets,
    queue_everything,
    region_target,
)

__all__ = [
    "BUG_TYPES",
    "CompactionBook",
    "CompactionResult",
    "FlushPolicy",
    "SummaryJob",
    "compactable_regions",
    "compactable_tokens",
    "flush_steps",
    "manual_targets",
    "plan_targets",
    "queue_everything",
    "region_target",
    "schedule_compaction",
]

#: Preview length of a summary in results and events (characters).
PREVIEW_CHARS = 160

#: Exceptions that are programming errors, not summarizer failures: raised by the summarizer
#: they propagate unchanged instead of counting as a no-progress strike.
BUG_TYPES: tuple[type[BaseException], ...] = (
    LookupError,
    AttributeError,
    TypeError,
    NameError,
    AssertionError,
    ArithmeticError,
    NotImplementedError,
    RecursionError,
)
_BUG_TYPES = BUG_TYPES


def _blocked_key(p: PendingCompaction) -> str:
    return f"{p.region}:{content_hash(list(p.entry_ids))}"


def _narrow(
    c: Session,
    p: PendingCompaction,
    target: int,
    keep_messages: int | None = None,
    held: bool = True,
) -> PendingCompaction | None:
    """``p`` cut down to its fewest oldest units (in the region's removal order) that leave
    ``<= target`` tokens and, with ``keep_messages``, ``<= keep_messages`` entries in its region;
    ``None`` when nothing needs to go or none of its units is still compactable (the cut:
    :func:`regio.compaction._cuts.cut_ids`; ``held``: never the entries no request carried yet,
    :func:`regio.compaction._cuts.unsent`)."""
    region = c.window.region(p.region)
    index = {e.id: i for i, e in enumerate(region.entries)}
    marked = {index[i] for i in p.entry_ids if i in index}
    keep = unsent(region.entries, unsent_from(c)) if held and region.is_conversation else set()
    ids = cut_ids(c, region, marked, target, keep_messages, held=keep)
    return c.window.narrow_compaction(p.id, ids) if ids else None


def _check_triggers(c: Session) -> None:
    """Queue compactions for regions at or over their trigger (``>=``): a region's
    ``trigger_tokens`` (``compacting`` working notes; a ``sliding_window`` under ``compact``
    eviction by its token trigger, token hysteresis)."""
    for region in c.window.regions:
        trigger = region.trigger_tokens
        if trigger is not None and not region.pending() and region.used_tokens >= trigger:
            c.window.request_compaction(region, reason="threshold")


@attrs.frozen(kw_only=True)
class FlushPolicy:
    """How one flush runs: ``trigger`` names it in results and events; ``extra`` instructions
    are added to the standing ones; ``targets``: region -> tokens to keep (overrides
    :func:`region_target`); ``check_triggers``: queue regions at their trigger first;
    ``keep_messages``: at most this many entries kept verbatim per compacted region (a manual
    "keep the last N messages", shrunk to a unit boundary, see ``_narrow``); ``only``: flush
    only this region's items (the rest stay queued); ``tolerate_fallback``: a region that
    declares a bulk fallback (``sliding_window`` with ``compact`` eviction) does not raise after
    its strikes, the failure is reported by events and the region falls back to bulk eviction
    past ``max_items + 2*compact_count`` (:mod:`regio.compaction._fallback`).

    Build one with the constructor named after the caller."""

    trigger: str
    extra: str | None = None
    targets: dict[str, int] | None = None
    check_triggers: bool = True
    keep_messages: int | None = None
    only: str | None = None
    tolerate_fallback: bool = False

    @classmethod
    def boundary(cls, extra: str | None, targets: dict[str, int] | None) -> FlushPolicy:
        """The automatic flush at a turn boundary (tolerates a declared bulk fallback)."""
        return cls(trigger="auto", extra=extra, targets=targets, tolerate_fallback=True)

    @classmethod
    def queued(cls, extra: str | None) -> FlushPolicy:
        """An explicit flush of the queue (``Engine.flush``)."""
        return cls(trigger="auto", extra=extra)

    @classmethod
    def pressure(cls, trigger: str, targets: dict[str, int] | None) -> FlushPolicy:
        """A compaction forced by size (``ceiling``, ``overflow``) toward ``targets``."""
        return cls(trigger=trigger, targets=targets)

    @classmethod
    def manual(
        cls, extra: str | None, targets: dict[str, int], keep_messages: int | None
    ) -> FlushPolicy:
        """A compaction on demand (``Engine.compact``): no trigger check."""
        return cls(
            trigger="manual",
            extra=extra,
            targets=targets,
            check_triggers=False,
            keep_messages=keep_messages,
        )

    @classmethod
    def room(cls, region: str, target: int, *, tolerate_fallback: bool = False) -> FlushPolicy:
        """Room for a write into ``region``: only its items, down to ``target`` tokens
        (``tolerate_fallback``: the region declares a fallback eviction, see the class doc)."""
        return cls(
            trigger="room",
            targets={region: target},
            check_triggers=False,
            only=region,
            tolerate_fallback=tolerate_fallback,
        )


@attrs.define
class _Tally:
    """What one flush has done so far."""

    before: int
    replaced: list[str] = attrs.field(factory=list)
    gone: list[Entry] = attrs.field(factory=list)  # the replaced entries as the region held them
    summaries: list[Entry] = attrs.field(factory=list)
    touched: list[str] = attrs.field(factory=list)
    rejected: list[str] = attrs.field(factory=list)
    calls: int = 0


def flush_steps(c: Session, policy: FlushPolicy) -> Steps[CompactionResult | None]:
    """Flush the pending-compaction queue as ``policy`` says (module doc). Yields
    :class:`SummaryJob` s and receives their :class:`SummaryOutcome` (or has the summarizer's
    exception thrown in).

    Returns ``None`` when there was nothing to flush, else a :class:`CompactionResult`.
    Raises :class:`CompactionNoProgressError` after ``options.no_progress_limit`` strikes (the
    message names the trigger that fired: items for a ``compact_count`` batch, tokens
    otherwise). Exceptions of :data:`BUG_TYPES` raised by the summarizer (``KeyError``,
    ``TypeError``, ...) are programming errors: they propagate unchanged and count no strike.
    """
    window = c.window
    only = policy.only
    if policy.check_triggers:
        _check_triggers(c)
    memo = ReliefMemo()  # the flush's relief passes share their edits and gains
    relieved = relieve_queued(c, policy.trigger, policy.targets, only, memo)  # cheapest first
    _measure_kept(c, relieved)  # a pass that reached the target stood in for a compaction
    if not [p for p in window.pending_compactions() if only is None or p.region == only]:
        return None
    # clear before the summary's cut when clearing after it would not be worth it
    relieve_before_cuts(c, policy.trigger, policy.targets, only, policy.keep_messages, memo)
    tally = _Tally(before=window.used_tokens)
    seen: set[str] = set()
    passes = 0
    while True:
        queue = [
            p
            for p in window.pending_compactions()
            if p.id not in seen and (only is None or p.region == only)
        ]
        if not queue or passes > 4 * len(window.regions) + 16:
            break
        passes += 1
        seen.add(queue[0].id)
        key = _blocked_key(queue[0])
        p = _prepared(c, queue[0], key, policy)
        if p is None:
            continue
        summary = yield from _summary_steps(c, p, key, policy, tally)
        if summary is None:
            continue
        region = window.region(p.region)
        tally.replaced.extend(p.entry_ids)
        tally.summaries.append(summary)
        region_trigger = region.trigger_tokens
        if region_trigger is None or region.used_tokens < region_trigger:
            c.book.strikes.pop(region.name, None)
            c.book.blocked = [b for b in c.book.blocked if not b.startswith(f"{region.name}:")]
    relieve_after(c, tally.touched if tally.summaries else [], memo)  # rides the same rewrite
    release_orphaned(c, tally.gone)  # parked output leaves with its turn
    _measure_kept(c, tally.touched if tally.summaries else [])
    for history in c.window.regions:  # past its last merge, a history's items make room
        if isinstance(history, CompactHistory):
            durable.fit_history(c, history)
    return _finish(c, policy.trigger, tally)


def _measure_kept(c: Session, names: Sequence[str]) -> None:
    """What a compaction of the conversations ``names`` kept, for the cost controller
    (``SlidingWindow.kept_tokens``): what each holds once the flush's summary and relief
    passes are done (a summary's ``clear_after_summary`` pass, or a relief pass that brought
    the conversation to its target instead of a summary). Issue 27: measured after summaries
    only, a ``kept_tokens`` that ``clear_after_summary`` left far below the target put the
    controller's trigger one request above the target, and relief cleared every 1-3
    requests."""
    for name in names:
        region = c.window.region(name)
        if isinstance(region, SlidingWindow):
            region.kept_tokens = region.used_tokens


def _prepared(
    c: Session, p: PendingCompaction, key: str, policy: FlushPolicy
) -> PendingCompaction | None:
    """``p`` as it will be summarized (a merge widened, a compaction refreshed and narrowed to
    its target), or ``None`` when it left the queue instead."""
    window = c.window
    region = window.region(p.region)
    if key in c.book.blocked:
        window.fail_compaction(p.id, "no progress earlier on the same content", drop=True)
        bulk_fallback(c, region, p, "no progress earlier")
        return None
    if p.operation == "merge":
        p = widen_merge(c, p)
    manual = policy.trigger == "manual"
    if p.operation == "compact" and p.reason == "compact_count" and not manual:
        # a batch is flushed as queued, less what no request carried yet (it waits for the
        # next turn boundary when that is all of it)
        region_ids = {e.id: i for i, e in enumerate(region.entries)}
        held = unsent(region.entries, unsent_from(c)) if region.is_conversation else set()
        if held & {region_ids.get(i, -1) for i in p.entry_ids}:
            narrowed = _narrow(c, p, 0)
            if narrowed is None:
                return None
            p = narrowed
    if p.operation == "compact" and p.reason != "compact_count":
        goal = (policy.targets or {}).get(p.region, region_target(c, region))
        fresh = window.refresh_compaction(p.id)
        narrowed = (
            _narrow(c, fresh, goal, policy.keep_messages, held=not manual)
            if fresh is not None
            else None
        )
        if narrowed is None:
            window.fail_compaction(
                p.id,
                f"already at or below its target ({goal}) or nothing compactable",
                drop=True,
            )
            return None
        p = narrowed
    return p


def _summary_steps(
    c: Session, p: PendingCompaction, key: str, policy: FlushPolicy, tally: _Tally
) -> Steps[Entry | None]:
    """Summarize and commit ``p``, retrying a refused summary until the strikes run out;
    returns the committed summary, or ``None`` when the region's fallback took over."""
    region = c.window.region(p.region)
    by_id = {e.id: e for e in region.entries}
    entries = with_originals(c, [by_id[i] for i in p.entry_ids if i in by_id])
    previous = previous_summary(c, p)
    head, tail = summary_inputs(c, p, previous), durable.merge_context(c, p)
    # the summarizer reads the results keep_last kept as their placeholders; the durable
    # items are extracted from the cut as the window holds it (relief/_kept.py)
    inputs = head + tuple(kept_as_placeholders(c, region, entries)) + tail
    read = head + tuple(entries) + tail
    if region.name not in tally.touched:
        tally.touched.append(region.name)
    c.emit(CompactionStarted(policy.trigger, (p.id,), p.tokens, region_target(c, region)))
    while True:
        calls_before = tally.calls
        try:
            try:
                outcome = yield SummaryJob(inputs, policy.extra)
            except _BUG_TYPES:
                raise  # a programming error in the summarizer surfaces unchanged (L7)
            except Exception as exc:  # the summarizer call failed: a strike
                if isinstance(exc, (SummarizerError, SummaryRejected)):
                    raise
                raise SummarizerError(f"the summarizer raised {exc!r}", cause=exc) from exc
            tally.calls += len(outcome.calls)
            summary = commit_summary(c, p, outcome, previous, read)
            tally.gone.extend(by_id[i] for i in p.entry_ids if i in by_id)
            return summary
        except (SummaryRejected, SummarizerError, CompactionError) as exc:
            if tally.calls == calls_before:
                tally.calls += 1
            if not _strike(c, p, key, exc, policy, tally):
                return None


def _strike(
    c: Session,
    p: PendingCompaction,
    key: str,
    exc: SummaryRejected | SummarizerError | CompactionError,
    policy: FlushPolicy,
    tally: _Tally,
) -> bool:
    """Count a refused summary of ``p``: ``True`` to try again, ``False`` when the region's
    declared bulk fallback took over (``policy.tolerate_fallback``); raises
    :class:`CompactionNoProgressError` when the strikes ran out otherwise."""
    window, book = c.window, c.book
    region = window.region(p.region)
    reason = exc.reason if isinstance(exc, SummaryRejected) else "error"
    tally.rejected.append(reason)
    strikes = book.strikes.get(region.name, 0) + 1
    book.strikes[region.name] = strikes
    c.emit(CompactionRejected(p.id, region.name, reason, str(exc), strikes))
    if strikes < c.options.no_progress_limit:
        window.fail_compaction(p.id, f"summary rejected ({reason})", drop=False)
        return True
    window.fail_compaction(p.id, "no progress", drop=True)
    book.blocked.append(key)
    size, trig, unit = fired_trigger(c, region, p)
    c.emit(CompactionNoProgress(region.name, strikes, size, trig))
    fell_back = bulk_fallback(c, region, p, "no progress")
    if policy.tolerate_fallback and fallback_point(region) is not None:
        # the region declares a bulk fallback (armed, or just taken): the turn goes on; the
        # request's ceiling check still raises if the window is too large
        return False
    cause = exc.cause if isinstance(exc, SummarizerError) and exc.cause else exc
    raise CompactionNoProgressError(
        f"compaction of region {region.name!r} made no progress in {strikes} "
        f"attempts in a row (last: {reason}: {exc}); the region holds {size} "
        f"{unit} against a trigger of {trig} {unit}"
        + (f"; {len(fell_back)} entries were bulk-evicted instead" if fell_back else "")
        + ". Use a summarizer that shortens its input, raise the region's budget, or "
        "release entries",
        region=region.name,
        attempts=strikes,
        size=size,
        trigger=trig,
    ) from cause


def _finish(c: Session, trigger: str, tally: _Tally) -> CompactionResult | None:
    """The flush's result (kept as ``book.last``) and its ``compaction_finished`` event."""
    if not tally.replaced and not tally.summaries:
        return None
    window = c.window
    kept = tuple(e.id for name in tally.touched for e in window.region(name).entries)
    summaries = tally.summaries
    result = CompactionResult(
        trigger=trigger,
        replaced_ids=tuple(tally.replaced),
        kept_ids=kept,
        tokens_before=tally.before,
        tokens_after=window.used_tokens,
        summary_ids=tuple(s.id for s in summaries),
        summary_preview=summaries[0].text[:PREVIEW_CHARS] if summaries else "",
        summarizer_calls=tally.calls,
        rejected=tuple(tally.rejected),
    )
    c.book.last = result
    c.emit(
        CompactionFinished(
            trigger,
            result.replaced_ids,
            kept,
            tally.before,
            result.tokens_after,
            result.summary_ids,
            tally.calls,
            result.summary_preview,
        )
    )
    return result


def schedule_compaction(c: Session, instructions: str | None) -> None:
    """Queue the compactable content for the next turn boundary with ``instructions`` added to
    the standing requirements (the ``compact`` tool runs mid-turn)."""
    queue_everything(c, "manual")
    instructions = admit_value(c.emit, instructions, "compact", "instructions")
    c.book.scheduled = (instructions or "").strip() or None
