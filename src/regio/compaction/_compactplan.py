"""What a compaction scheduled now would really do, in words: the ``compact`` tool's answer.

The ``compact`` tool runs mid-turn, so it only schedules a compaction; the next turn boundary
flushes it, and each region is cut to the fewest oldest units that bring it to its
hysteresis target (:func:`regio.compaction._planning.region_target`). A region already at or below
its target is not summarized at all. :func:`compact_plan` computes those cuts without touching
anything (:func:`regio.compaction._cuts.cut_ids`), so the tool says how many tokens of which
region will be summarized, or that nothing is due and why, instead of the size of everything
compactable.
"""

from __future__ import annotations

import attrs

from regio.session._session import Session

from ._cuts import cut_ids
from ._planning import compactable_regions, region_target

__all__ = ["RegionCut", "compact_plan", "describe_plan"]


@attrs.frozen
class RegionCut:
    """The cut of one region: ``tokens`` and ``entries`` that would be summarized,
    ``used`` its size now, ``target`` what it keeps after a compaction (tokens)."""

    region: str
    tokens: int
    entries: int
    used: int
    target: int


def compact_plan(c: Session) -> list[RegionCut]:
    """The cut of every compactable region at the next turn boundary (changes nothing)."""
    out: list[RegionCut] = []
    for region in compactable_regions(c):
        target = region_target(c, region)
        info = region.analysis()
        marked = set(info.removal(info.removable_count))
        ids = set(cut_ids(c, region, marked, target)) if marked else set()
        gone = [e for e in region.entries if e.id in ids]
        out.append(
            RegionCut(
                region.name, sum(e.tokens for e in gone), len(gone), region.used_tokens, target
            )
        )
    return out


def describe_plan(plan: list[RegionCut]) -> str:
    """The ``compact`` tool's answer for ``plan`` (module doc)."""
    due = [cut for cut in plan if cut.tokens > 0]
    if due:
        parts = [
            f"{cut.tokens} tokens of {cut.region!r} ({cut.entries} oldest entries; about "
            f"{cut.used - cut.tokens} tokens stay verbatim)"
            for cut in due
        ]
        return (
            "compaction scheduled for the next turn boundary: "
            + "; ".join(parts)
            + " will be summarized. Rules, preferences, goals, open to-dos, named values and "
            "decisions are kept verbatim as durable items."
        )
    if not plan:
        return "no compaction is due: no region of this window can be compacted"
    reasons = [
        f"{cut.region!r} holds {cut.used} tokens, at or below the {cut.target} tokens it keeps "
        "after a compaction"
        if cut.used <= cut.target
        else f"{cut.region!r} holds {cut.used} tokens, but what is over its target of "
        f"{cut.target} is its newest user message and open tool calls, never summarized"
        for cut in plan
    ]
    return "no compaction is due, nothing will be summarized: " + "; ".join(reasons)
