"""One default for a cache rule that records no write multiplier: a cache write with no
multiplier of its own is billed as a plain input token (``mult["plain"]``, 1.0 when absent),
as providers without a write surcharge bill (:func:`regio.cache.billing.write_multiplier`).
The usage ledger, the cache simulator, the proxy's accounting and the bench's cost terms all
bill such a rule's writes the same way (they assumed 1.0, 1.25 / 2.0, the plain multiplier and
the plain multiplier)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cache_support import mark, req, texts
from mutation_support import fuzz_settings
from regio.bench.costbound import prices_of
from regio.cache.anthropic import AnthropicCache
from regio.cache.billing import bill, read_multiplier, write_multiplier
from regio.cache.rules import Price, Rule
from regio.cache.types import CacheOutcome
from regio.providers import cache_model_for
from regio.proxy.accounting import as_is_cost, summary_cost
from regio.session import ModelPricing
from regio.session._cacheprices import cache_terms
from regio.session._usage import usage_cost


def _rule(mult: dict[str, float], price: Price) -> Rule:
    """Claude Sonnet 4.5's rule (breakpoints, writes of 5m and 1h) with ``mult`` and ``price``:
    a user's rule for a provider that reports cache writes and records no write surcharge."""
    return attrs.evolve(cache_model_for("anthropic:claude-sonnet-4-5").rule, mult=mult, price=price)


def _usage(o: CacheOutcome) -> dict[str, int]:
    """The ledger's token fields of a simulated outcome."""
    return {
        "uncached_tokens": o.uncached,
        "cache_read_tokens": o.read,
        "cache_write_5m_tokens": o.write_5m,
        "cache_write_1h_tokens": o.write_1h,
        "cache_write_tokens": o.write,
        "output_tokens": o.output_tokens,
    }


def _simulate(rule: Rule, first: int, grown: int, tokens: int, output: int) -> list[CacheOutcome]:
    """Two requests on ``rule``'s simulator: ``first`` blocks of ``tokens`` with a 1h mark on
    the first and a 5m mark on the last, then the same grown by ``grown`` blocks (a 5m mark on
    the last, one unmarked block after it): writes of both TTLs, a read, uncached tokens."""
    model = AnthropicCache(rule)
    one = mark(mark(texts(first, tokens=tokens), 0, ttl="1h"))
    two = [*one, *mark(texts(grown, prefix="g", tokens=tokens)), *texts(1, prefix="u")]
    return [
        model.process(req("r1", one, 0.0, output_tokens=output)),
        model.process(req("r2", two, 10.0, output_tokens=output)),
    ]


_NO_WRITE = st.fixed_dictionaries(
    {},
    optional={
        "plain": st.floats(0.5, 2.0, allow_nan=False),
        "read": st.floats(0.0, 1.0, allow_nan=False),
    },
)


@given(
    mult=_NO_WRITE,
    input_usd=st.floats(0.01, 30, allow_nan=False),
    output_usd=st.floats(0, 100, allow_nan=False),
    first=st.integers(2, 8),
    grown=st.integers(1, 8),
    tokens=st.integers(1_024, 5_000),
    output=st.integers(0, 4_000),
)
@fuzz_settings(40)
def test_a_rule_without_write_multipliers_bills_writes_as_plain_input_on_every_path(
    mult: dict[str, float],
    input_usd: float,
    output_usd: float,
    first: int,
    grown: int,
    tokens: int,
    output: int,
) -> None:
    price = Price(input_usd, output_usd)
    rule = _rule(mult, price)
    pricing = ModelPricing(input_usd, output_usd, dict(mult))
    plain = mult.get("plain", 1.0)
    read = mult.get("read", plain)
    bench = prices_of(rule, "5m")
    assert bench is not None
    outcomes = _simulate(rule, first, grown, tokens, output)
    assert any(o.write_5m for o in outcomes) and any(o.write_1h for o in outcomes)
    for o in outcomes:
        writes = o.write_5m + o.write_1h + o.write
        expected = bill(
            input_usd,
            output_usd,
            input_tokens=o.prompt_tokens,
            input_units=plain * (o.uncached + writes) + read * o.read,
            output_tokens=o.output_tokens,
        )
        assert expected is not None
        # the cache simulator's outcome, the usage ledger and the proxy's summary cost
        assert o.cost_usd == pytest.approx(expected, rel=1e-9)
        assert usage_cost(_usage(o), pricing) == pytest.approx(expected, rel=1e-9)
        assert summary_cost(pricing, _usage(o)) == pytest.approx(expected, rel=1e-9)
        # the proxy's as-is cost: what is not read from the previous request is written
        as_is = as_is_cost(pricing, o.read, o.prompt_tokens, output, cached=True)
        plain_units = read * o.read + plain * (o.prompt_tokens - o.read)
        assert as_is == pytest.approx(
            bill(
                input_usd,
                output_usd,
                input_tokens=o.prompt_tokens,
                input_units=plain_units,
                output_tokens=output,
            ),
            rel=1e-9,
        )
        # the bench's cost terms: its writes, read and output at the ledger's prices
        only_writes = {k: 0 for k in _usage(o)} | {
            "cache_write_5m_tokens": o.write_5m,
            "cache_write_1h_tokens": o.write_1h,
        }
        assert bench.input_usd * bench.write * writes == pytest.approx(
            usage_cost(only_writes, pricing), rel=1e-9, abs=1e-12
        )
        assert bench.read == read
        assert bench.output == pytest.approx(output_usd / input_usd)
    for ttl in ("5m", "1h"):
        terms = prices_of(rule, ttl)
        assert terms is not None and terms.write == plain


@given(mult=_NO_WRITE)
@fuzz_settings(40)
def test_a_write_without_a_multiplier_of_its_own_is_a_plain_input_token(
    mult: dict[str, float],
) -> None:
    plain = mult.get("plain", 1.0)
    for ttl in ("5m", "1h", None):
        assert write_multiplier(mult, ttl) == plain
        assert write_multiplier({**mult, "write": 1.3}, ttl) == 1.3
    assert write_multiplier({**mult, "write": 1.3, "write_1h": 2.0}, "1h") == 2.0
    assert write_multiplier({**mult, "write": 1.3, "write_1h": 2.0}, "5m") == 1.3


@pytest.mark.parametrize("model", ["gpt-5", "gpt-4o", "deepseek-v4-pro"])
def test_the_engines_controller_weighs_a_write_of_a_rule_without_one_as_plain_input(
    model: str,
) -> None:
    provider = "deepseek" if model.startswith("deepseek") else "openai"
    rule = cache_model_for(f"{provider}:{model}").rule
    assert not {"write", "write_5m", "write_1h", "create"} & set(rule.mult)
    for ttl in ("5m", "1h"):
        assert cache_terms(provider, model, ttl).write == rule.m("plain")
        bench = prices_of(rule, ttl)
        assert bench is None or bench.write == rule.m("plain")


def test_a_rules_own_write_multipliers_are_kept_on_every_path() -> None:
    # Sonnet 4.5: 5m writes 1.25x, 1h writes 2x (spec section 6); GPT-5.6: writes 1.25x
    sonnet = cache_model_for("anthropic:claude-sonnet-4-5").rule
    assert [prices_of(sonnet, t).write for t in ("5m", "1h")] == [1.25, 2.0]  # type: ignore[union-attr]
    gpt = _rule({"read": 0.1, "write": 1.25, "plain": 1.0}, Price(2.0, 8.0))
    assert prices_of(gpt, "5m").write == 1.25  # type: ignore[union-attr]
    pricing = ModelPricing(3.0, 15.0, dict(sonnet.mult))
    written = {
        "uncached_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_5m_tokens": 1_000,
        "cache_write_1h_tokens": 1_000,
        "cache_write_tokens": 0,
        "output_tokens": 0,
    }
    assert usage_cost(written, pricing) == pytest.approx(3.0 / 1e6 * (1_250 + 2_000))


@given(mult=_NO_WRITE)
@fuzz_settings(40)
def test_a_read_without_a_multiplier_of_its_own_is_a_plain_input_token(
    mult: dict[str, float],
) -> None:
    plain = mult.get("plain", 1.0)
    assert read_multiplier(mult) == mult.get("read", plain)
    assert read_multiplier({k: v for k, v in mult.items() if k != "read"}) == plain


@given(
    mult=_NO_WRITE,
    input_usd=st.floats(0.01, 30, allow_nan=False),
    output_usd=st.floats(0.01, 100, allow_nan=False),
)
@fuzz_settings(40)
def test_the_controller_and_the_bench_weigh_a_read_as_the_ledger_bills_it(
    mult: dict[str, float], input_usd: float, output_usd: float
) -> None:
    # the controller's read multiplier (cache_terms), the bench's cost terms (prices_of) and
    # the ledger's bill of the same read agree on a rule with or without a read multiplier
    rule = _rule(mult, Price(input_usd, output_usd))
    pricing = ModelPricing(input_usd, output_usd, dict(mult))
    read_only = {
        "uncached_tokens": 0,
        "cache_read_tokens": 1_000,
        "cache_write_5m_tokens": 0,
        "cache_write_1h_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 0,
    }
    billed = usage_cost(read_only, pricing)
    bench = prices_of(rule, "5m")
    assert bench is not None
    assert bench.input_usd * bench.read * 1_000 == pytest.approx(billed, rel=1e-9)
    assert read_multiplier(rule.mult) * input_usd / 1e6 * 1_000 == pytest.approx(billed, rel=1e-9)


@pytest.mark.parametrize(
    "name", ["anthropic:claude-sonnet-4-6", "openai:gpt-5", "deepseek:deepseek-v4-pro"]
)
def test_the_engines_controller_reads_at_the_rules_read_multiplier(name: str) -> None:
    provider, model = name.split(":")
    rule = cache_model_for(name).rule
    assert cache_terms(provider, model).read == read_multiplier(rule.mult)
