"""The compaction flush (DESIGN.md section 4, "Compaction flush"; field cases FC-06, FC-08,
FC-10..FC-14, FC-21, FC-23..FC-25, FC-28).

The window's regions queue :class:`regio.regions.PendingCompaction` items; the engine flushes
them here, at turn boundaries. Rules:

* **Units only.** A pending item is always the oldest whole units of its region's removal order
  (the newest user message and every open group never enter it; completed groups after the
  newest user message do, so a long single-turn tool loop can be compacted;
  :mod:`regio.policies.units`).
* **Hysteresis.** A ``threshold`` / ``reclaim`` / ``manual`` / ``window`` item is refreshed
  (``Window.refresh_compaction``: units protected when it was queued may be compactable now)
  and narrowed (``Window.narrow_compaction``) to its fewest oldest units that bring its
  region to the region's *target* (default half its budget, never above half its trigger)
  -- FC-08, FC-28. A ``compact_count`` item (``sliding_window`` eviction) and a ``merge``
  are flushed as queued.
* **Carry-forward.** A compaction's summarizer input is the previous summary of the same
  source (if any), verbatim, followed by exactly the units it replaces (FC-11 part 4,
  FC-12). With ``carry_forward="replace"`` the new summary supersedes the previous one in the
  ``compact_history`` (``Window.complete_compaction(..., supersedes=...)``: a rolling summary
  whose ``meta["covers_all"]`` lists every id it stands for, size-checked against the units
  plus the summary it replaces); with ``"append"`` (default) summaries accumulate.
* **Commit gate.** An empty, whitespace-only, refusal-like or oversized summary changes
  nothing (:func:`regio.runtime.summarizer.check_summary`); the item stays queued and a strike
  is counted. ``no_progress_limit`` (N = 3) strikes in a row raise
  :class:`CompactionNoProgressError` (event ``compaction_no_progress``) instead of looping
  (FC-25); the exhausted content is not retried until it changes, and strikes reset only after a
  compaction brings the region below its trigger.

The flush is a generator that yields summarizer jobs, so :meth:`Engine.flush` and
:meth:`Engine.aflush` share every rule.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import msgspec

from regio.content import Entry, content_hash
from regio.errors import CompactionError
from regio.policies import is_user_turn_start
from regio.regions import Compacting, PendingCompaction

from .errors import CompactionNoProgressError, SummarizerError, SummaryRejected
from .events import CompactionFinished, CompactionNoProgress, CompactionRejected, CompactionStarted
from .fallback import bulk_fallback, fallback_point, fired_trigger
from .hierarchy import SummaryOutcome
from .planning import (
    compactable_regions,
    compactable_tokens,
    manual_targets,
    plan_targets,
    queue_everything,
    region_target,
)
from .summarizer import check_summary, summarizer_limits

if TYPE_CHECKING:
    from .engine import Engine

__all__ = [
    "BUG_TYPES",
    "CompactionBook",
    "CompactionResult",
    "SummaryJob",
    "compactable_regions",
    "compactable_tokens",
    "flush_steps",
    "manual_targets",
    "plan_targets",
    "queue_everything",
    "region_target",
    "room_steps",
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


class CompactionResult(msgspec.Struct, frozen=True):
    """What one flush or manual compaction did.

    ``replaced_ids`` left the prompt view (they stay in the transcript), ``kept_ids`` are the
    ids still in the compacted regions; ``tokens_before`` / ``tokens_after`` are the window's
    used tokens; ``summary_ids`` the committed summaries; ``summary_preview`` the start of the
    first one; ``summarizer_calls`` all requests made (hierarchical ones included);
    ``rejected`` the reasons of refused summaries along the way.
    """

    trigger: str
    replaced_ids: tuple[str, ...]
    kept_ids: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    summary_ids: tuple[str, ...] = ()
    summary_preview: str = ""
    summarizer_calls: int = 0
    rejected: tuple[str, ...] = ()

    @property
    def freed(self) -> int:
        """Tokens freed (``tokens_before - tokens_after``)."""
        return self.tokens_before - self.tokens_after


class CompactionBook(msgspec.Struct):
    """Compaction bookkeeping that is saved with the engine.

    ``strikes``: no-progress strikes per region; ``blocked``: digests of content that exhausted
    its attempts; ``floor_warned``: the whole-context trigger warning was given;
    ``versions``: summary version per source region; ``last``: the last result;
    ``scheduled``: instructions of a compaction scheduled by the ``compact`` tool (flushed at the
    next turn boundary), ``None`` when none is scheduled.
    """

    strikes: dict[str, int] = msgspec.field(default_factory=dict)
    blocked: list[str] = msgspec.field(default_factory=list)
    floor_warned: bool = False
    versions: dict[str, int] = msgspec.field(default_factory=dict)
    last: CompactionResult | None = None
    scheduled: str | None = None


class SummaryJob(msgspec.Struct, frozen=True):
    """One summarization the flush needs: ``entries`` (previous summary first, if any),
    ``extra`` instructions."""

    entries: tuple[Entry, ...]
    extra: str | None


def _blocked_key(p: PendingCompaction) -> str:
    return f"{p.region}:{content_hash(list(p.entry_ids))}"


def _narrow(
    engine: Engine, p: PendingCompaction, target: int, keep_messages: int | None = None
) -> PendingCompaction | None:
    """``p`` cut down to its fewest oldest units (in the region's removal order) that leave
    ``<= target`` tokens and, with ``keep_messages``, ``<= keep_messages`` entries in its region;
    ``None`` when nothing needs to go or none of its units is still compactable.

    A keep limit that falls inside a unit (a parallel call and its results, FC-03; a call and
    its result, FC-09) *shrinks* the kept tail to the unit boundary: the whole unit is
    summarized, never a part of it, and the kept tail never starts with a tool result. The
    protected units (newest user message, open groups) are always kept, even above the
    limits."""
    region = engine.window.region(p.region)
    entries = region.entries
    info = region.analysis()
    index = {e.id: i for i, e in enumerate(entries)}
    marked = {index[i] for i in p.entry_ids if i in index}
    units = [info.units[u] for u in info.removable if set(info.units[u]) <= marked]
    if not units:
        return None
    used = region.used_tokens
    removed = [0]
    removed_count = [0]
    for members in units:
        removed.append(removed[-1] + sum(entries[m].tokens for m in members))
        removed_count.append(removed_count[-1] + len(members))

    def fits(j: int) -> bool:
        if used - removed[j] > target:
            return False
        return keep_messages is None or len(entries) - removed_count[j] <= keep_messages

    def first_kept(j: int) -> int | None:
        gone = {m for members in units[:j] for m in members}
        return next((i for i in range(len(entries)) if i not in gone), None)

    cut = None
    # with ``cut_at_turns`` prefer a cut after which the view starts with a user turn (whole
    # turns go); else (and as a fallback) any unit boundary of the removal order
    for at_turn in (True, False) if engine.cut_at_turns else (False,):
        for j in range(0, len(units) + 1):
            if not fits(j):
                continue
            if at_turn:
                first = first_kept(j)
                if first is None or not is_user_turn_start(entries[first]):
                    continue
            cut = j
            break
        if cut is not None:
            break
    if cut is None:
        cut = len(units)
    if cut == 0:
        return None
    ids = [entries[m].id for members in units[:cut] for m in members]
    return engine.window.narrow_compaction(p.id, ids)


def _previous_summary(engine: Engine, p: PendingCompaction) -> Entry | None:
    if p.operation != "compact" or p.target is None:
        return None
    history = engine.window.region(p.target)
    for entry in reversed(history.entries):
        if entry.meta.get("source") == p.region:
            return entry
    return None


def _as_input(engine: Engine, previous: Entry) -> Entry:
    """The previous summary as summarizer input. With ``carry_forward="append"`` it stays in
    the history and the new summary replaces only the new units, so it is passed as context
    (``meta["context_only"]``): a summarizer must not copy it (the extractive one uses it only
    to skip identifiers it already holds, and sizes its output on the replaced units)."""
    if engine.carry_forward == "replace":
        return previous
    return msgspec.structs.replace(previous, meta={**previous.meta, "context_only": True})


#: A merge's input is widened to at least this many times the summarizer's
#: ``max_summary_tokens`` (when the history holds that much), so a summary at the cap still
#: makes progress.
MERGE_INPUT_FACTOR = 2


def _widen_merge(engine: Engine, p: PendingCompaction) -> PendingCompaction:
    """``p`` (a ``merge``) extended to the history's oldest summaries that hold more than
    ``MERGE_INPUT_FACTOR * max_summary_tokens`` (or all of them): a merge whose input is near
    the summary cap could never shrink it."""
    history = engine.window.region(p.region)
    try:
        cap = summarizer_limits(engine.summarizer)[2]
    except ValueError:
        return p
    floor = MERGE_INPUT_FACTOR * cap
    if p.tokens > floor:
        return p
    taken: list[Entry] = []
    for entry in history.entries:
        taken.append(entry)
        if sum(e.tokens for e in taken) > floor and len(taken) >= len(p.entry_ids):
            break
    if len(taken) <= len(p.entry_ids) or [e.id for e in taken[: len(p.entry_ids)]] != list(
        p.entry_ids
    ):
        return p
    wider = msgspec.structs.replace(
        p, entry_ids=tuple(e.id for e in taken), tokens=sum(e.tokens for e in taken)
    )
    engine.window.queue.put(wider)
    return wider


def _trigger_of(region: Any) -> int | None:
    return getattr(region, "trigger_tokens", None)


def _check_triggers(engine: Engine) -> None:
    """Queue compactions for regions at or over their trigger (FC-19: ``>=``)."""
    for region in engine.window.regions:
        if isinstance(region, Compacting) and not region.pending():
            trigger = region.trigger_tokens
            if trigger is not None and region.used_tokens >= trigger:
                engine.window.request_compaction(region, reason="threshold")


def flush_steps(
    engine: Engine,
    *,
    trigger: str,
    extra: str | None = None,
    targets: dict[str, int] | None = None,
    check_triggers: bool = True,
    keep_messages: int | None = None,
    only: str | None = None,
    tolerate_fallback: bool = False,
) -> Generator[SummaryJob, SummaryOutcome, CompactionResult | None]:
    """Flush the pending-compaction queue (module doc). Yields :class:`SummaryJob` s and
    receives their :class:`SummaryOutcome` (or has the summarizer's exception thrown in).

    ``targets``: region -> tokens to keep (overrides :func:`region_target`);
    ``keep_messages``: at most this many entries kept verbatim in each compacted region (a
    manual "keep the last N messages", shrunk to a unit boundary, see ``_narrow``); ``only``:
    flush only the items of this region (the rest stay queued); ``tolerate_fallback`` (the
    automatic flush of :meth:`Engine.request`): a region that declares a bulk fallback
    (``sliding_window`` with ``compact`` eviction) does not raise after its strikes; the
    failure is reported by events and the region falls back to bulk eviction past
    ``max_items + 2*compact_count`` (:mod:`regio.runtime.fallback`).

    Returns ``None`` when there was nothing to flush, else a :class:`CompactionResult`.
    Raises :class:`CompactionNoProgressError` after ``engine.no_progress_limit`` strikes (the
    message names the trigger that fired: items for a ``compact_count`` batch, tokens
    otherwise). Exceptions of :data:`BUG_TYPES` raised by the summarizer (``KeyError``,
    ``TypeError``, ...) are programming errors: they propagate unchanged and count no strike.
    """
    window = engine.window
    book = engine.book
    if check_triggers:
        _check_triggers(engine)
    if not [p for p in window.pending_compactions() if only is None or p.region == only]:
        return None
    before = window.used_tokens
    replaced: list[str] = []
    summaries: list[Entry] = []
    touched: list[str] = []
    rejected: list[str] = []
    calls = 0
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
        p = queue[0]
        seen.add(p.id)
        key = _blocked_key(p)
        if key in book.blocked:
            window.fail_compaction(p.id, "no progress earlier on the same content", drop=True)
            if p.reason == "compact_count":
                bulk_fallback(engine, window.region(p.region), p, "no progress earlier")
            continue
        region = window.region(p.region)
        if p.operation == "merge":
            p = _widen_merge(engine, p)
        if p.operation == "compact" and p.reason != "compact_count":
            goal = (targets or {}).get(p.region, region_target(engine, region))
            fresh = window.refresh_compaction(p.id)
            narrowed = _narrow(engine, fresh, goal, keep_messages) if fresh is not None else None
            if narrowed is None:
                window.fail_compaction(
                    p.id,
                    f"already at or below its target ({goal}) or nothing compactable",
                    drop=True,
                )
                continue
            p = narrowed
        by_id = {e.id: e for e in region.entries}
        entries = [by_id[i] for i in p.entry_ids if i in by_id]
        previous = _previous_summary(engine, p)
        inputs = ((_as_input(engine, previous),) if previous is not None else ()) + tuple(entries)
        if region.name not in touched:
            touched.append(region.name)
        engine.emit(CompactionStarted(trigger, (p.id,), p.tokens, region_target(engine, region)))
        summary: Entry | None = None
        while True:
            calls_before = calls
            try:
                try:
                    outcome = yield SummaryJob(inputs, extra)
                except _BUG_TYPES:
                    raise  # a programming error in the summarizer surfaces unchanged (L7)
                except Exception as exc:  # the summarizer call failed: a strike
                    if isinstance(exc, (SummarizerError, SummaryRejected)):
                        raise
                    raise SummarizerError(f"the summarizer raised {exc!r}", cause=exc) from exc
                calls += len(outcome.calls)
                summary = _accept(engine, p, outcome, previous)
            except (SummaryRejected, SummarizerError, CompactionError) as exc:
                if calls == calls_before:
                    calls += 1
                reason = exc.reason if isinstance(exc, SummaryRejected) else "error"
                rejected.append(reason)
                strikes = book.strikes.get(region.name, 0) + 1
                book.strikes[region.name] = strikes
                engine.emit(CompactionRejected(p.id, region.name, reason, str(exc), strikes))
                if strikes < engine.no_progress_limit:
                    window.fail_compaction(p.id, f"summary rejected ({reason})", drop=False)
                    continue
                window.fail_compaction(p.id, "no progress", drop=True)
                book.blocked.append(key)
                size, trig, unit = fired_trigger(engine, region, p)
                engine.emit(CompactionNoProgress(region.name, strikes, size, trig))
                fell_back = (
                    bulk_fallback(engine, region, p, "no progress")
                    if p.reason == "compact_count"
                    else ()
                )
                if tolerate_fallback and fallback_point(region) is not None:
                    # the region declares a bulk fallback (armed, or just taken): the turn goes
                    # on; the request's ceiling check still raises if the window is too large
                    break
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
            else:
                break
        if summary is None:
            continue
        replaced.extend(p.entry_ids)
        summaries.append(summary)
        region_trigger = _trigger_of(region)
        if region_trigger is None or region.used_tokens < region_trigger:
            book.strikes.pop(region.name, None)
            book.blocked = [b for b in book.blocked if not b.startswith(f"{region.name}:")]
    if not replaced and not summaries:
        return None
    kept = tuple(e.id for name in touched for e in window.region(name).entries)
    result = CompactionResult(
        trigger=trigger,
        replaced_ids=tuple(replaced),
        kept_ids=kept,
        tokens_before=before,
        tokens_after=window.used_tokens,
        summary_ids=tuple(s.id for s in summaries),
        summary_preview=summaries[0].text[:PREVIEW_CHARS] if summaries else "",
        summarizer_calls=calls,
        rejected=tuple(rejected),
    )
    book.last = result
    engine.emit(
        CompactionFinished(
            trigger,
            result.replaced_ids,
            kept,
            before,
            result.tokens_after,
            result.summary_ids,
            calls,
            result.summary_preview,
        )
    )
    return result


def _accept(
    engine: Engine, p: PendingCompaction, outcome: SummaryOutcome, previous: Entry | None
) -> Entry:
    """Check and commit one summary; raises (changing nothing) when it is refused."""
    window = engine.window
    text = outcome.text
    tokens = engine.count_text(text)
    rolling = (
        engine.carry_forward == "replace" and previous is not None and p.operation == "compact"
    )
    replaced = p.tokens + (previous.tokens if (rolling and previous is not None) else 0)
    check_summary(text, summary_tokens=tokens, replaced_tokens=replaced)
    target = window.region(p.target) if p.target else None
    if target is None:
        raise CompactionError(f"{p.id}: region {p.region!r} has no compact_history")
    if tokens > target.budget:
        raise SummaryRejected(
            f"the summary ({tokens} tokens) is larger than region {target.name!r} "
            f"({target.budget} tokens); nothing was changed",
            reason="oversized",
            summary_tokens=tokens,
            replaced_tokens=replaced,
        )
    version = engine.book.versions.get(p.region, 0) + 1
    meta: dict[str, Any] = {"summary": True, "version": version}
    if p.operation == "compact":
        covered = (
            list(previous.meta.get("covers_all", previous.meta.get("covers", [])))
            if (previous is not None and rolling)
            else []
        )
        meta["covers_all"] = covered + list(p.entry_ids)
    entry = window.make_entry(text, tokens=tokens, meta=meta)
    # a rolling summary carries the previous one forward: the regions layer removes it in the
    # same commit and checks the size against everything the new summary replaces
    supersedes = (previous.id,) if (rolling and previous is not None) else ()
    committed = window.complete_compaction(p.id, entry, supersedes=supersedes)
    engine.book.versions[p.region] = version
    engine.record("compaction", p.region, entry=committed, ids=p.entry_ids)
    return committed


def room_steps(
    engine: Engine, region_name: str, tokens: int
) -> Generator[SummaryJob, SummaryOutcome, CompactionResult | None] | None:
    """Compaction that makes room for a write of ``tokens`` into ``region_name`` (FC-12).

    A ``compacting`` region paired with a ``compact_history`` (admission ``evict``) would
    otherwise roll its oldest units off to fit the write, and they would never reach the
    summary. Instead, its fewest oldest compactable units that bring it to its hysteresis
    target (:func:`region_target`), and at least leave room for the write, are summarized first
    (previous summary carried forward, as in every flush). Returns the flush
    generator to drive, or ``None`` when the write fits (or the region is not such a region);
    units that cannot be compacted (the newest user message, open groups) stay, and the write
    then rolls off or is refused by the region as usual."""
    region = engine.window.region(region_name)
    if not isinstance(region, Compacting) or region.compact_target is None:
        return None
    if region.admission != "evict" or region.used_tokens + tokens <= region.budget:
        return None
    engine.window.request_compaction(region, reason="room")
    return flush_steps(
        engine,
        trigger="room",
        targets={region.name: max(0, min(region_target(engine, region), region.budget - tokens))},
        check_triggers=False,
        only=region.name,
    )
