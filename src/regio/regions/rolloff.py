"""Planning a write that may roll units off: the fewest units of the removal order go, so the
region fits its token budget and its history window (:mod:`regio.policies.units`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio.content import Entry
from regio.policies import HistoryCaps, analyze
from regio.regions.results import Refusal, WritePlan

if TYPE_CHECKING:
    from regio.regions.base import Region

__all__ = ["plan_rolloff"]


def plan_rolloff(
    region: Region,
    entry: Entry,
    *,
    history: HistoryCaps | None = None,
    fallback: bool = False,
    item_reason: str = "max_items",
) -> WritePlan | Refusal:
    """See :meth:`regio.regions.Region.plan_rolloff`."""
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
    if fits and caps is None:
        return WritePlan(entry)
    if (
        fits
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
    j, over, reason = j_tok, None, "tokens"
    if caps is not None:
        cut, met = info.history_cut(caps)
        j_hist = info.units_before(cut)
        if not met:
            over = item_reason
        if j_hist > j:
            j, reason = j_hist, item_reason
    if fallback and reason != "tokens":
        reason = "compaction_fallback"
    ids = tuple(cand[i].id for i in info.removal(j))
    return WritePlan(
        entry, evict_ids=ids, evict_reason=reason, fallback=fallback, over_budget_reason=over
    )
