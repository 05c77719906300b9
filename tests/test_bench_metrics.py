"""Bench metrics on hand-computed cases (spec cache-rules.md sections 5 and 6)."""

from __future__ import annotations

import pytest

from regio.bench.metrics import (
    append_only_hit_rate,
    cumulative_hit_rates,
    hit_rate,
    layout_result,
    oracle_report,
    oracle_share,
    sum_layout_results,
)
from regio.cache.types import CacheBlock, CacheRequest
from regio.providers import cache_model_for


def _append_only(sizes: list[int], block: int = 200) -> list[CacheRequest]:
    out = []
    for i, n in enumerate(sizes):
        blocks = tuple(
            CacheBlock(block, f"b{k}", mark="5m" if k == n // block - 1 else None)
            for k in range(n // block)
        )
        out.append(CacheRequest(id=f"r{i}", blocks=blocks, t_start=60.0 * i, ttft=2.0))
    return out


def test_append_only_bound_matches_the_spec_x1_vector() -> None:
    assert append_only_hit_rate([2000, 3000, 7000]) == pytest.approx(1 - 7000 / 12000)


def test_append_only_bound_matches_the_spec_worked_example() -> None:
    sizes = [10_000 + 1_000 * i for i in range(50)]
    assert append_only_hit_rate(sizes) == pytest.approx(1 - 59_000 / 1_725_000)


def test_append_only_bound_of_nothing_is_zero() -> None:
    assert append_only_hit_rate([]) == 0.0
    assert append_only_hit_rate([0, 0]) == 0.0


def test_hit_rate_is_read_over_prompt_tokens() -> None:
    assert hit_rate(5000, 12000) == pytest.approx(5000 / 12000)
    assert hit_rate(0, 0) == 0.0


def test_hit_rate_rejects_a_read_larger_than_the_prompt() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        hit_rate(11, 10)


def test_oracle_share_is_one_when_nothing_was_reusable() -> None:
    assert oracle_share(0.0, 0.0) == 1.0
    assert oracle_share(0.4, 0.5) == pytest.approx(0.8)


def test_cumulative_hit_rate_sums_before_dividing() -> None:
    assert cumulative_hit_rates([0, 2000, 3000], [2000, 3000, 7000]) == pytest.approx(
        [0.0, 2000 / 5000, 5000 / 12000]
    )


def test_cumulative_hit_rate_needs_equal_lengths() -> None:
    with pytest.raises(ValueError, match="2 read counts but 1"):
        cumulative_hit_rates([1, 2], [3])


def test_the_anthropic_oracle_of_an_append_only_sequence_is_the_request_side_bound() -> None:
    requests = _append_only([2000, 3000, 7000])
    bound = oracle_report("anthropic:claude-sonnet-4-5", requests)
    assert bound.read == 5000
    assert bound.hit_rate == pytest.approx(5000 / 12000)


def test_the_openai_oracle_quantizes_on_the_1024_plus_128_grid() -> None:
    bound = oracle_report("openai:gpt-4o", _append_only([2000, 3000, 7000]))
    assert bound.read == 1920 + 2944


def test_layout_result_reports_the_share_of_its_own_oracle() -> None:
    requests = _append_only([2000, 3000, 7000])
    report = cache_model_for("anthropic:claude-sonnet-4-5").run(requests)
    item = layout_result("x", report, oracle_report("anthropic:claude-sonnet-4-5", requests))
    # A1 path a: one mark on the last block; the 7,000 request misses the lookback window.
    assert item.cache_read_tokens == 2000
    assert item.cache_write_tokens == 2000 + 1000 + 7000
    assert item.uncached_tokens == 0
    assert item.oracle_hit_rate == pytest.approx(5000 / 12000)
    assert item.placement_share == pytest.approx(2000 / 5000)
    assert item.read_per_request == (0, 2000, 0)
    assert item.cost_usd == pytest.approx(0.0075 + 0.00435 + 0.02625)


def test_totals_recompute_rates_from_summed_tokens() -> None:
    requests = _append_only([2000, 3000, 7000])
    model = "anthropic:claude-sonnet-4-5"
    a = layout_result("x", cache_model_for(model).run(requests), oracle_report(model, requests))
    b = layout_result(
        "x", cache_model_for(model).run(requests[:2]), oracle_report(model, requests[:2])
    )
    total = sum_layout_results("x", [a, b])
    assert total.prompt_tokens == 12000 + 5000
    assert total.cache_read_tokens == 2000 + 2000
    assert total.hit_rate == pytest.approx(4000 / 17000)
    assert total.oracle_hit_rate == pytest.approx((5000 + 2000) / 17000)
    assert total.requests == 5
