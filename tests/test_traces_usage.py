"""Recorded provider usage: both providers' terms, the derived figures, JSONL round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.content import Text
from regio.traces import (
    AssistantMessage,
    Header,
    Trace,
    TraceFormatError,
    Usage,
    UserMessage,
    dumps_trace,
    loads_trace,
    recorded_usage,
    usage_totals,
)


def test_anthropic_usage_sums_uncached_read_and_written_tokens_into_the_prompt() -> None:
    # Anthropic Messages API: input_tokens are the tokens after the last cache breakpoint.
    usage = Usage(
        "anthropic",
        input_tokens=6,
        output_tokens=177,
        cache_read_input_tokens=3482,
        cache_creation_input_tokens=1158,
    )
    assert usage.prompt_tokens == 4646
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.uncached_tokens) == (
        3482,
        1158,
        6,
    )
    assert usage.hit_rate == pytest.approx(3482 / 4646)


def test_openai_usage_counts_cached_tokens_inside_the_prompt() -> None:
    usage = Usage("openai", input_tokens=2473, output_tokens=10, cached_tokens=2304)
    assert usage.prompt_tokens == 2473
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.uncached_tokens) == (
        2304,
        0,
        169,
    )


counts = st.integers(0, 10**7)


@given(st.sampled_from(["anthropic", "openai"]), counts, counts, counts, counts, counts)
def test_derived_figures_partition_the_prompt(provider, i, o, r, c, k) -> None:  # type: ignore[no-untyped-def]
    usage = Usage(provider, i, o, r, c, k)
    if provider == "openai":
        usage = Usage(provider, i + k, o, 0, 0, k)  # cached_tokens are part of the prompt
    parts = usage.cache_read_tokens + usage.cache_write_tokens + usage.uncached_tokens
    assert parts == usage.prompt_tokens
    assert 0.0 <= usage.hit_rate <= 1.0


def _trace() -> Trace:
    return Trace(
        Header("u", "regio"),
        (
            UserMessage(0.0, (Text("hi"),)),
            AssistantMessage(1.0, (Text("a"),), Usage("anthropic", 4, 9, 0, 3482)),
            UserMessage(2.0, (Text("more"),)),
            AssistantMessage(3.0, (Text("b"),)),
            UserMessage(4.0, (Text("again"),)),
            AssistantMessage(5.0, (Text("c"),), Usage("anthropic", 6, 1, 3482, 1158)),
        ),
    )


def test_recorded_usage_gives_one_entry_per_model_call_in_step_order() -> None:
    trace = _trace()
    usages = recorded_usage(trace)
    assert len(usages) == len(trace.steps())
    assert usages == [step.usage for step in trace.steps()]
    assert usages[1] is None


def test_usage_totals_sum_the_recorded_calls_only() -> None:
    totals = usage_totals(recorded_usage(_trace()))
    assert (totals.calls, totals.recorded) == (3, 2)
    assert totals.prompt_tokens == 3486 + 4646
    assert totals.hit_rate == pytest.approx(3482 / (3486 + 4646))
    assert usage_totals([]).hit_rate == 0.0


def test_usage_round_trips_through_jsonl_in_the_providers_terms() -> None:
    trace = _trace()
    text = dumps_trace(trace)
    assert '"cache_creation_input_tokens":3482' in text
    assert loads_trace(text) == trace


def test_a_usage_with_unknown_fields_is_refused_naming_the_line() -> None:
    bad = (
        '{"type":"header","id":"x","source_format":"regio"}\n'
        '{"type":"assistant","t":1.0,"blocks":[],"usage":{"prompt_tokens":5}}\n'
    )
    with pytest.raises(TraceFormatError, match="line 2"):
        loads_trace(bad, "x.jsonl")
