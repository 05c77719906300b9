"""Where the relief chain clears around a summary (``clear_after_summary``; docs/relief.md,
"When the chain runs").

A summary under token pressure rewrites the cached prefix from the conversation's start, so
clearing in the same flush costs no extra cache write. Two places:

* **after the cut** (:func:`regio.compaction.relief._chain.relieve_after`): the summary cuts to its
  target as it would alone, then clears what it kept. Chosen when clearing what the summary
  keeps frees at least a stage's minimum: the conversation ends below the target and the next
  compaction comes later;
* **before the cut** (:func:`relieve_before_cuts`): otherwise (the kept part holds a few small
  results), every clearable result of the conversation is cleared first, and the summary,
  narrowed after, covers only what clearing could not free; the kept tail holds the cleared
  turns as placeholders instead of fewer verbatim turns. Only when the part the summary then
  covers still holds at least twice the summarizer's ``max_summary_tokens`` (a summary must be
  smaller than what it replaces, and an LLM summarizer writes up to its maximum): else clearing
  first would leave a summary with nothing worth summarizing, and the chain clears after.

The decision reads the cut the summary would take (:func:`regio.compaction._cuts.cut_ids`) and one
relief pass over the conversation (:func:`plan_kept`), whose edits and gains the clearing then
reuses (as it reuses those of the flush's earlier pass, through the flush's
:class:`regio.compaction.relief._memo.ReliefMemo`); neither the region nor the compaction queue
changes until the clearing runs.
"""

from __future__ import annotations

from typing import Any

import attrs

from regio.compaction._cuts import cut_ids, unsent, unsent_from
from regio.compaction._planning import region_target
from regio.regions import SlidingWindow
from regio.session._session import Session
from regio.summarizers._protocol import summarizer_limits

from ._chain import _apply, _Pass, _stages
from ._memo import ReliefMemo

__all__ = ["KeptClearing", "plan_kept", "relieve_before_cuts"]


@attrs.define
class KeptClearing:
    """What clearing would free on a conversation before a summary (:func:`plan_kept`):
    ``gains`` (entry index -> tokens its candidates free, each block counted once at its best
    stage). Made by one relief pass, reused by :meth:`apply`."""

    run: _Pass
    gains: dict[int, int]

    def apply(self) -> int:
        """Run every stage on all its candidates, when together they free the stage's minimum
        (a stage below it does nothing). Returns the tokens freed."""
        freed = 0
        run = self.run
        for s in run.stages:
            cands = run.candidates(s)
            chosen = run.choose(s, cands, sum(max(0, run.gain(s, x)) for x in cands))
            if chosen:
                freed += _apply(run.c, run.region, s.name, chosen, run._edit_of(s))
                run.drop_later(s)
        return freed


def plan_kept(
    c: Session, region: SlidingWindow, cut: set[str], memo: ReliefMemo | None = None
) -> KeptClearing | None:
    """Before a summary whose verbatim cut covers the entries ``cut`` (ids): ``None`` when
    clearing what it keeps frees at least a stage's minimum (clear after the cut), when relief
    or ``clear_after_summary`` is off, or when nothing is clearable; else the per-entry gains
    of clearing (:class:`KeptClearing`). ``memo``: the flush's memo of edits and gains
    (``None``: the pass keeps its own). Changes nothing."""
    policy = c.options.relief
    if policy is None or not policy.clear_after_summary:
        return None
    run = _Pass(c, region, policy, _stages(c, policy), memo or ReliefMemo())
    best: dict[tuple[int, int], int] = {}
    for s in run.stages:
        kept = [x for x in run.candidates(s) if region.entries[x.index].id not in cut]
        gain = sum(max(0, run.gain(s, x)) for x in kept)
        if gain > 0 and gain >= s.at_least:
            return None
        for x in run.candidates(s):
            best[(x.index, x.block)] = max(best.get((x.index, x.block), 0), run.gain(s, x))
    gains: dict[int, int] = {}
    for (index, _), gain in best.items():
        if gain > 0:
            gains[index] = gains.get(index, 0) + gain
    return KeptClearing(run, gains) if gains else None


def relieve_before_cuts(
    c: Session,
    trigger: str,
    targets: dict[str, int] | None,
    only: str | None,
    keep_messages: int | None,
    memo: ReliefMemo | None = None,
) -> int:
    """Clear before the cut where that is the right place (module doc), for each queued
    ``compact`` of a conversation under token pressure (not ``manual`` and not a
    ``compact_count`` batch; ``only``: that region alone), toward its flush target
    (``targets`` or :func:`region_target`; ``memo``: the flush's memo of edits and gains).
    Returns the tokens freed."""
    relief = c.options.relief
    if relief is None or not relief.clear_after_summary or trigger == "manual":
        return 0
    freed = 0
    for p in c.window.pending_compactions():
        region: Any = c.window.region(p.region)
        if only not in (None, p.region) or p.operation != "compact":
            continue
        if p.reason in ("compact_count", "manual") or not isinstance(region, SlidingWindow):
            continue
        goal = (targets or {}).get(p.region, region_target(c, region))
        info = region.analysis()
        marked = set(info.removal(info.removable_count))
        held = unsent(region.entries, unsent_from(c))  # the summary will not take these
        verbatim = cut_ids(c, region, marked, goal, keep_messages, held=held)
        plan = plan_kept(c, region, set(verbatim), memo) if verbatim else None
        if plan is None:
            continue
        cut = set(cut_ids(c, region, marked, goal, keep_messages, plan.gains, held))
        index = {e.id: i for i, e in enumerate(region.entries)}
        covered = sum(
            region.entries[i].tokens - plan.gains.get(i, 0)
            for i in map(index.get, cut)
            if i is not None
        )
        if covered < 2 * summarizer_limits(c.summarizer)[2]:
            continue  # nothing worth a summary would be left: clear after the cut
        freed += plan.apply()
    return freed
