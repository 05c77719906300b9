"""What the tables and the lines under them say. A totals table compares like with like: a
strategy that ran on fewer traces than the table sums (``regio-delegate`` where the blueprint
renders for an API without provider compaction) is compared with ``recorded`` and the peers
over the traces it ran on, never with their totals over all of them, and says so; the relief
line counts a stage's two ways of not running apart."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from regio.bench.metrics import total_models
from regio.bench.output import model_table, print_report, relief_lines
from regio.bench.report import BenchReport, LayoutResult, ModelResult, ReliefStage, TraceResult
from regio.bench.savings import compare_costs

CACHE = "anthropic:claude-sonnet-4-6"


def _layout(name: str, cost: float) -> LayoutResult:
    return LayoutResult(name, 10, 1000, 600, 300, 100, 0.6, cost, 0.7, 0.86)


def _trace(i: int, layouts: dict[str, float]) -> TraceResult:
    model = ModelResult(CACHE, "rule", tuple(_layout(k, v) for k, v in layouts.items()))
    return TraceResult(f"t{i}", "g", "bp", 10, 0.7, 0, 0, (model,))


def _report(traces: list[TraceResult]) -> BenchReport:
    return BenchReport(tuple(traces), total_models([t.models for t in traces]))


def _rows(report: BenchReport) -> tuple[dict[str, str], str]:
    console = Console(record=True, width=400)
    print_report(report, console)
    text = console.export_text()
    totals = text[text.index("all 3 traces") :]
    rows = {line.split("│")[1].strip(): line for line in totals.splitlines() if line.count("│") > 3}
    return rows, " ".join(text.split())


def test_a_strategy_on_fewer_traces_is_compared_over_the_traces_it_ran() -> None:
    # regio-delegate ran on one trace of three, like regio-delegate on 7 of 47 in `regio demo`
    full = {"recorded": 1.0, "anthropic-compaction": 1.25, "regio": 0.9}
    traces = [_trace(0, {**full, "regio-delegate": 0.8}), _trace(1, full), _trace(2, full)]
    rows, text = _rows(_report(traces))
    delegate = rows["regio-delegate (1 of 3 traces)"]
    # against recorded's 1.0 and the peer's 1.25 on that one trace, not their 3.0 and 3.75
    assert "-20.0%" in delegate and "-36.0%" in delegate
    assert "-73.3%" not in delegate
    assert "-10.0%" in rows["regio"] and "-28.0%" in rows["regio"]
    assert (
        f"regio-delegate ({CACHE}) ran on 1 of 3 traces: its calls and cost are over those 1, "
        "and its vs rec / vs peer compare it with recorded and the peers on those 1 traces only"
    ) in text


def test_a_peer_on_fewer_traces_is_no_reference_for_a_strategy_that_ran_on_more() -> None:
    # a peer missing from two traces has the smallest total: it must not be "the best peer"
    full = {"recorded": 1.0, "anthropic-compaction": 1.25, "regio": 0.9}
    traces = [_trace(0, {**full, "trim": 1.3}), _trace(1, full), _trace(2, full)]
    report = _report(traces)
    seen = compare_costs(report.totals[0], [t.models[0] for t in traces])
    assert seen["regio"].vs_peer == "-28.0%"  # 2.7 / 3.75, not 2.7 / 1.3
    assert seen["trim"].vs_recorded == "+30.0%" and seen["trim"].vs_peer == "+4.0%"
    assert seen["trim"].partial and not seen["regio"].partial


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.1, 10),
            st.floats(0.1, 10),
            st.one_of(st.none(), st.floats(0.1, 10)),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_vs_recorded_is_the_ratio_of_the_sums_over_the_traces_the_strategy_ran(
    per_trace: list[tuple[float, float, float | None]],
) -> None:
    traces = [
        _trace(i, {"recorded": rec, "regio": own} | ({} if d is None else {"regio-delegate": d}))
        for i, (rec, own, d) in enumerate(per_trace)
    ]
    report = _report(traces)
    seen = compare_costs(report.totals[0], [t.models[0] for t in traces])
    ran = [(rec, d) for rec, _, d in per_trace if d is not None]
    if ran:
        expected = sum(d for _, d in ran) / sum(rec for rec, _ in ran) - 1
        assert seen["regio-delegate"].vs_recorded == f"{expected:+.1%}"
        assert seen["regio-delegate"].traces == len(ran)
    own = sum(o for _, o, _ in per_trace) / sum(r for r, _, _ in per_trace) - 1
    assert seen["regio"].vs_recorded == f"{own:+.1%}" and not seen["regio"].partial


def test_the_relief_line_counts_skips_below_the_minimum_apart_from_falling_short() -> None:
    stages = (ReliefStage("clear", 3, 12, 9000, 40, 57), ReliefStage("trim", 0, 0, 0, 0, 69))
    layout = msgspec.structs.replace(_layout("regio", 1.0), relief=stages)
    (line,) = relief_lines(ModelResult(CACHE, "rule", (layout,)))
    assert line == (
        f"relief chain of regio ({CACHE}): clear ran 3x (skipped 12x below its minimum, 57x "
        "short of the target), freed 9,000 tokens; trim ran 0x (skipped 0x below its minimum, "
        "69x short of the target), freed 0 tokens"
    )
    summed = total_models([[ModelResult(CACHE, "rule", (layout,))]] * 2)[0].layout("regio")
    assert summed.relief[0] == ReliefStage("clear", 6, 24, 18000, 80, 114)


def _unpriced_summarizer_model() -> ModelResult:
    # a summarizer whose model has no price leaves the summarizing strategies unpriced
    # (regio.bench.billing.summarizer_pricing); recorded and trim do not summarize
    layouts = [
        _layout("recorded", 1.0),
        _layout("trim", 1.3),
        msgspec.structs.replace(_layout("summarization-middleware", 0.0), cost_usd=None),
        msgspec.structs.replace(_layout("regio", 0.0), cost_usd=None),
    ]
    return ModelResult(CACHE, "rule", tuple(layouts))


def test_an_unpriced_peer_leaves_vs_peer_unknown_never_the_priced_peers_cheapest() -> None:
    model = _unpriced_summarizer_model()
    seen = compare_costs(model)
    # the unpriced peer may be the cheapest: recorded is not "-23.1%" against trim
    assert seen["recorded"].vs_peer == "—" and seen["trim"].vs_peer == "—"
    assert seen["trim"].vs_recorded == "+30.0%" and seen["regio"].vs_recorded == "—"
    priced = msgspec.structs.replace(model, layouts=model.layouts[:2])
    assert compare_costs(priced)["recorded"].vs_peer == "-23.1%"


def test_no_cost_is_green_while_an_unbroken_strategy_is_unpriced() -> None:
    def green(model: ModelResult) -> list[str]:
        console = Console(record=True, width=400, force_terminal=True, color_system="standard")
        console.print(model_table("t", model))
        lines = console.export_text(styles=True).splitlines()
        return [ln.split("│")[1].strip() for ln in lines if "\x1b[1;32m" in ln]

    model = _unpriced_summarizer_model()
    assert green(model) == []  # never recorded's $1.00, cheapest of the priced ones only
    priced = msgspec.structs.replace(model, layouts=model.layouts[:2])
    assert [name for name in green(priced) if "recorded" in name]
