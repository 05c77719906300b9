"""The bench's plot (matplotlib, Agg backend, optional ``bench`` extra): per cache model, the
cumulative hit rate and the cumulative cost per request side by side, and cost against
retention (:func:`write_plot`)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regio.bench.report import BenchReport, LayoutResult, ModelResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["cumulative_series", "plot_available", "series_style", "write_plot"]


def plot_available() -> bool:
    """True when matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


_STYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def series_style(k: int) -> dict[str, str]:
    """Line style and marker of the ``k``-th series: distinct pairs for the first 32 series
    (4 line styles x 8 markers), so series that coincide stay told apart."""
    return {"linestyle": _STYLES[k % 4], "marker": _MARKERS[(k // 4 + k) % 8]}


def cumulative_series(x: LayoutResult) -> tuple[list[float], list[float]]:
    """Per request (all traces in order): the cumulative hit rate (cache-read / prompt
    tokens so far, 0..1) and the cumulative cost (USD): the model calls and the summarizer
    calls made by then (``compaction_cost_per_request``), so the last point is the table's
    cost (``cost_usd``); no cost points when that cost is unpriced."""
    hits: list[float] = []
    costs: list[float] = []
    read = prompt = 0
    total = 0.0
    for r, p in zip(x.read_per_request, x.prompt_per_request, strict=False):
        read, prompt = read + r, prompt + p
        hits.append(read / prompt if prompt else 0.0)
    if x.total_cost_usd is None:  # unpriced: no cost line, never one at $0 for the unknown
        return hits, costs
    summarized = x.compaction_cost_per_request or (0.0,) * len(x.cost_per_request)
    for c, s in zip(x.cost_per_request, summarized, strict=False):
        total += c + s
        costs.append(total)
    return hits, costs


def _line_panels(hit_ax: Axes, cost_ax: Axes, side: Axes, model: ModelResult) -> None:
    """The hit-rate and cost lines of ``model`` and its cost-vs-retention points. Markers of
    series k start at request k, so identical lines still show every series' markers."""
    unplotted: list[str] = []
    for k, x in enumerate(model.layouts):
        style = series_style(k)
        hits, costs = cumulative_series(x)
        every = max(1, len(model.layouts), max(len(hits), len(costs)) // 12)
        marks: dict[str, Any] = {"markevery": (k % every, every), "markersize": 4, **style}
        label = x.layout + (" (broken)" if x.broken_requests else "")
        hit_ax.plot(range(1, len(hits) + 1), hits, label=label, **marks)
        (line,) = cost_ax.plot(range(1, len(costs) + 1), costs, label=label, **marks)
        cost = x.total_cost_usd
        if x.retention is None or cost is None:
            unplotted.append(x.layout)
            continue
        side.scatter(
            [cost], [x.retention["overall"]], marker=style["marker"], color=line.get_color()
        )
        side.annotate(x.layout, (cost, x.retention["overall"]), fontsize=7)
    if unplotted:
        note = textwrap.fill("no compaction: " + ", ".join(unplotted), 70)
        side.text(0.01, 0.02, note, fontsize=7, transform=side.transAxes)


def _label(ax: Axes, title: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("request (all traces, in order)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")


def write_plot(report: BenchReport, path: str | os.PathLike[str]) -> Path:
    """Write the plot (PNG) to ``path``; returns the path. Per cache model, side by side: the
    cumulative hit rate per request, the cumulative cost (USD) per request (both over all
    traces in order, one line per strategy, each with its own line style and marker, see
    :func:`series_style`), and cost against retention per strategy (strategies with no
    compaction measured are listed, not plotted). Raises ``ImportError`` when matplotlib is
    not installed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = report.totals
    rows = max(1, len(models))
    fig, axes = plt.subplots(rows, 3, figsize=(18, 3.8 * rows), squeeze=False)
    for (hit_ax, cost_ax, side), model in zip(axes, models, strict=False):
        _line_panels(hit_ax, cost_ax, side, model)
        _label(hit_ax, f"cumulative hit rate — {model.cache_model}", "cache-read / prompt")
        hit_ax.set_ylim(0, 1.05)
        _label(cost_ax, f"cumulative cost — {model.cache_model}", "USD")
        side.set_title(f"cost vs retention (upper bound) — {model.cache_model}", fontsize=10)
        side.set_xlabel("total cost incl. summarizer calls (USD)")
        side.set_ylabel("retained after compaction")
        side.set_ylim(0, 1.05)
        side.grid(alpha=0.3)
    fig.tight_layout()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=100)
    plt.close(fig)
    return p
