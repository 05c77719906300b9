"""The cost controller (issue 27; docs/runtime.md, "The cost controller"): the compaction
trigger comes from the cache economics, compacts earlier than the window forces when that is
cheaper per request, never later than the window allows, at once when the cached prefix has
expired, and never below a declared keep floor."""

from __future__ import annotations

import math
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.policies.costcontrol import CostTerms, controlled_trigger, interval, request_cost
from regio.policies.eviction import Compact
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))

#: Anthropic's 5-minute cache and Sonnet's prices: read 0.1, write 1.25, output 5 (x input).
ANTHROPIC = CostTerms(read=0.1, write=1.25, output=5.0, summary=2000)


def test_the_optimal_interval_is_the_formula_on_hand_computed_cases() -> None:
    # x* = sqrt(2 D (R + (o s + w R) / r)); D 1,500, R 20,000, s 2,000:
    # sqrt(3,000 * (20,000 + (10,000 + 25,000) / 0.1)) = sqrt(3,000 * 370,000) = 33,316.66
    assert interval(1500, 20_000, ANTHROPIC) == pytest.approx(33_316.66, abs=0.01)
    # OpenAI GPT-5: read 0.1, write 1, output 8; D 800, R 10,000, s 1,000:
    # sqrt(1,600 * (10,000 + (8,000 + 10,000) / 0.1)) = sqrt(1,600 * 190,000) = 17,435.60
    gpt5 = CostTerms(read=0.1, write=1.0, output=8.0, summary=1000)
    assert interval(800, 10_000, gpt5) == pytest.approx(17_435.60, abs=0.01)
    assert interval(0, 10_000, gpt5) == 0.0


def test_the_cost_per_request_is_least_at_the_optimal_interval() -> None:
    best = interval(1500, 20_000, ANTHROPIC)
    cost = request_cost(1500, 20_000, best, ANTHROPIC)
    # r (R + x/2) + w D + D (r (R + x) + o s + w R) / x, by hand at x = 33,316.66:
    # 0.1 * 36,658.33 + 1,875 + 1,500 * (5,331.67 + 10,000 + 25,000) / 33,316.66 = 7,357.0
    assert cost == pytest.approx(7357.0, abs=0.5)
    assert cost < request_cost(1500, 20_000, 0.8 * best, ANTHROPIC)
    assert cost < request_cost(1500, 20_000, 1.25 * best, ANTHROPIC)
    with pytest.raises(ValueError):
        request_cost(1500, 20_000, 0, ANTHROPIC)


def test_the_trigger_equals_the_formula_on_hand_computed_cases() -> None:
    # a compaction that keeps 20,000 tokens: T = R + x* = 20,000 + 33,316.66 -> 53,317
    assert controlled_trigger(165_000, 1500, 20_000, ANTHROPIC) == 53_317
    # never later than the window allows
    assert controlled_trigger(40_000, 1500, 20_000, ANTHROPIC) == 40_000
    # no measured growth yet: the window-fill trigger
    assert controlled_trigger(165_000, 0, 20_000, ANTHROPIC) == 165_000


def _conversation(window: int = 200_000, **conv: Any) -> Any:
    """An engine with a 5,000-token system prompt, a summary history and a conversation whose
    compaction keeps 20,000 tokens (a declared target), priced as ``ANTHROPIC``."""
    engine = make_engine(
        [
            Pinned(name="system", budget=6000, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=4000),
            SlidingWindow(
                name="conversation", budget="50%", eviction=Compact(**conv.pop("ev", {})), **conv
            ),
        ],
        max_tokens=window,
        summarizer=StubSummarizer(size=40),
    )
    engine.write("system", words(5000, "sys"))
    return engine


def _grow(engine: Any, units: int, size: int = 1500, start: int = 0) -> None:
    """``units`` turn groups of exactly ``size`` tokens (the stub counts words)."""
    for i in range(start, start + units):
        engine.add_assistant(f"s{i}", [ToolUse(f"c{i}", "bash", {"i": i})])  # 2 words
        engine.add_tool_result(f"c{i}", words(size - 2, f"r{i}x"))


def test_a_conversation_compacts_at_the_formula_s_trigger_not_when_the_window_is_full() -> None:
    engine = _conversation(ev={"target": 20_000})
    conv = engine.window.region("conversation")
    conv.cost_terms = ANTHROPIC
    conv.replies = 1000  # a session long enough for an early compaction to pay back
    _grow(engine, 10)
    outside = conv.outside_tokens()
    assert outside == 5000 + engine.window.reserved_tokens
    kept = outside + 20_000
    # T = R + sqrt(2 D (R + (o s + w R) / r)) with D = 1,500 (one unit per request)
    whole = math.ceil(kept + math.sqrt(2 * 1500 * (kept + (5 * 2000 + 1.25 * kept) / 0.1)))
    assert conv.token_trigger == whole - outside
    window_fill = int(0.9 * conv.budget)
    assert conv.token_trigger < window_fill  # earlier than the window forces
    conv.cost_terms = None
    assert conv.token_trigger == window_fill  # the window-fill trigger, without the prices


def test_at_a_small_window_the_controlled_trigger_is_the_window_fill_trigger() -> None:
    engine = _conversation(window=32_000, ev={"target": 8000})
    conv = engine.window.region("conversation")
    conv.cost_terms = ANTHROPIC
    _grow(engine, 4)
    assert conv.token_trigger == int(0.9 * conv.budget)


@pytest.mark.parametrize("long_session", [True, False])
def test_an_expired_cache_moves_compaction_earlier(long_session: bool) -> None:
    # a young session (28 requests, before an early compaction pays back) is compacted at the
    # same soft mark: with the cache expired the rewrite is paid anyway, nothing is a bet
    for idle, compacts in ((10.0, False), (301.0, True)):
        clock = [0.0]
        engine = _conversation(ev={"target": 20_000})
        engine.session.clock = lambda c=clock: c[0]
        engine.session.cache_ttl_s = 300.0
        conv = engine.window.region("conversation")
        conv.cost_terms = ANTHROPIC
        if long_session:
            conv.replies = 1000  # the controlled trigger applies
        engine.add_user("go")
        i = 0
        while conv.used_tokens < 42_000:  # above the soft mark, below the controlled trigger
            engine.request()
            _grow(engine, 1, start=i)
            i += 1
        assert (conv.hysteresis() == conv.hysteresis(steady=True)) is long_session
        trigger, target = conv.hysteresis(steady=True)
        assert target + (trigger - target) // 2 <= conv.used_tokens < trigger
        engine.request()
        assert not engine.events.of_kind("compaction_completed")
        clock[0] += idle
        engine.request()
        reasons = {e.reason for e in engine.events.of_kind("compaction_queued")}
        assert ("cache_expired" in reasons) is compacts
        assert bool(engine.events.of_kind("compaction_completed")) is compacts


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(min_value=50, max_value=6000), min_size=5, max_size=40),
    floor=st.integers(min_value=0, max_value=30_000),
    priced=st.booleans(),
    manual=st.booleans(),
)
def test_a_declared_keep_floor_is_never_crossed(
    sizes: list[int], floor: int, priced: bool, manual: bool
) -> None:
    engine = _conversation(window=64_000, keep_at_least=floor)
    conv = engine.window.region("conversation")
    if not priced:
        conv.cost_terms = None
    before: list[int] = []
    engine.subscribe(
        lambda e: (
            before.append(conv.used_tokens)
            if type(e).__struct_config__.tag == "compaction_started"
            else None
        )
    )
    after: list[int] = []
    engine.subscribe(
        lambda e: (
            after.append(conv.used_tokens)
            if type(e).__struct_config__.tag == "compaction_finished"
            else None
        )
    )
    engine.add_user("go")
    for i, size in enumerate(sizes):
        engine.request()
        _grow(engine, 1, size=size, start=i)
    engine.request()
    if manual:
        engine.compact(keep_tokens=0)  # asks for everything: the floor still holds
    for was, left in zip(before, after, strict=False):
        assert left >= min(floor, was), (floor, was, left)
