"""The bench plot: hit rate and cost side by side, and series that stay visible when equal."""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.bench.cli import examples_dir
from regio.bench.output import cumulative_series, plot_available, series_style
from regio.bench.report import BenchReport, LayoutResult
from regio.bench.run import run_bench, summarizer_cost_per_request
from regio.blueprint import load_blueprint
from regio.cli import main
from regio.traces.synth import synthesize

ROOT = Path(__file__).resolve().parents[1]


def _layout(reads: list[int], prompts: list[int], costs: list[float]) -> LayoutResult:
    return LayoutResult(
        layout="x",
        requests=len(prompts),
        prompt_tokens=sum(prompts),
        cache_read_tokens=sum(reads),
        cache_write_tokens=0,
        uncached_tokens=sum(prompts) - sum(reads),
        hit_rate=0.0,
        cost_usd=sum(costs),
        oracle_hit_rate=0.0,
        placement_share=0.0,
        read_per_request=tuple(reads),
        prompt_per_request=tuple(prompts),
        cost_per_request=tuple(costs),
    )


def test_the_first_32_series_each_get_their_own_style_and_marker() -> None:
    pairs = [(s["linestyle"], s["marker"]) for s in map(series_style, range(32))]
    assert len(set(pairs)) == 32


@given(
    st.lists(
        st.tuples(st.integers(1, 10_000), st.floats(0, 1), st.floats(0, 5)),
        min_size=1,
        max_size=40,
    )
)
def test_cumulative_series_are_running_hit_rate_and_running_cost(requests) -> None:
    prompts = [p for p, _, _ in requests]
    reads = [int(p * share) for p, share, _ in requests]
    costs = [c for _, _, c in requests]
    hits, totals = cumulative_series(_layout(reads, prompts, costs))
    assert len(hits) == len(totals) == len(requests)
    assert hits[-1] == pytest.approx(sum(reads) / sum(prompts))
    assert totals[-1] == pytest.approx(sum(costs))
    assert all(0.0 <= h <= 1.0 for h in hits)
    assert all(b >= a for a, b in itertools.pairwise(totals))


@pytest.mark.skipif(not plot_available(), reason="matplotlib (the bench extra) is not installed")
def test_bench_plot_has_three_panels_per_cache_model(tmp_path, capsys) -> None:
    trace = ROOT / "examples" / "traces" / "mini-swe-agent" / "local.traj.json"
    blueprint = ROOT / "examples" / "blueprints" / "coding-agent.yaml"
    out = tmp_path / "plot.png"
    argv = ["bench", "--trace", str(trace), "--blueprint", str(blueprint), "--plot", str(out)]
    assert main([*argv, "--layouts", "recorded,regio", "--cache", "openai:gpt-4o"]) == 0
    capsys.readouterr()
    head = out.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert (width, height) == (1800, 380)  # 3 panels x 6 in, one cache model x 3.8 in, 100 dpi


@pytest.fixture(scope="module")
def summarized() -> BenchReport:
    """A generated 120-call session at 16,384 tokens: regio and the provider's compaction
    summarize, with billed summarizer calls."""
    bp = load_blueprint(examples_dir() / "blueprints" / "coding-agent.yaml")
    return run_bench(
        [(synthesize(120, 3), bp)],
        layouts=("recorded", "regio", "anthropic-compaction"),
        cache_models=("anthropic:claude-sonnet-4-6",),
        window_tokens=16384,
    )


def test_the_cumulative_cost_ends_at_the_tables_cost_summarizer_calls_included(
    summarized: BenchReport,
) -> None:
    billed = 0
    for model in (*summarized.totals, *summarized.traces[0].models):
        for x in model.layouts:
            _, costs = cumulative_series(x)
            assert x.cost_usd is not None
            assert costs[-1] == pytest.approx(x.cost_usd), x.layout
            if x.compaction_cost_usd:
                billed += 1
                assert costs[-1] > sum(x.cost_per_request) + 0.9 * x.compaction_cost_usd
    assert billed >= 2  # both summarizing strategies had billed summarizer calls


def test_a_summarizer_call_is_added_at_the_last_model_call_sent_before_it() -> None:
    calls = [(0.0, "00000"), (1.0, "00001"), (2.0, "00002")]
    passes = [
        ((1.0, "00001.0"), 0.5),  # a transcript prompt made for call 1, sorted after it
        ((1.5, "00001.z"), 0.25),  # a fork of call 1, sent before call 2
        ((-1.0, "early"), 0.125),  # before every call: at the first
        ((9.0, "00002.s000"), 1.0),  # after the last call: at the last
    ]
    assert summarizer_cost_per_request(calls, passes) == (0.125, 0.75, 1.0)
    assert summarizer_cost_per_request([], passes) == ()


@given(
    st.lists(st.floats(0, 100), min_size=1, max_size=20),
    st.lists(st.tuples(st.floats(-10, 110), st.floats(0, 5)), max_size=20),
)
def test_the_summarizer_costs_per_call_add_up_to_the_summarizer_calls_cost(
    times: list[float], passes: list[tuple[float, float]]
) -> None:
    calls = sorted((t, f"{k:05d}") for k, t in enumerate(times))
    placed = summarizer_cost_per_request(calls, [((t, "x"), c) for t, c in passes])
    assert len(placed) == len(calls)
    assert sum(placed) == pytest.approx(sum(c for _, c in passes))
