"""The cost-optimal periodic-compaction bound (DESIGN.md section 4): the formula and its
optimum on hand-computed cases, the exact schedule agreeing with the formula in its steady
state, and the bound in the JSON report (``cost_bound_usd``, ``cost_bound_share``)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from regio.bench.cli import examples_dir
from regio.bench.costbound import (
    CostPrices,
    Schedule,
    cut_sizes,
    kept_tokens,
    optimal_interval,
    periodic_hit_bound,
    prices_of,
    steady_state_cost,
)
from regio.bench.output import print_report
from regio.bench.report import BenchReport, report_json
from regio.bench.run import run_bench
from regio.blueprint import load_blueprint
from regio.providers import cache_model_for
from regio.traces.synth import synthesize

CACHE = "anthropic:claude-sonnet-4-6"

#: Anthropic's 5-minute prices as multiples of the input price (the issue's worked example).
ANTHROPIC = CostPrices(read=0.1, write=1.25, output=5.0, input_usd=3e-6)


def test_the_formula_on_a_hand_computed_case() -> None:
    # r(R + x/2) + wΔ + Δ(rT + os + wR)/x with R 8,000, T 58,000, Δ 1,000, s 2,000
    # = 0.1 * 33,000 + 1,250 + 1,000 * (5,800 + 10,000 + 10,000) / 50,000 = 5,066
    assert steady_state_cost(1_000, 8_000, 2_000, 58_000, ANTHROPIC) == pytest.approx(5_066)
    with pytest.raises(ValueError, match="above the kept size"):
        steady_state_cost(1_000, 8_000, 2_000, 8_000, ANTHROPIC)


def test_the_optimal_interval_is_the_formulas_minimum() -> None:
    delta, kept, summary = 1_000, 8_000, 2_000
    best = optimal_interval(delta, kept, summary, ANTHROPIC)
    # √(2Δ(R + (os + wR)/r)) = √(2,000 * (8,000 + 200,000)) = 20,396
    assert best == pytest.approx(math.sqrt(2_000 * 208_000))
    at = steady_state_cost(delta, kept, summary, kept + best, ANTHROPIC)
    for x in (best * 0.8, best * 1.25):
        assert steady_state_cost(delta, kept, summary, kept + x, ANTHROPIC) > at


def test_the_prices_come_from_the_cache_rule() -> None:
    anthropic = prices_of(cache_model_for("anthropic:claude-sonnet-4-6").rule)
    assert anthropic == CostPrices(0.1, 1.25, 5.0, 3e-6)
    openai = prices_of(cache_model_for("openai:gpt-5").rule)
    assert openai is not None and (openai.read, openai.write) == (0.1, 1.0)
    assert openai.output == pytest.approx(8.0)
    assert prices_of(cache_model_for("anthropic:claude-sonnet-4-6").rule, "1h").write == 2.0


def _per_request(delta: int, kept: int, steps: int, summary: int) -> tuple[float, float]:
    """(the exact schedule's cost per request, the formula's) on a session that starts at
    the kept size and grows by ``delta`` per request, compacting every ``steps`` requests."""
    x = steps * delta
    trigger = kept + x
    sizes = [kept + delta * i for i in range(40 * steps)]
    prices = CostPrices(read=0.1, write=1.25, output=5.0, input_usd=1.0)
    exact = Schedule(
        sizes=sizes,
        outputs=[0] * len(sizes),
        limit=10**9,
        fixed=0,
        kept=kept,
        summary=summary,
        summarizes=1.0,
        prices=prices,
    ).cost(trigger)
    assert exact is not None
    return exact / len(sizes), steady_state_cost(delta, kept, summary, trigger, prices)


@settings(max_examples=12, deadline=None)
@given(
    delta=st.integers(200, 1_500),
    kept=st.integers(2_000, 20_000),
    steps=st.integers(20, 60),
    summary=st.integers(0, 3_000),
)
def test_the_exact_schedule_meets_the_formula_in_its_steady_state(
    delta: int, kept: int, steps: int, summary: int
) -> None:
    # the formula is the continuous limit of the schedule: they agree to O(Δ/x), and closer
    # as the interval holds more requests
    exact, formula = _per_request(delta, kept, steps, summary)
    assert exact == pytest.approx(formula, rel=2.0 / steps)
    finer, limit = _per_request(delta, kept, 4 * steps, summary)
    assert abs(finer / limit - 1) <= abs(exact / formula - 1) + 1e-9


def test_the_bound_never_lets_a_request_pass_the_limit() -> None:
    sizes = [1_000 * (i + 1) for i in range(100)]
    schedule = Schedule(
        sizes=sizes,
        outputs=[10] * 100,
        limit=50_000,
        fixed=500,
        kept=5_000,
        summary=300,
        summarizes=1.0,
        prices=ANTHROPIC,
    )
    assert schedule.cost(None) is None and schedule.cost(60_000) is None
    bound = schedule.bound()
    assert bound is not None and bound.trigger is not None and bound.trigger <= 50_000
    for trigger in (10_000, 30_000, 50_000):
        cost = schedule.cost(trigger)
        assert cost is not None and bound.cost_usd <= cost + 1e-12


def test_a_session_that_fits_is_bounded_by_never_compacting_when_that_is_cheapest() -> None:
    sizes = [1_000 + 50 * i for i in range(20)]
    schedule = Schedule(
        sizes=sizes,
        outputs=[0] * 20,
        limit=100_000,
        fixed=500,
        kept=None,
        summary=0,
        summarizes=0.0,
        prices=ANTHROPIC,
    )
    bound = schedule.bound()
    assert bound is not None and bound.trigger is None and bound.kept is None
    expected = (1.25 * 1_000 + sum(0.1 * s + 1.25 * 50 for s in sizes[:-1])) * 3e-6
    assert bound.cost_usd == pytest.approx(expected)


def test_the_periodic_hit_bound_on_a_hand_computed_case() -> None:
    # D 1,000 per request, W 50,000, S 2,000, R 10,000:
    # 1 - 2 * 1,000 * 48,000 / (40,000 * 60,000) = 1 - 96e6 / 24e8 = 0.96
    sizes = [5_000 + 1_000 * i for i in range(101)]
    assert periodic_hit_bound(sizes, 50_000, 2_000, 10_000) == pytest.approx(0.96)
    assert periodic_hit_bound(sizes, 50_000, 2_000, None) is None
    assert periodic_hit_bound(sizes, 50_000, 2_000, 50_000) is None
    # keeping less raises the bound
    assert periodic_hit_bound(sizes, 50_000, 2_000, 5_000) > 0.96  # type: ignore[operator]


def test_the_kept_size_is_the_mean_prompt_after_each_cut() -> None:
    prompts = [10, 20, 30, 12, 22, 32, 14, 24]
    assert cut_sizes(prompts) == [12, 14]
    assert kept_tokens(prompts) == 13
    assert kept_tokens([1, 2, 3]) is None


@pytest.fixture(scope="module")
def report() -> BenchReport:
    """regio on a generated 150-call session at 16,384 tokens: it compacts."""
    bp = load_blueprint(examples_dir() / "blueprints" / "coding-agent.yaml")
    return run_bench(
        [(synthesize(150, 3), bp)],
        layouts=("recorded", "regio"),
        cache_models=(CACHE,),
        window_tokens=16384,
    )


def test_the_report_carries_the_bound_and_the_share_of_it(report: BenchReport) -> None:
    regio = report.totals[0].layout("regio")
    assert regio.kept_tokens is not None and regio.cost_bound_usd is not None
    assert regio.cost_usd is not None
    assert regio.cost_bound_share == pytest.approx(regio.cost_usd / regio.cost_bound_usd)
    assert regio.cost_bound_trigger is None or regio.cost_bound_trigger <= 16384
    assert regio.periodic_hit_bound is not None and 0 < regio.periodic_hit_bound <= 1
    recorded = report.totals[0].layout("recorded")
    assert recorded.kept_tokens is None and recorded.cost_bound_usd is None  # it never fits


def test_the_json_cost_is_the_printed_cost_summarizer_calls_included(report: BenchReport) -> None:
    data = json.loads(report_json(report))
    item = next(x for x in data["totals"][0]["layouts"] if x["layout"] == "regio")
    assert item["compaction_calls"] > 0 and item["compaction_cost_usd"] > 0
    assert item["cost_usd"] == pytest.approx(item["request_cost_usd"] + item["compaction_cost_usd"])
    console = Console(record=True, width=240)
    print_report(report, console)
    assert f"${item['cost_usd']:.4f}" in console.export_text()
