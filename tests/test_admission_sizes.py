"""Sizes, counts and usage given to the engine are checked where they come in: a measured size
that is not a count (``tokens=-5`` used to brick the engine: every later ``request()``
raised), a compact limit of the wrong type, or a usage report the engine cannot read is refused
with a ``RegioError`` (also a ``ValueError``) naming the argument, and nothing changes."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.blueprint import load_blueprint
from regio.content import Entry, Text
from regio.engine import Engine
from regio.errors import RegioError, SizeError, UsageError

BLUEPRINT = load_blueprint(
    """
version: 1
name: sizes
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be brief."}
  - {name: facts, kind: keyed, budget: 4000}
  - {name: history, kind: compact_history, source: conversation, budget: 2000}
  - name: conversation
    kind: sliding_window
    budget: 20000
    eviction: {strategy: compact, compact_count: 4}
"""
)


def engine() -> Engine:
    out = Engine.from_blueprint(BLUEPRINT)
    out.add_user("Start.")
    return out


def test_a_negative_measured_size_is_refused_and_the_engine_keeps_working() -> None:
    e = engine()
    for _ in range(3):
        with pytest.raises(SizeError, match="add_message: tokens must be >= 0, got -5"):
            e.add_user("hi", tokens=-5)
        with pytest.raises(SizeError, match="tokens must be >= 0, got -50000"):
            e.add_assistant("yo", tokens=-50_000)
    assert len(e.window.conversation.entries) == 1
    e.request()
    e.snapshot()


@pytest.mark.parametrize("tokens", [True, 1.5, "7", 2**60, math.nan, [3]])
def test_a_measured_size_that_is_not_a_count_is_refused_naming_the_argument(tokens: Any) -> None:
    e = engine()
    with pytest.raises(SizeError, match="add_message: tokens must be"):
        e.add_user("hi", tokens=tokens)
    assert len(e.window.conversation.entries) == 1


def test_an_integer_like_measured_size_is_accepted() -> None:
    numpy = pytest.importorskip("numpy")
    entry = engine().add_user("hi", tokens=numpy.int64(7))
    assert entry.tokens == 7 and type(entry.tokens) is int


def test_an_entry_written_with_a_negative_size_is_refused() -> None:
    e = engine()
    bad = Entry(id="x", blocks=(Text("fact"),), key="k", tokens=-3)
    with pytest.raises(SizeError, match=r"write\(facts\): the entry's tokens must be >= 0"):
        e.write("facts", bad, key="k")
    assert e.window.region("facts").entries == []
    e.request()


@pytest.mark.parametrize(
    ("limits", "match"),
    [
        ({"keep_tokens": -1}, "keep_tokens must be >= 0"),
        ({"keep_tokens": 1.5}, "keep_tokens must be a whole number"),
        ({"keep_messages": "3"}, "keep_messages must be a whole number"),
        ({"keep_fraction": math.nan}, r"keep_fraction is a fraction in \[0, 1\]"),
        ({"keep_fraction": True}, r"keep_fraction is a fraction in \[0, 1\]"),
    ],
)
def test_compact_limits_of_the_wrong_kind_are_size_errors(
    limits: dict[str, Any], match: str
) -> None:
    with pytest.raises(SizeError, match=match):
        engine().compact(**limits)


@pytest.mark.parametrize(
    ("usage", "match"),
    [
        ({"input_tokens": "abc", "output_tokens": 3}, "input_tokens must be a token count"),
        ({"prompt_tokens": -4, "completion_tokens": 3}, "prompt_tokens must be a finite count"),
        ({"input_tokens": math.inf, "output_tokens": 1}, "input_tokens must be a finite count"),
        ({"input_tokens": math.nan, "output_tokens": 1}, "input_tokens must be a finite count"),
        ({"input_tokens": 2**70, "output_tokens": 1}, "input_tokens must be a finite count"),
        ({"cost": 3}, "not a usage report"),
    ],
)
def test_garbage_usage_is_a_usage_error_and_nothing_is_recorded(
    usage: dict[str, Any], match: str
) -> None:
    e = engine()
    e.request()
    with pytest.raises(RegioError, match=match) as caught:
        e.observe(usage)
    assert isinstance(caught.value, ValueError | TypeError)
    assert e.ledger.count == 0


def test_usage_nested_past_any_api_is_refused_without_recursing() -> None:
    usage: dict[str, Any] = {"output_tokens": 1}
    for _ in range(5000):
        usage = {"usage": usage}
    e = engine()
    with pytest.raises(UsageError, match="unrecognised usage"):
        e.ledger.observe(usage)


def test_a_provider_name_no_save_can_hold_is_refused_by_observe() -> None:
    e = engine()
    with pytest.raises(UsageError, match="observe: model must be text without lone surrogates"):
        e.observe({"input_tokens": 5, "output_tokens": 1}, model="gpt\ud800")
    assert e.ledger.count == 0


@settings(max_examples=40, deadline=None)
@given(
    value=st.one_of(
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.text(max_size=4),
        st.none(),
    )
)
def test_property_a_usage_count_is_recorded_or_refused_never_a_raw_error(value: Any) -> None:
    e = engine()
    try:
        record = e.observe({"input_tokens": value, "output_tokens": 1})
    except RegioError:
        assert e.ledger.count == 0
        return
    assert record.prompt_tokens >= 0
    e.request()
