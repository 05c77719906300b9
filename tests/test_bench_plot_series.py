"""The bench plot: hit rate and cost side by side, and series that stay visible when equal."""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.bench.output import cumulative_series, plot_available, series_style
from regio.bench.report import LayoutResult
from regio.cli import main

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
