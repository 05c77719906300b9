"""Planning a write that may roll units off: the fewest units of the removal order go, so the
region fits its token budget and its history window (:mod:`regio.policies.units`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from regio.content import Entry
from regio.policies import HistoryCaps, HistoryCounts, UnitAnalysis, analyze
from regio.regions.results import Refusal, WritePlan

__all__ = ["RollingRegion", "plan_rolloff"]


class RollingRegion(Protocol):
    """What :func:`plan_rolloff` reads of a region (a :class:`regio.regions.Region`): its
    admission, entries, tokens (used and budget), history counts and refusals."""

    admission: str

    @property
    def entries(self) -> Sequence[Entry]: ...

    def history_counts(self) -> HistoryCounts:
        """The region's :class:`HistoryCounts` (kept incrementally)."""
        ...

    @property
    def used_tokens(self) -> int: ...

    def refusal(self, entry: Entry, reason: str, *, info: UnitAnalysis | None = None) -> Refusal:
        """The :class:`Refusal` of ``entry`` for ``reason``."""
        ...

    @property
    def budget(self) -> int: ...


def plan_rolloff(
    region: RollingRegion,
    entry: Entry,
    *,
    history: HistoryCaps | None = None,
    fallback: bool = False,
    item_reason: str = "max_items",
    token_goal: int | None = None,
) -> WritePlan | Refusal:
    """See :meth:`regio.regions.Region.plan_rolloff` (``token_goal``: token hysteresis, free
    down to this many tokens in one step)."""
    fits = region.used_tokens + entry.tokens <= region.budget
    caps = history if history is not None and not history.empty else None
    n_old = len(region.entries)
    if region.admission == "reject":
        if not fits:
            return region.refusal(entry, "region_full")
        if caps is not None:
            cut, met = analyze([*region.entries, entry], also_protect=(n_old,)).history_cut(caps)
            if cut > 0 or not met:
                return region.refusal(entry, item_reason)
        return WritePlan(entry)
    step = token_goal is not None
    if fits and caps is None and not step:
        return WritePlan(entry)
    if (
        fits
        and not step
        and caps is not None
        and caps.max_entries is None
        and caps.max_units is None
        and region.history_counts().extend(entry).keeps_all(caps.max_turns, caps.max_tool_calls)
    ):
        return WritePlan(entry)  # the history window keeps everything: O(1) per write
    cand = [*region.entries, entry]
    info = analyze(cand, also_protect=(n_old,))
    j_tok = info.fewest_removals(max_tokens=region.budget)
    if j_tok is None:
        return region.refusal(entry, "region_full", info=info)
    if token_goal is not None and token_goal < region.budget:
        deeper = info.fewest_removals(max_tokens=token_goal)
        j_tok = info.removable_count if deeper is None else max(j_tok, deeper)
    j, over, reason = j_tok, None, "tokens"
    if caps is not None:
        cut, met = info.history_cut(caps)
        j_hist = info.units_before(cut)
        if not met:
            over = item_reason
        if j_hist > j:
            j, reason = j_hist, item_reason
    if fallback and (reason != "tokens" or step):
        reason = "compaction_fallback"
    ids = tuple(cand[i].id for i in info.removal(j))
    return WritePlan(
        entry, evict_ids=ids, evict_reason=reason, fallback=fallback, over_budget_reason=over
    )
