"""Recorded usage: both providers' terms kept, the shared figures derived, JSONL round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.content import Text
from regio.traces import (
    AssistantMessage,
    Header,
    Trace,
    Usage,
    UserMessage,
    dumps_trace,
    loads_trace,
    recorded_usage,
    usage_totals,
)


def test_anthropic_usage_sums_uncached_read_and_written_tokens_into_the_prompt() -> None:
    # Anthropic Messages API: input_tokens are the tokens after the last cache breakpoint.
    usage = Usage.anthropic(6, 177, cache_read_input_tokens=3482, cache_creation_input_tokens=1158)
    assert usage.prompt_tokens == 4646
    assert (usage.cached_tokens, usage.cache_write_tokens, usage.uncached_tokens) == (
        3482,
        1158,
        6,
    )
    assert usage.reported["cache_creation_input_tokens"] == 1158
    assert usage.hit_rate == pytest.approx(3482 / 4646)


def test_openai_usage_counts_cached_tokens_inside_the_prompt() -> None:
    usage = Usage.openai(2473, 10, cached_tokens=2304)
    assert usage.prompt_tokens == 2473
    assert (usage.cached_tokens, usage.cache_write_tokens, usage.uncached_tokens) == (2304, 0, 169)
    assert usage.reported == {"input_tokens": 2473, "cached_tokens": 2304, "output_tokens": 10}


counts = st.integers(0, 10**7)


@given(counts, counts, counts, counts)
def test_anthropic_figures_partition_the_prompt(i: int, o: int, r: int, c: int) -> None:
    usage = Usage.anthropic(i, o, r, c)
    parts = usage.cache_read_tokens + usage.cache_write_tokens + usage.uncached_tokens
    assert parts == usage.prompt_tokens
    assert usage.uncached_tokens == i
    assert 0.0 <= usage.hit_rate <= 1.0


@given(counts, counts, counts)
def test_openai_figures_partition_the_prompt(cached: int, extra: int, o: int) -> None:
    usage = Usage.openai(cached + extra, o, cached)
    assert usage.uncached_tokens == extra
    assert 0.0 <= usage.hit_rate <= 1.0


def _trace() -> Trace:
    return Trace(
        Header("u", "regio"),
        (
            UserMessage(0.0, (Text("hi"),)),
            AssistantMessage(1.0, (Text("a"),), Usage.anthropic(4, 9, 0, 3482)),
            UserMessage(2.0, (Text("more"),)),
            AssistantMessage(3.0, (Text("b"),)),
            UserMessage(4.0, (Text("again"),)),
            AssistantMessage(5.0, (Text("c"),), Usage.anthropic(6, 1, 3482, 1158)),
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
    assert '"provider":"anthropic"' in text
    assert loads_trace(text) == trace


def test_a_usage_written_before_provider_terms_still_reads() -> None:
    old = (
        '{"type":"header","id":"x","source_format":"regio","version":1}\n'
        '{"type":"assistant","t":1.0,"blocks":[],"usage":{"prompt_tokens":90,'
        '"cached_tokens":40,"cache_write_tokens":0,"output_tokens":5}}\n'
    )
    usage = recorded_usage(loads_trace(old))[0]
    assert usage == Usage(90, 40, 0, 5)
    assert (usage.provider, usage.reported, usage.uncached_tokens) == (None, {}, 50)
