"""One "has a price" rule: :func:`regio.session._cacheprices.priced` (the summarizer's model in
the engine's cost controller, the bench's bill and its cost bound) says a model is priced
exactly when :func:`regio.cache.billing.bill` prices a call of it with prompt and output
tokens (the ledger's, the cache simulator's, the proxy's rule). An input or output price of 0
is a price; ``None`` (not recorded) is none; the cache-write multipliers are no price and do
not enter either."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mutation_support import fuzz_settings
from regio.bench.costbound import prices_of, with_summarizer
from regio.cache.billing import bill
from regio.cache.rules import Price
from regio.providers import cache_model_for
from regio.session import ModelPricing
from regio.session._cacheprices import priced

_PRICE = st.one_of(st.none(), st.just(0.0), st.floats(0, 100, allow_nan=False))
_MULT = st.dictionaries(
    st.sampled_from(["plain", "read", "write", "write_5m", "write_1h"]),
    st.floats(0, 3, allow_nan=False),
)


@given(
    _PRICE,
    _PRICE,
    _MULT,
    st.integers(1, 2_000_000),
    st.floats(0, 4e6, allow_nan=False),
    st.integers(1, 100_000),
)
@fuzz_settings(100)
def test_a_model_is_priced_exactly_when_billing_prices_a_call_with_prompt_and_output(
    input_usd: float | None,
    output_usd: float | None,
    mult: dict[str, float],
    prompt: int,
    units: float,
    output: int,
) -> None:
    billed = bill(
        input_usd, output_usd, input_tokens=prompt, input_units=units, output_tokens=output
    )
    for price in (Price(input_usd, output_usd), ModelPricing(input_usd, output_usd, mult)):
        found = priced(price)
        assert (found is None) == (billed is None)
        if found is not None:
            assert found == (input_usd, output_usd)


@pytest.mark.parametrize(
    ("price", "expected"),
    [
        (Price(0.0, 5.0), (0.0, 5.0)),  # a free input is a price of 0, not a missing one
        (Price(1.0, 0.0), (1.0, 0.0)),  # a free output likewise
        (Price(1.0, None), None),  # no output price: a summary call is unpriced
        (Price(None, 5.0), None),
    ],
)
def test_the_disagreeing_cases_follow_the_billing_rule(
    price: Price, expected: tuple[float, float] | None
) -> None:
    assert priced(price) == expected
    billed = bill(price.input, price.output, input_tokens=10, input_units=10, output_tokens=10)
    assert (billed is None) == (expected is None)


def test_the_cost_bound_prices_a_free_input_summarizer_at_its_own_prices() -> None:
    sonnet = prices_of(cache_model_for("anthropic:claude-sonnet-4-6").rule)
    assert sonnet is not None
    free_input = attrs.evolve(cache_model_for("anthropic:claude-haiku-4-5").rule, price=Price(0, 5))
    terms = with_summarizer(sonnet, free_input)
    # the transcript it reads costs nothing; it writes at $5 over Sonnet's $3 input price
    assert terms.transcript_input == 0.0
    assert terms.summary_output == pytest.approx(5 / 3)


def test_an_agent_model_with_a_free_input_gives_no_cost_bound_terms() -> None:
    # the bound's terms are ratios of the agent's input price: $0 is a price but no ratio base
    rule = attrs.evolve(cache_model_for("anthropic:claude-sonnet-4-6").rule, price=Price(0, 15))
    assert priced(rule.price) == (0.0, 15.0)
    assert prices_of(rule) is None
