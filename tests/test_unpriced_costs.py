"""A cost has a price only when every price its tokens need is known (regio.cache.billing).

The cache rules record some models with an input price and no output price (Claude Opus 4.5+,
GPT-4o): a call of such a model that wrote output tokens is *unpriced* (``None``) in the usage
ledger, the cache simulator and the bench's strategy costs, and in every total that sums them,
never billed as if its output were free and never summed from its priced parts alone (the
proxy's side: tests/test_proxy_unpriced_costs.py).
"""

from __future__ import annotations

import os

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.metrics import layout_result
from regio.bench.plot import cumulative_series
from regio.bench.replay import ReplayOutput
from regio.bench.run import score
from regio.bench.tracking import StrategyRun
from regio.cache.billing import bill, total
from regio.cache.types import CacheBlock, CacheRequest
from regio.providers import cache_model_for
from regio.proxy.accounting import summary_cost
from regio.session import ModelPricing, UsageLedger
from regio.session._usage import rule_prices, usage_cost
from unpriced_support import ANTHROPIC_USAGE, OPUS

FUZZ = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "100"))


def test_a_call_of_a_model_without_an_output_price_is_unpriced_in_the_ledger() -> None:
    pricing = rule_prices(*OPUS)
    assert pricing is not None and pricing.input == 5.0 and pricing.output is None
    ledger = UsageLedger()
    record = ledger.observe(ANTHROPIC_USAGE, provider=OPUS[0], model=OPUS[1])
    assert record.cost_usd is None  # not the input part alone
    assert ledger.totals().cost_usd is None
    # no output tokens: no output price is needed, the input part is the whole cost
    quiet = ledger.observe(dict(ANTHROPIC_USAGE, output_tokens=0), provider=OPUS[0], model=OPUS[1])
    units = 1_000 + 50_000 * 0.1 + 2_000 * 1.25
    assert quiet.cost_usd == pytest.approx(5.0 * units / 1e6)


def test_the_cache_simulator_bills_output_without_a_price_as_unpriced() -> None:
    request = CacheRequest(
        id="r1", blocks=(CacheBlock(3_000, "system"),), scope="s", output_tokens=400
    )
    outcome = cache_model_for(":".join(OPUS)).process(request)
    assert outcome.cost_usd is None
    silent = msgspec.structs.replace(request, output_tokens=0)
    assert cache_model_for(":".join(OPUS)).process(silent).cost_usd is not None


def _opus_summaries() -> ReplayOutput:
    """One priced agent request (Sonnet) and two summarizer calls: one forked on the agent's
    priced model, one transcript on Opus (no output price)."""
    agent = CacheRequest(
        id="00000", blocks=(CacheBlock(2_000, "system"),), scope="t", model="claude-sonnet-4-6"
    )
    fork = CacheRequest(
        id="00000.0", blocks=(CacheBlock(2_000, "system"),), scope="t", output_tokens=300
    )
    transcript = CacheRequest(
        id="00000.1", blocks=(CacheBlock(4_000, "user"),), scope="t#summarizer", output_tokens=300
    )
    run = StrategyRun([agent], [transcript], "llm", 2, fork_requests=[fork])
    return ReplayOutput("t", {"regio": run}, [2_000], 0, 0, summarizer_cache=":".join(OPUS))


def test_a_bench_strategy_with_an_unpriced_summarizer_call_has_an_unpriced_cost() -> None:
    (model,) = score(_opus_summaries(), ["anthropic:claude-sonnet-4-6"])
    x = model.layout("regio")
    assert x.request_cost_usd is not None  # the agent's requests have a price
    assert x.compaction_cost_usd is None  # the Opus call has none: not the fork's alone
    assert x.cost_usd is None and x.total_cost_usd is None
    assert x.compaction_cost_per_request == ()
    assert x.cost_bound_share is None
    assert cumulative_series(x)[1] == []  # no cost line drawn at $0 for the unknown


def test_a_bench_layout_whose_requests_are_unpriced_draws_no_cost_line() -> None:
    request = CacheRequest(id="r", blocks=(CacheBlock(3_000, "system"),), scope="s")
    outcome = CacheRequest(id="r2", blocks=(CacheBlock(3_000, "system"),), scope="s")
    report = cache_model_for(":".join(OPUS)).run(
        [request, msgspec.structs.replace(outcome, output_tokens=50)]
    )
    x = layout_result("regio", report, report)
    assert x.cost_usd is None and x.cost_per_request == ()
    assert cumulative_series(x)[1] == []


# ----- the rule itself ---------------------------------------------------------------------------
_PRICE = st.one_of(st.none(), st.floats(0, 100, allow_nan=False))
_COUNT = st.integers(0, 2_000_000)
_FIELDS = st.fixed_dictionaries(
    {
        "uncached_tokens": _COUNT,
        "cache_read_tokens": _COUNT,
        "cache_write_5m_tokens": _COUNT,
        "cache_write_1h_tokens": _COUNT,
        "cache_write_tokens": _COUNT,
        "output_tokens": _COUNT,
    }
)
_MULT = st.dictionaries(
    st.sampled_from(["plain", "read", "write", "write_5m", "write_1h"]),
    st.floats(0, 3, allow_nan=False),
)


@settings(max_examples=FUZZ, deadline=None)
@given(_FIELDS, _PRICE, _PRICE, _MULT)
def test_a_calls_cost_is_unpriced_exactly_when_a_price_its_tokens_need_is_missing(
    fields: dict[str, int], input_usd: float | None, output_usd: float | None, mult: dict
) -> None:
    pricing = ModelPricing(input=input_usd, output=output_usd, mult=mult)
    prompt = sum(v for k, v in fields.items() if k != "output_tokens")
    out = fields["output_tokens"]
    needs_missing = (prompt > 0 and input_usd is None) or (out > 0 and output_usd is None)
    cost = usage_cost(fields, pricing)
    assert (cost is None) == needs_missing
    assert usage_cost(fields, None) is None
    if cost is None:
        return
    m = pricing.m
    # a read or write without a multiplier of its own is a plain input token (regio.cache.billing)
    units = (
        fields["uncached_tokens"] * m("plain")
        + fields["cache_read_tokens"] * m("read", m("plain"))
        + fields["cache_write_5m_tokens"] * m("write_5m", m("write", m("plain")))
        + fields["cache_write_1h_tokens"] * m("write_1h", m("write", m("plain")))
        + fields["cache_write_tokens"] * m("write", m("plain"))
    )
    by_hand = (input_usd or 0.0) * units / 1e6 if prompt else 0.0
    by_hand += (output_usd or 0.0) * out / 1e6 if out else 0.0
    assert cost == pytest.approx(by_hand)
    # the summary path prices the same usage the same way
    assert summary_cost(pricing, fields) == pytest.approx(by_hand)


@settings(max_examples=FUZZ, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 10, allow_nan=False)), max_size=8))
def test_a_total_of_costs_is_unpriced_exactly_when_one_of_them_is(
    costs: list[float | None],
) -> None:
    result = total(costs)
    if None in costs:
        assert result is None
    else:
        assert result == pytest.approx(sum(c for c in costs if c is not None))


@settings(max_examples=FUZZ, deadline=None)
@given(_PRICE, _PRICE, _COUNT, st.floats(0, 5e6, allow_nan=False), _COUNT)
def test_a_bill_never_prices_a_part_whose_price_is_missing_as_free(
    input_usd: float | None,
    output_usd: float | None,
    prompt: int,
    units: float,
    output: int,
) -> None:
    cost = bill(input_usd, output_usd, input_tokens=prompt, input_units=units, output_tokens=output)
    missing = (prompt and input_usd is None) or (output and output_usd is None)
    assert (cost is None) == bool(missing)
