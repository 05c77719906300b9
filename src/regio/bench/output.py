"""Showing a :class:`BenchReport`: rich tables and the plot.

Tables: one row per strategy with cost and retention side by side, the trace bound and the
share of it, the cost over the cost bound, and the cost against ``recorded`` and the best
unbroken peer; under each table one line per strategy with broken calls, giving the reasons
(:func:`broken_lines`). The plot
(matplotlib, Agg backend, optional ``bench`` extra) has three panels per cache model: the
cumulative hit rate and the cumulative cost per request side by side, and cost against
retention (:func:`write_plot`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from regio.bench.metrics import total_models
from regio.bench.plot import cumulative_series, plot_available, series_style, write_plot
from regio.bench.report import BenchReport, LayoutResult, ModelResult, TraceResult, UsageAgreement
from regio.bench.savings import compare_costs, partial_lines
from regio.console import TableColumn, compact_number, fit_tables, stdout_console

__all__ = [
    "AS_SENT",
    "agreement_lines",
    "broken_lines",
    "cumulative_series",
    "group_table",
    "model_table",
    "model_tables",
    "plot_available",
    "print_report",
    "recorded_window_line",
    "retention_line",
    "series_style",
    "write_plot",
]


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.4f}" if value < 100 else f"${value:,.0f}"


def _tok(n: int) -> str:
    return compact_number(n)


def _share(value: float) -> str:
    return f"{value:.0%}" if value >= 9.995 else f"{value:.1%}"


def _retention(x: LayoutResult) -> str:
    if x.retention is None:
        return "—"
    return f"{x.retention.get('overall', 0.0):.0%}"


def _compaction(x: LayoutResult) -> str:
    if x.summarizer == "offline":
        return f"{x.compaction_calls} ext $0"
    if x.compaction_calls == 0:
        return "0"
    cost = "n/a" if x.compaction_cost_usd is None else f"${x.compaction_cost_usd:.3f}"
    return f"{x.compaction_calls} {cost}"


#: Columns of the strategy tables; the strategy name is the key repeated when they split.
_COLUMNS = (
    TableColumn("strategy"),
    *(
        TableColumn(c, justify="right")
        for c in (
            *("calls", "prompt", "hit", "bound", "of bnd", "marks", "summ.", "kept"),
            *("broken", "cost", "of c.bnd", "vs rec", "vs peer"),
        )
    ),
)


#: The ``recorded`` row's label in a pressure run: the agents' requests cannot be re-windowed.
AS_SENT = "recorded (as sent)"


def _model_rows(
    model: ModelResult, windowed: bool = False, parts: Sequence[ModelResult] = ()
) -> list[list[str]]:
    savings = compare_costs(model, parts)
    ranked = [x for x in model.layouts if x.broken_requests == 0 and not savings[x.layout].partial]
    # an unpriced strategy may be the cheapest: none is green then (never the priced ones')
    costs = [c for x in ranked if (c := x.total_cost_usd) is not None]
    cheapest = min(costs, default=None) if len(costs) == len(ranked) else None
    rows = []
    for x in model.layouts:
        cost = _money(x.total_cost_usd)
        if x in ranked and cheapest is not None and x.total_cost_usd == cheapest:
            cost = f"[bold green]{cost}[/]"
        seen = savings[x.layout]
        label = f"{x.layout} ({seen.traces} of {seen.of} traces)" if seen.partial else x.layout
        name = label if x.broken_requests == 0 else f"[red]{label} (broken)[/]"
        as_sent = windowed and x.layout == "recorded"
        if as_sent:
            name = AS_SENT
        rows.append(
            [
                name,
                str(x.requests),
                _tok(x.prompt_tokens),
                _share(x.hit_rate),
                _share(x.bound_hit_rate),
                "—" if as_sent else _share(x.bound_share),
                _share(x.placement_share),
                _compaction(x),
                _retention(x),
                str(x.broken_requests),
                cost,
                "—" if x.cost_bound_share is None else f"{x.cost_bound_share:.2f}x",
                seen.vs_recorded,
                seen.vs_peer,
            ]
        )
    return rows


def model_tables(
    title: str,
    model: ModelResult,
    width: int = 10_000,
    *,
    window: int | None = None,
    parts: Sequence[ModelResult] = (),
) -> list[Table]:
    """One row per strategy: calls, tokens, hit rate, the trace bound and the share of it,
    placement check, compaction calls and cost, retention, broken requests, total cost and
    the difference to ``recorded`` / the best unbroken peer. The cheapest unbroken
    strategy's cost is green, none when an unbroken strategy is unpriced (a summarizer
    without a price); broken strategies are shown and never ranked. With a pressure
    ``window`` (tokens) the ``recorded`` row reads :data:`AS_SENT` and has no share of the
    window-capped bound: it is what the agents sent, the window not applied
    (:func:`recorded_window_line`). Narrower than the columns need (``width``, in
    characters), the columns split over several tables that each start with the strategy
    (:func:`regio.console.fit_tables`); no cell is cut. ``model`` as totals over several
    traces: ``parts`` are those traces' results under the same cache model; a strategy that
    ran on fewer of them is labelled ``name (k of n traces)``, compared over those traces
    only and not ranked (:func:`regio.bench.savings.compare_costs`)."""
    heading = f"{title} — {model.cache_model}"
    return fit_tables(heading, _COLUMNS, _model_rows(model, window is not None, parts), width)


def model_table(
    title: str,
    model: ModelResult,
    *,
    window: int | None = None,
    parts: Sequence[ModelResult] = (),
) -> Table:
    """:func:`model_tables` as one table, however wide."""
    return model_tables(title, model, window=window, parts=parts)[0]


def recorded_window_line(traces: Sequence[TraceResult], window: int) -> str | None:
    """The line printed under a pressure run's tables about the ``recorded`` row: the
    agents' requests as sent, the ``window`` (tokens) not applied, with how many of them do
    not fit it and the largest (prompt tokens, under the first cache model). A request fits
    when its prompt is at most its trace's ``prompt_limit`` (``context_window -
    max_output_tokens``: what an API accepts, the measure the ``broken`` lines count ``over
    the window`` with; ``window`` for a trace without one). ``None`` when ``recorded`` was
    not run."""
    pairs = [
        (n, t.prompt_limit if t.prompt_limit is not None else window)
        for t in traces
        if t.models and any(x.layout == "recorded" for x in t.models[0].layouts)
        for n in t.models[0].layout("recorded").prompt_per_request
    ]
    if not pairs:
        return None
    over = sum(n > limit for n, limit in pairs)
    limits = sorted({limit for _, limit in pairs})
    span = f"{limits[0]:,}" if len(limits) == 1 else f"{limits[0]:,}-{limits[-1]:,}"
    return (
        f"{AS_SENT}: the requests the agents really sent, window not applied (a recorded "
        f"request cannot be re-windowed): {over} of {len(pairs)} exceed the {window:,}-token "
        f"window less the output reserve (a prompt over {span} tokens, context_window - "
        "max_output_tokens, as the broken lines count it), the largest is "
        f"{max(n for n, _ in pairs):,} tokens; 'vs rec' compares each strategy with "
        "these requests, and their share of the window-capped bound is not shown"
    )


#: Columns the strategy tables need; used off a terminal (a pipe or a file) when ``$COLUMNS``
#: is not set, where nothing else decides the width.
TABLE_WIDTH = 140


def _print_table(
    console: Console,
    title: str,
    model: ModelResult,
    window: int | None = None,
    parts: Sequence[ModelResult] = (),
) -> None:
    """Print the strategy tables of ``model`` at the console's width (off a terminal and
    without ``$COLUMNS``: at least :data:`TABLE_WIDTH`)."""
    width = console.width
    if not console.is_terminal and "COLUMNS" not in os.environ:
        width = max(width, TABLE_WIDTH)
    saved = console.width
    console.width = max(saved, width)
    try:
        for table in model_tables(title, model, width, window=window, parts=parts):
            console.print(table)
    finally:
        console.width = saved
    for line in partial_lines(model, parts):
        console.print(line, highlight=False)


def _parts(traces: Sequence[TraceResult], cache_model: str) -> list[ModelResult]:
    """The results of ``traces`` under ``cache_model`` (one per trace that ran it)."""
    return [m for t in traces for m in t.models if m.cache_model == cache_model]


def broken_lines(model: ModelResult) -> list[str]:
    """One line per strategy with broken calls: how many lost the task, went over the window
    or were never sent, and the failure that stopped it (module doc of
    :mod:`regio.bench.tracking`)."""
    out = []
    for x in model.layouts:
        if not x.broken_requests:
            continue
        why = [
            f"{n} {label}"
            for n, label in (
                (x.over_window_requests, "over the window"),
                (x.lost_task_requests, "lost the task"),
                (x.unsent_requests, "never sent"),
            )
            if n
        ]
        failed = f"; failed: {x.failure}" if x.failure else ""
        out.append(
            f"broken: {x.layout} ({model.cache_model}) {x.broken_requests} of "
            f"{x.requests + x.unsent_requests} calls ({', '.join(why)}){failed}"
        )
    return out


def relief_lines(model: ModelResult) -> list[str]:
    """One line per strategy with a relief chain: per stage how often it ran (batches), how
    often it did not run, apart: skipped below its minimum, and short of the target (its
    batch met its minimum but the stages together could not reach the target, so the
    summarization ran instead), and the tokens it freed."""
    out = []
    for x in model.layouts:
        if not x.relief:
            continue
        stages = "; ".join(
            f"{s.stage} ran {s.runs}x (skipped {s.skipped}x below its minimum, {s.short}x short "
            f"of the target), freed {s.freed_tokens:,} tokens"
            for s in x.relief
        )
        out.append(f"relief chain of {x.layout} ({model.cache_model}): {stages}")
    return out


def _first_cuts(trace: TraceResult) -> dict[str, int | None]:
    """Strategy -> its ``first_cut`` in ``trace`` (under its first cache model: the same
    under every model), ``recorded`` left out (it cuts nothing and is not scored)."""
    if not trace.models:
        return {}
    return {x.layout: x.first_cut for x in trace.models[0].layouts if x.layout != "recorded"}


def _cuts_text(cuts: dict[str, int | None]) -> str:
    """``"a 21, b 34, c never"``: the strategies by first cut, earliest first."""
    order = sorted(cuts.items(), key=lambda kv: (kv[1] is None, kv[1] or 0))
    return ", ".join(f"{k} {'never' if v is None else v}" for k, v in order)


def _setters(traces: Sequence[TraceResult]) -> str:
    """``"a in 5 of 7 traces, b in 2"``: which strategies cut first, per trace (ties count
    for each)."""
    count: dict[str, int] = {}
    scored = [t for t in traces if t.retention_from is not None]
    for t in scored:
        for k, v in _first_cuts(t).items():
            if v == t.retention_from:
                count[k] = count.get(k, 0) + 1
    ranked = sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{k} in {n}" for k, n in ranked]
    if parts:
        parts[0] += f" of {len(scored)} traces"
    return ", ".join(parts)


def retention_line(traces: Sequence[TraceResult]) -> str | None:
    """The line saying from which model call retention is scored: one call per trace, the
    same for every strategy (the first at which any of them had cut something), and which
    strategy set it: for one trace every strategy's own ``first_cut`` (earliest first,
    ``never`` for one that cut nothing), for several the strategies that cut first and in
    how many traces. ``None`` when no trace measured retention."""
    starts = [t for t in traces if t.retention_from is not None]
    if not starts:
        return None
    if len(starts) == 1:
        where = f"from call {starts[0].retention_from} (0-based) on"
        cuts = _first_cuts(starts[0])
        who = f" (first cut per strategy: {_cuts_text(cuts)})" if cuts else ""
    else:
        first = sorted(t.retention_from or 0 for t in starts)
        where = f"from one call per trace on (calls {first[0]}-{first[-1]}, 0-based)"
        setters = _setters(starts)
        who = f" (the first to cut: {setters})" if setters else ""
    return (
        f"kept: every strategy is scored on the same requests, {where}: the first call at "
        f"which any strategy of the run had cut something{who}"
    )


def group_table(
    title: str, traces: Sequence[TraceResult], *, window: int | None = None
) -> list[Table]:
    """Tables of the totals over ``traces`` (one per cache model); ``window``: see
    :func:`model_tables`."""
    return [
        model_table(title, m, window=window, parts=_parts(traces, m.cache_model))
        for m in total_models([t.models for t in traces])
    ]


def _trace_lines(found: Sequence[tuple[str, UsageAgreement]]) -> list[str]:
    """One line per comparable trace: its reads beyond the estimated prefix and its added
    tokens (per trace: gaps of different traces cancel in a total)."""
    out: list[str] = []
    for trace, a in found:
        added = ""
        if a.added_pairs:
            added = (
                f"; tokens added between consecutive calls ({a.added_pairs} pairs) replayed "
                f"{_tok(a.simulated_added_tokens)} vs recorded {_tok(a.recorded_added_tokens)}"
            )
        where = (
            f"beyond the {a.unlogged_prefix_tokens:,}-token estimated prefix "
            if a.unlogged_prefix_tokens
            else ""
        )
        out.append(
            f"  {trace} ({a.requests} calls): cache reads {where}simulated "
            f"{_tok(a.simulated_beyond_prefix_tokens)} vs recorded "
            f"{_tok(a.recorded_beyond_prefix_tokens)}{added}"
        )
    return out


def agreement_lines(traces: Sequence[TraceResult]) -> list[str]:
    """The lines comparing the simulator with the recorded provider usage
    (:mod:`regio.bench.agreement`): the totals over the comparable traces, saying what was
    compared (an estimated unlogged prefix and the reads beyond it), one line per comparable
    trace (its reads beyond the prefix, its added tokens), then one line per trace that is
    not comparable, with the reason. Empty without recorded usage."""
    found = [(t.trace, a) for t in traces if (a := t.usage_agreement) is not None]
    agreed = [a for _, a in found if a.comparable and a.requests]
    out: list[str] = []
    if agreed:
        rec = sum(a.recorded_read_tokens for a in agreed)
        sim = sum(a.simulated_read_tokens for a in agreed)
        n = sum(a.requests for a in agreed)
        err = sum(a.mean_share_error * a.requests for a in agreed) / n
        out.append(
            f"recorded usage ({len(agreed)} of {len(found)} traces comparable, {n} calls): "
            f"simulated cache reads {_tok(sim)} vs recorded {_tok(rec)}"
            + (f" ({sim / rec - 1:+.1%})" if rec else "")
            + f"; mean per-request difference of the cached share {err:.1%}"
        )
        estimated = [a for a in agreed if a.unlogged_prefix_tokens]
        if estimated:
            sizes = ", ".join(f"{a.unlogged_prefix_tokens:,}" for a in estimated)
            beyond_rec = sum(a.recorded_beyond_prefix_tokens for a in agreed)
            beyond_sim = sum(a.simulated_beyond_prefix_tokens for a in agreed)
            out.append(
                f"  {len(estimated)} of them log no system prompt or tool schemas: a constant "
                f"prefix estimated from each trace's first recorded prompt ({sizes} tokens) is "
                "added to its replayed requests, and only the calls after that first one are "
                "compared; that prefix is cached on both sides by construction, so the reads "
                f"beyond it are what was simulated: {_tok(beyond_sim)} vs recorded "
                f"{_tok(beyond_rec)}"
                + (f" ({beyond_sim / beyond_rec - 1:+.1%})" if beyond_rec > 0 else "")
            )
        out.extend(_trace_lines([(t, a) for t, a in found if a.comparable and a.requests]))
    for trace, a in found:
        if not a.comparable:
            out.append(f"recorded usage of {trace} not comparable: {a.reason}")
    return out


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
                _print_table(console, t.trace, m, t.window_tokens)
    for name, items in groups.items():
        mean_bound = sum(t.bound_hit_rate for t in items) / len(items)
        window = items[0].window_tokens
        kind = f"window-capped bound at {window:,} tokens" if window else "append-only bound"
        console.print(
            f"[bold]{name}[/]: {len(items)} traces, "
            f"{sum(t.requests for t in items)} model calls, "
            f"{sum(t.region_writes for t in items)} region writes during the run, "
            f"mean {kind} {mean_bound:.1%}"
        )
        for m in total_models([t.models for t in items]):
            _print_table(console, name, m, window, _parts(items, m.cache_model))
    for m in report.totals:
        title = f"all {len(report.traces)} traces"
        parts = _parts(report.traces, m.cache_model)
        _print_table(console, title, m, report.window_tokens, parts)
        for line in (*broken_lines(m), *relief_lines(m)):
            console.print(line, highlight=False)
    kept = retention_line(report.traces)
    if kept is not None:
        console.print(kept, highlight=False)
    if report.window_tokens is not None:
        as_sent = recorded_window_line(report.traces, report.window_tokens)
        if as_sent is not None:
            console.print(as_sent, highlight=False)
    for line in agreement_lines(report.traces):
        console.print(line, highlight=False)
    if report.versions:
        used = ", ".join(f"{k} {v}" for k, v in report.versions.items())
        console.print(f"peers ran on: {used}")
    for note in report.notes:
        console.print(f"[yellow]note:[/] {note}")
    for reason in report.skipped:
        console.print(f"[yellow]skipped:[/] {reason}")
