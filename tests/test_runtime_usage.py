"""Usage ledger: every provider's usage shape normalizes to one record with its cost."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.session._usage import ModelPricing, UsageLedger, normalize_usage

PRICES = ModelPricing(
    input=3.0,
    output=15.0,
    mult={"read": 0.1, "write_5m": 1.25, "write_1h": 2.0, "plain": 1.0},
    rule_id="test/rule",
)


def _sdk_type(module: str, name: str) -> Any:
    """A provider SDK's usage class (the objects users pass), or a skip with the reason."""
    package = module.split(".")[0]
    sdk = pytest.importorskip(module, reason=f"the {package} SDK is not installed")
    return getattr(sdk, name)


def _ledger() -> UsageLedger:
    return UsageLedger(prices=lambda provider, model: PRICES if provider == "anthropic" else None)


def test_anthropic_usage_sums_uncached_read_and_written_into_the_prompt_size() -> None:
    usage = _sdk_type("anthropic.types", "Usage")(
        input_tokens=100,
        output_tokens=50,
        cache_read_input_tokens=9_000,
        cache_creation_input_tokens=1_000,
    )
    record = _ledger().observe(usage, provider="anthropic", model="claude-sonnet-4-5")
    assert record.api == "anthropic"
    assert record.prompt_tokens == 10_100
    assert (record.uncached_tokens, record.cache_read_tokens, record.cache_write_5m_tokens) == (
        100,
        9_000,
        1_000,
    )
    expected = 3.0 / 1e6 * (100 + 9_000 * 0.1 + 1_000 * 1.25) + 15.0 / 1e6 * 50
    assert record.cost_usd == pytest.approx(expected)
    assert record.rule_id == "test/rule"


def test_anthropic_ttl_breakdown_is_priced_per_ttl() -> None:
    usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 300,
        "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
        "output_tokens": 0,
    }
    record = _ledger().observe(usage, provider="anthropic", model="m")
    assert (record.cache_write_5m_tokens, record.cache_write_1h_tokens) == (100, 200)
    assert record.prompt_tokens == 310
    assert record.cost_usd == pytest.approx(3.0 / 1e6 * (10 + 125 + 400))


def test_openai_chat_usage_counts_cached_tokens_as_reads() -> None:
    usage = _sdk_type("openai.types", "CompletionUsage")(
        prompt_tokens=2_000,
        completion_tokens=30,
        total_tokens=2_030,
        prompt_tokens_details={"cached_tokens": 1_536},
    )
    fields = normalize_usage(usage)
    assert fields["api"] == "openai_chat"
    assert (fields["prompt_tokens"], fields["cache_read_tokens"], fields["uncached_tokens"]) == (
        2_000,
        1_536,
        464,
    )
    assert fields["output_tokens"] == 30


def test_openai_responses_usage_reads_input_tokens_details() -> None:
    fields = normalize_usage(
        {
            "input_tokens": 5_000,
            "input_tokens_details": {"cached_tokens": 4_096},
            "output_tokens": 12,
            "output_tokens_details": {"reasoning_tokens": 0},
        }
    )
    assert fields["api"] == "openai_responses"
    assert (fields["prompt_tokens"], fields["cache_read_tokens"]) == (5_000, 4_096)


def test_a_response_object_with_a_usage_field_is_accepted() -> None:
    fields = normalize_usage({"id": "x", "usage": {"prompt_tokens": 7, "completion_tokens": 1}})
    assert fields["prompt_tokens"] == 7


def test_no_usage_is_zero_and_unpriced() -> None:
    record = _ledger().observe(None, provider="generic", model="m")
    assert record.api == "none" and record.prompt_tokens == 0 and record.cost_usd is None


def test_a_negative_count_is_refused_with_the_field_name() -> None:
    with pytest.raises(ValueError, match="prompt_tokens"):
        normalize_usage({"prompt_tokens": -1})


def test_an_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="unrecognised usage"):
        normalize_usage({"tokens": 5})


def test_totals_sum_the_records_and_cost_is_none_when_one_call_is_unpriced() -> None:
    ledger = _ledger()
    ledger.observe({"input_tokens": 10, "output_tokens": 1}, provider="anthropic", model="m")
    ledger.observe({"prompt_tokens": 20, "completion_tokens": 2}, provider="openai", model="m")
    totals = ledger.totals()
    assert (totals.calls, totals.prompt_tokens, totals.output_tokens) == (2, 30, 3)
    assert totals.cost_usd is None


def test_default_prices_come_from_the_packaged_cache_rules() -> None:
    ledger = UsageLedger()
    record = ledger.observe(
        {"input_tokens": 1_000_000, "output_tokens": 0},
        provider="anthropic",
        model="claude-sonnet-4-5",
    )
    assert record.rule_id is not None  # the rules file ships inside the package
    # Sonnet 4.5 lists input at $3 per million tokens (spec cache-rules.md section 3)
    assert record.cost_usd is not None and abs(record.cost_usd - 3.0) < 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**5))
def test_anthropic_token_classes_always_add_up_to_the_prompt(
    uncached: int, read: int, created: int, out: int
) -> None:
    fields = normalize_usage(
        {
            "input_tokens": uncached,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": created,
            "output_tokens": out,
        }
    )
    parts = (
        fields["uncached_tokens"]
        + fields["cache_read_tokens"]
        + fields["cache_write_5m_tokens"]
        + fields["cache_write_1h_tokens"]
        + fields["cache_write_tokens"]
    )
    assert parts == fields["prompt_tokens"] == uncached + read + created
