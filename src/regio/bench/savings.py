"""Each strategy's cost against ``recorded`` and the cheapest unbroken peer, like with like.

A totals table sums every strategy over the traces it ran on, and not every strategy runs on
every trace (``regio-delegate`` is left out where the blueprint renders for an API without
provider compaction). Its ``vs rec`` / ``vs peer`` then compare it with ``recorded`` and the
peers summed over the same traces it ran on, never with their totals over all of them
(:func:`compare_costs`); :func:`partial_lines` says under the table which strategies that
concerns and over how many traces.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from regio.bench.peers import PEERS
from regio.bench.report import LayoutResult, ModelResult
from regio.cache.billing import total

__all__ = ["CostComparison", "compare_costs", "partial_lines"]


@attrs.frozen
class CostComparison:
    """One strategy's row of a table: ``vs_recorded`` / ``vs_peer`` (``"+4.2%"``, negative =
    cheaper, ``"—"`` when there is nothing to compare with), over the ``traces`` it ran on of
    the table's ``of`` traces."""

    vs_recorded: str
    vs_peer: str
    traces: int
    of: int

    @property
    def partial(self) -> bool:
        """True when the strategy ran on fewer traces than the table sums."""
        return self.traces < self.of


def _ratio(cost: float | None, ref: float | None) -> str:
    return "—" if cost is None or not ref else f"{cost / ref - 1:+.1%}"


def _over(parts: Sequence[dict[str, LayoutResult]], name: str) -> tuple[float | None, int] | None:
    """``name``'s cost (USD; ``None`` without prices) and broken calls summed over ``parts``;
    ``None`` when it is missing from any of them."""
    found = [p[name] for p in parts if name in p]
    if not found or len(found) < len(parts):
        return None
    return total(x.cost_usd for x in found), sum(x.broken_requests for x in found)


def compare_costs(
    model: ModelResult, parts: Sequence[ModelResult] = ()
) -> dict[str, CostComparison]:
    """Per strategy of ``model`` (a table: one trace, or totals over the traces whose results
    under the same cache model are ``parts``): its cost against ``recorded`` and against the
    cheapest unbroken peer (any of :data:`regio.bench.peers.PEERS`, never regio's layouts),
    both summed over exactly the traces the strategy ran on. A peer that did not run on all
    of them, or broke a call on one of them, is no reference; ``"—"`` when none is left (or
    ``recorded`` did not run on all of them), or when a reference peer is unpriced (its
    summarizer's model has no price: the cheapest peer is then unknown, never the cheapest
    of the priced ones). Without ``parts`` ``model`` is one trace."""
    tables = [{x.layout: x for x in p.layouts} for p in (parts or (model,))]
    out: dict[str, CostComparison] = {}
    for x in model.layouts:
        ran = [t for t in tables if x.layout in t]
        own = _over(ran, x.layout)
        cost = own[0] if own is not None else None
        recorded = _over(ran, "recorded")
        peers = [p[0] for name in PEERS if (p := _over(ran, name)) is not None and p[1] == 0]
        priced = [c for c in peers if c is not None]
        cheapest = min(priced, default=None) if len(priced) == len(peers) else None
        out[x.layout] = CostComparison(
            vs_recorded=_ratio(cost, recorded[0] if recorded is not None else None),
            vs_peer=_ratio(cost, cheapest),
            traces=len(ran),
            of=len(tables),
        )
    return out


def partial_lines(model: ModelResult, parts: Sequence[ModelResult] = ()) -> list[str]:
    """One line per strategy of ``model`` that ran on fewer of the traces (``parts``) than
    the table sums: over which traces its row and its ``vs rec`` / ``vs peer`` are."""
    out = []
    for name, c in compare_costs(model, parts).items():
        if c.partial:
            out.append(
                f"{name} ({model.cache_model}) ran on {c.traces} of {c.of} traces: its calls "
                f"and cost are over those {c.traces}, and its vs rec / vs peer compare it with "
                f"recorded and the peers on those {c.traces} traces only; it is not ranked "
                "against the totals over all of them"
            )
    return out
