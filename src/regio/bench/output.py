"""Showing a :class:`BenchReport`: rich tables and the cumulative hit-rate plot.

The plot (matplotlib, Agg backend, optional ``bench`` extra) has one panel per cache model:
x is the request number over all traces of the report in order, y the cumulative hit rate
sum read / sum prompt tokens up to that request, one line per layout. A line that runs higher
reads more of its prompts from the cache; the gap to 1.0 is what was written or uncached.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from regio.bench.metrics import cumulative_hit_rates, total_models
from regio.bench.report import BenchReport, ModelResult, TraceResult
from regio.console import stdout_console

__all__ = ["group_table", "model_table", "plot_available", "print_report", "write_plot"]


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def _tok(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1e6:.2f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    return f"{n:,}"


def model_table(title: str, model: ModelResult) -> Table:
    """One row per layout: requests, tokens, hit rate, oracle share and cost."""
    table = Table(title=f"{title} — {model.cache_model}", title_justify="left")
    table.add_column("layout", no_wrap=True)
    for col in ("calls", "prompt", "read", "write", "uncached", "hit", "oracle", "share", "cost"):
        table.add_column(col, justify="right", no_wrap=True)
    cheapest = min((x.cost_usd for x in model.layouts if x.cost_usd is not None), default=None)
    for x in model.layouts:
        cost = _money(x.cost_usd)
        if cheapest is not None and x.cost_usd == cheapest:
            cost = f"[bold green]{cost}[/]"
        table.add_row(
            x.layout,
            str(x.requests),
            _tok(x.prompt_tokens),
            _tok(x.cache_read_tokens),
            _tok(x.cache_write_tokens),
            _tok(x.uncached_tokens),
            f"{x.hit_rate:.1%}",
            f"{x.oracle_hit_rate:.1%}",
            f"{x.oracle_share:.1%}",
            cost,
        )
    return table


def group_table(title: str, traces: Sequence[TraceResult]) -> list[Table]:
    """Tables of the totals over ``traces`` (one per cache model)."""
    return [model_table(title, m) for m in total_models([t.models for t in traces])]


def print_report(
    report: BenchReport, console: Console | None = None, *, per_trace: bool = False
) -> None:
    """Print totals per trace group (source format) and over everything; with
    ``per_trace`` also one table per trace."""
    console = console or stdout_console()
    groups: dict[str, list[TraceResult]] = {}
    for t in report.traces:
        groups.setdefault(f"{t.group} ({t.blueprint})", []).append(t)
    if per_trace:
        for t in report.traces:
            for m in t.models:
                console.print(model_table(t.trace, m))
    for name, items in groups.items():
        mean_bound = sum(t.append_only_hit_rate for t in items) / len(items)
        console.print(
            f"[bold]{name}[/]: {len(items)} traces, "
            f"{sum(t.requests for t in items)} model calls, "
            f"{sum(t.region_writes for t in items)} region writes during the run, "
            f"mean append-only bound {mean_bound:.1%}"
        )
        for table in group_table(name, items):
            console.print(table)
    for m in report.totals:
        console.print(model_table(f"all {len(report.traces)} traces", m))
    for note in report.notes:
        console.print(f"[yellow]note:[/] {note}")


def plot_available() -> bool:
    """True when matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_plot(report: BenchReport, path: str | os.PathLike[str]) -> Path:
    """Write the cumulative hit-rate plot (PNG) to ``path``; returns the path. Raises
    ``ImportError`` when matplotlib is not installed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = report.totals
    fig, axes = plt.subplots(len(models), 1, figsize=(9, 3.2 * max(1, len(models))), squeeze=False)
    for ax, model in zip(axes[:, 0], models, strict=True):
        for x in model.layouts:
            ys = cumulative_hit_rates(x.read_per_request, x.prompt_per_request)
            ax.plot(range(1, len(ys) + 1), ys, label=f"{x.layout} ({x.hit_rate:.1%})")
        ax.set_title(f"cumulative cache hit rate — {model.cache_model}", fontsize=10)
        ax.set_xlabel("request (all traces, in order)")
        ax.set_ylabel("hit rate")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p
