"""Field cases of budget truth and overflow: FC-18, 19, 20, 22, 23, 26."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from regio.engine import Engine
from regio.errors import (
    CompactionNoProgressError,
    ContextOverflowError,
    RegioError,
    RegionFullError,
)
from regio.regions import CompactHistory, Compacting, Pinned, SlidingWindow, Temporary
from runtime_stubs import StubSummarizer, make_engine, words


def _convo_engine(summarizer: StubSummarizer, **options: object) -> Engine:
    return make_engine(
        [
            Pinned(name="S", budget=1_000),
            CompactHistory(name="hist", budget=5_000, source="conversation"),
            SlidingWindow(name="conversation", budget=300_000),
        ],
        summarizer=summarizer,
        max_tokens=400_000,
        **options,
    )  # type: ignore[arg-type]


def _fill(engine: Engine, total: int, tag: str) -> None:
    """Append user/assistant pairs of 1,000 tokens until ``total`` tokens were added."""
    added = 0
    i = 0
    while added < total:
        n = min(1_000, total - added)
        if i % 2 == 0:
            engine.add_user(words(n, f"{tag}u{i}_"), tokens=n)
        else:
            engine.add_assistant(words(n, f"{tag}a{i}_"), tokens=n)
        added += n
        i += 1


# --- FC-18 ------------------------------------------------------------------------------
def test_fc_18_calibration_makes_the_trigger_fire_before_the_request_is_sent() -> None:
    stub = StubSummarizer(100)
    engine = _convo_engine(
        stub, context_window=200_000, output_reserve=8_000, compact_trigger=170_000
    )
    _fill(engine, 100_000 - engine.budget.estimate(), "t1")
    _fill(engine, 1, "pad")
    engine.request()
    assert stub.inputs == []
    estimate = engine.state.last_estimate
    engine.observe({"input_tokens": round(estimate * 1.22), "output_tokens": 10})
    assert engine.calibration.factor(engine.budget.calibration_key()) == pytest.approx(
        1.22, abs=0.001
    )
    _fill(engine, 40_000, "t2")
    engine.add_user("next question", tokens=2)
    assert engine.size() >= 170_000  # a raw 140,000 would not have fired
    engine.request()
    assert len(stub.inputs) >= 1
    assert engine.budget.calibrated(engine.state.last_estimate) <= 192_000


def test_fc_18_a_safety_margin_fires_the_trigger_earlier() -> None:
    from regio.tokens import Calibration

    engine = _convo_engine(
        StubSummarizer(100), compact_trigger=170_000, calibration=Calibration(margin=0.05)
    )
    _fill(engine, 162_000, "m")
    assert engine.size() >= 170_000 > engine.budget.estimate()


def test_fc_18_tool_schemas_are_counted_and_each_model_keeps_its_own_factor() -> None:
    # nothing here is agent-writable, so the default offers no context tool: offer them all
    engine = _convo_engine(StubSummarizer(10), context_tools="all")
    assert engine.budget.tools_tokens() > 0
    assert engine.budget.ceiling() == (
        engine.budget.limit - engine.budget.tools_tokens() - engine.budget.system_overhead
    )
    engine.add_user(words(100))
    engine.request("anthropic", "claude-sonnet-4-5")
    engine.observe({"input_tokens": engine.state.last_estimate * 2})
    engine.request("openai", "gpt-4o")
    engine.observe({"prompt_tokens": engine.state.last_estimate})
    assert engine.calibration.factor("anthropic:claude-sonnet-4-5") == pytest.approx(2.0)
    assert engine.calibration.factor("openai:gpt-4o") == 1.0


# --- FC-19 ------------------------------------------------------------------------------
USAGE = {
    "anthropic": lambda n: {"input_tokens": n, "output_tokens": 5},
    "openai": lambda n: {"prompt_tokens": n, "completion_tokens": 5},
    "generic": lambda n: None,
}


@pytest.mark.parametrize("adapter", sorted(USAGE))
def test_fc_19_the_trigger_fires_on_the_tenth_append_for_every_adapter(adapter: str) -> None:
    stub = StubSummarizer(10)
    engine = make_engine(
        [
            Compacting(name="work", budget=2_000, threshold_tokens=1_000),
            CompactHistory(name="hist", budget=1_000, source="work"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=stub,
        provider="openai" if adapter == "openai" else "anthropic",
    )
    engine.add_user("go")
    fired_at = None
    for i in range(1, 13):
        engine.write("work", words(100, f"n{i}_"))
        engine.request()
        engine.observe(USAGE[adapter](engine.state.last_estimate))
        if stub.inputs and fired_at is None:
            fired_at = i
    assert fired_at == 10


def test_fc_19_over_the_hard_budget_the_engine_compacts_or_raises_in_the_same_turn() -> None:
    engine = _convo_engine(StubSummarizer(10), context_window=5_000)
    _fill(engine, 6_000, "h")
    engine.add_user("q", tokens=1)
    engine.request()
    assert engine.budget.calibrated(engine.state.last_estimate) <= 5_000
    stuck = _convo_engine(StubSummarizer(10), context_window=5_000, auto_compact=False)
    _fill(stuck, 6_000, "h")
    with pytest.raises(ContextOverflowError):
        stuck.request()


# --- FC-20 ------------------------------------------------------------------------------
def _anthropic() -> Any:
    """The anthropic SDK, or a skip: its error classes are what FC-20 recovers from."""
    return pytest.importorskip("anthropic", reason="the anthropic SDK is not installed")


def _response(status: int) -> Any:
    httpx = pytest.importorskip("httpx", reason="httpx is not installed")
    return httpx.Response(status, request=httpx.Request("POST", "https://example.invalid"))


def _anthropic_too_long(reported: int) -> Any:
    msg = f"prompt is too long: {reported} tokens > 200000 maximum"
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
    return _anthropic().BadRequestError(msg, response=_response(400), body=body)


def _overflowing_engine() -> Engine:
    engine = _convo_engine(StubSummarizer(100), context_window=200_000, output_reserve=8_000)
    _fill(engine, 180_000, "o")
    engine.add_user("q", tokens=1)
    engine.request()
    return engine


def test_fc_20_an_anthropic_refusal_compacts_rescales_and_allows_one_retry() -> None:
    engine = _overflowing_engine()
    before = len(engine.transcript())
    token = engine.recover_overflow(_anthropic_too_long(210_345))
    assert token is not None and token.info.reported == 210_345
    assert token.tokens_after <= 192_000
    assert engine.events.of_kind("overflow_recovered")
    assert len(engine.transcript()) > before  # the log keeps everything, plus the record
    assert len(engine.transcript_log.messages()) == sum(
        1 for r in engine.transcript() if r.kind == "message"
    )
    engine.request()
    with pytest.raises(ContextOverflowError) as info:
        engine.recover_overflow(_anthropic_too_long(205_000))
    assert info.value.reported == 205_000 and info.value.maximum == 200_000
    assert isinstance(info.value.provider_error, _anthropic().BadRequestError)


def test_fc_20_an_openai_context_length_code_is_recovered_too() -> None:
    engine = _overflowing_engine()
    error = {"status": 400, "error": {"code": "context_length_exceeded", "message": "too long"}}
    assert engine.recover_overflow(error) is not None


@pytest.mark.parametrize("status", [400, 429])
def test_fc_20_other_errors_come_back_with_their_own_type_and_nothing_is_compacted(
    status: int,
) -> None:
    engine = _overflowing_engine()
    anthropic = _anthropic()
    hashes = [r.content_hash() for r in engine.window.regions]
    if status == 429:
        error: Exception = anthropic.RateLimitError("slow down", response=_response(429), body=None)
    else:
        body = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "tools.0.input_schema: invalid"},
        }
        error = anthropic.BadRequestError("bad schema", response=_response(400), body=body)
    with pytest.raises(type(error)) as info:
        engine.recover_overflow(error)
    assert info.value is error
    assert [r.content_hash() for r in engine.window.regions] == hashes


# --- FC-22 ------------------------------------------------------------------------------
def test_fc_22_the_counter_is_called_at_most_once_per_new_item() -> None:
    from regio.tokens import HeuristicCounter

    class WordCounter(HeuristicCounter):
        """A CachedCounter (count cache keyed by content hash) tokenizing by words."""

        def _tokenize(self, text: str) -> int:
            return len(text.split())

    counter = WordCounter()
    engine = make_engine(
        [
            Pinned(name="S", budget=100),
            SlidingWindow(name="conversation", budget=16_000),
        ],
        counter=counter,
        max_tokens=400_000,
    )
    for i in range(1_000):
        if i % 2 == 0:
            engine.add_user(words(217, f"u{i}_"))
        else:
            engine.add_assistant(words(217, f"a{i}_"))
    counter.cache.reset_stats()
    engine.request(flush=False)
    assert counter.stats.tokenize_calls <= 1_000
    counter.cache.reset_stats()
    engine.request(flush=False)
    assert counter.stats.tokenize_calls == 0
    for i in range(50):
        counter.cache.reset_stats()
        engine.add_user(words(217, f"n{i}_"))
        engine.request(flush=False)
        assert counter.stats.tokenize_calls <= 1 + 2


# --- FC-23 ------------------------------------------------------------------------------
def _pinned_floor_engine(stub: StubSummarizer, **options: object) -> Engine:
    engine = make_engine(
        [
            Pinned(name="S", budget=25_000),
            Compacting(name="work", budget=10_000, threshold_tokens=8_000),
            CompactHistory(name="hist", budget=2_000, source="work"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=stub,
        max_tokens=100_000,
        targets={"work": 4_000},
        **options,
    )  # type: ignore[arg-type]
    engine.write("S", words(24_000, "s"))
    engine.add_user("go")
    return engine


def test_fc_23_the_pinned_prompt_never_enters_the_region_trigger() -> None:
    stub = StubSummarizer(50)
    engine = _pinned_floor_engine(stub)
    compactions = []
    for turn in range(1, 31):
        engine.write("work", words(300, f"t{turn}_"))
        engine.request()
        if len(stub.inputs) > len(compactions):
            compactions.append(turn)
    assert compactions == [27]


def test_fc_23_a_whole_context_trigger_below_the_floor_warns_once_and_never_summarizes() -> None:
    stub = StubSummarizer(50)
    engine = _pinned_floor_engine(stub, compact_trigger=20_000)
    for turn in range(10):
        engine.write("work", words(300, f"t{turn}_"))
        engine.request()
    assert stub.inputs == []
    warnings = engine.events.of_kind("trigger_below_floor")
    assert len(warnings) == 1 and warnings[0].trigger == 20_000  # type: ignore[attr-defined]
    assert warnings[0].floor >= 24_000  # type: ignore[attr-defined]


# --- FC-26 ------------------------------------------------------------------------------
@pytest.fixture
def no_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object) -> None:
        raise AssertionError("something tried to end the process")

    monkeypatch.setattr(sys, "exit", boom)
    monkeypatch.setattr(os, "_exit", boom)


def test_fc_26_a_refused_append_raises_a_typed_error_and_leaves_the_region(no_exit: None) -> None:
    engine = make_engine(
        [
            Temporary(name="notes", budget=1_000, admission="reject"),
            SlidingWindow(name="conversation", budget=1_000),
        ]
    )
    engine.write("notes", words(900))
    before = engine.window.region("notes").content_hash()
    with pytest.raises(RegionFullError) as info:
        engine.append("notes", words(200), strict=True)
    assert isinstance(info.value, RegioError) and isinstance(info.value, Exception)
    assert (info.value.region, info.value.requested, info.value.available) == ("notes", 200, 100)
    assert engine.window.region("notes").content_hash() == before


def test_fc_26_an_overflow_with_compaction_off_is_a_typed_error(no_exit: None) -> None:
    engine = _convo_engine(StubSummarizer(10), auto_compact=False)
    engine.add_user("q")
    engine.request()
    error = _anthropic_too_long(210_345)
    try:
        engine.recover_overflow(error)
    except Exception as exc:
        assert isinstance(exc, ContextOverflowError) and exc.provider_error is error
    else:
        pytest.fail("no error was raised")


def test_fc_25_no_progress_is_an_exception_not_an_exit(no_exit: None) -> None:
    class Same(StubSummarizer):
        def __call__(self, entries, standing, extra):  # type: ignore[no-untyped-def]
            return " ".join(e.text for e in entries)

    engine = make_engine(
        [
            Compacting(name="work", budget=5_000, threshold_tokens=1_000),
            CompactHistory(name="hist", budget=5_000, source="work"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=Same(),
    )
    for i in range(6):
        engine.write("work", words(200, f"n{i}_"))
    with pytest.raises(CompactionNoProgressError):
        engine.flush()
