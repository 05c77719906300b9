"""A passing lull does not move the trigger (docs/runtime.md, "The cost controller";
:mod:`regio.policies.costcontrol`, "A passing lull"): the growth per request the controller
measures on what the conversation holds may be small right after a compaction; when at the
session's own pace (the mean of its last requests) the window-fill trigger is the cost-optimal
one, the controller keeps it."""

from __future__ import annotations

import math
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.policies.costcontrol import CostTerms, controlled_trigger, interval
from regio.policies.eviction import Compact
from regio.policies.rewriteodds import MIN_STEPS, STEP_HISTORY, StepLog
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))

#: Anthropic's 5-minute cache and Sonnet's prices: read 0.1, write 1.25, output 5 (x input).
ANTHROPIC = CostTerms(read=0.1, write=1.25, output=5.0, summary=2000)


def test_the_early_trigger_stands_only_where_the_session_s_pace_would_take_it_too() -> None:
    # R 20,000: x* = sqrt(2 D (20,000 + (5 * 2,000 + 1.25 * 20,000) / 0.1)) = sqrt(740,000 D)
    # D 1,500: x* = 33,316.66 -> 53,317; D 3,000: x* = 47,116.88 -> 67,117
    assert controlled_trigger(60_000, 1500, 20_000, ANTHROPIC) == 53_317
    # at a pace of 3,000 a request the window-fill trigger (60,000) is already the best
    assert controlled_trigger(60_000, 1500, 20_000, ANTHROPIC, pace=3000) == 60_000
    # at a pace of 1,500, or 2,000 (x* = 38,470.77 -> 58,471 < 60,000), the early one stands
    assert controlled_trigger(60_000, 1500, 20_000, ANTHROPIC, pace=1500) == 53_317
    assert controlled_trigger(60_000, 1500, 20_000, ANTHROPIC, pace=2000) == 53_317
    # a wider window: early at either pace
    assert controlled_trigger(165_000, 1500, 20_000, ANTHROPIC, pace=3000) == 53_317
    # the pace moves nothing later than the window-fill trigger, nor earlier than R + x*
    assert controlled_trigger(60_000, 3000, 20_000, ANTHROPIC, pace=1500) == 60_000


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(
    limit=st.integers(1_000, 1_000_000),
    delta=st.floats(0.0, 20_000.0),
    pace=st.floats(0.0, 20_000.0),
    kept=st.integers(0, 200_000),
    read=st.floats(0.01, 1.0),
    write=st.floats(0.0, 2.0),
    summary=st.floats(0, 5000),
    elapsed=st.none() | st.integers(0, 10_000),
)
def test_the_pace_only_ever_keeps_the_window_fill_trigger(
    limit: int,
    delta: float,
    pace: float,
    kept: int,
    read: float,
    write: float,
    summary: float,
    elapsed: int | None,
) -> None:
    terms = CostTerms(read=read, write=write, summary=summary)
    alone = controlled_trigger(limit, delta, kept, terms, elapsed=elapsed)
    paced = controlled_trigger(limit, delta, kept, terms, elapsed=elapsed, pace=pace)
    assert paced in (alone, limit)
    # at the pace, R + x* (the module doc's formula) reaches the window-fill trigger
    fill_at_pace = pace <= 0 or math.ceil(kept + interval(pace, kept, terms)) >= limit
    assert (paced == alone) == (alone == limit or not fill_at_pace)


def test_the_step_log_s_pace_is_the_mean_of_its_last_steps_once_there_are_enough() -> None:
    # a step opens at a reply (its tokens count in it) and closes at the next reply
    log = StepLog()
    for i in range(MIN_STEPS):
        log = log.appended(1000 + i, reply=True, others=0)
    assert len(log.done) == MIN_STEPS - 1 and log.pace() is None
    log = log.appended(0, reply=True, others=0)  # closes the step of 1,000 + MIN_STEPS - 1
    assert log.pace() == sum(1000 + i for i in range(MIN_STEPS)) / MIN_STEPS
    many = StepLog(done=tuple((t, 0) for t in range(STEP_HISTORY)))
    assert many.pace() == sum(range(STEP_HISTORY)) / STEP_HISTORY


def _conversation() -> Any:
    """An 80k window: a 5,000-token system prompt, a summary history and a conversation
    whose compaction keeps 20,000 tokens (a declared target), priced as ``ANTHROPIC``, in a
    session long enough for an early compaction to pay back, holding ten 1,500-token tool
    requests (a reply of 2 tokens and its result: one turn group a step)."""
    engine = make_engine(
        [
            Pinned(name="system", budget=6000, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=4000),
            SlidingWindow(name="conversation", budget="50%", eviction=Compact(target=20_000)),
        ],
        max_tokens=80_000,
        summarizer=StubSummarizer(size=40),
    )
    engine.write("system", words(5000, "sys"))
    conv = engine.window.region("conversation")
    conv.cost_terms = ANTHROPIC
    conv.replies = 1000
    for i in range(10):
        engine.add_assistant(f"s{i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(1498, f"r{i}x"))
    return conv


def _early(conv: Any, delta: float) -> int:
    """R + x* for ``delta`` tokens a request, by hand, in the conversation's tokens."""
    kept = conv.outside_tokens() + 20_000
    x = math.sqrt(2 * delta * (kept + (5 * 2000 + 1.25 * kept) / 0.1))
    return math.ceil(kept + x) - conv.outside_tokens()


def test_a_conversation_in_a_lull_keeps_the_window_fill_trigger() -> None:
    conv = _conversation()
    window_fill = int(0.9 * conv.budget)
    assert conv.growth() == 1500
    assert _early(conv, 1500) < window_fill <= _early(conv, 6000)
    # the session's last requests added 1,500 tokens each: the early trigger
    conv.steps = StepLog(done=((1500, 0),) * 12)
    assert conv.token_trigger == _early(conv, 1500)
    # they added 6,000 each: the held turns are a lull, the window-fill trigger stays
    conv.steps = StepLog(done=((6000, 0),) * 12)
    assert conv.token_trigger == window_fill
    # too few logged to tell: the held turns decide
    conv.steps = StepLog(done=((6000, 0),) * (MIN_STEPS - 1))
    assert conv.token_trigger == _early(conv, 1500)


def test_the_steady_trigger_keeps_the_rule_too() -> None:
    # the session's pace changes slowly (a mean of its last 32 requests): the trigger a
    # session long past the payback wait has (the forecast's horizon, an expired cache's soft
    # mark) is the window-fill one in the lull as well
    conv = _conversation()
    conv.steps = StepLog(done=((6000, 0),) * 12)
    window_fill = int(0.9 * conv.budget)
    assert conv.token_trigger == window_fill
    steady = conv.hysteresis(steady=True)
    assert steady is not None and steady[0] == window_fill
    conv.steps = StepLog(done=((1500, 0),) * 12)
    steady = conv.hysteresis(steady=True)
    assert steady is not None and steady[0] == _early(conv, 1500)


def test_the_pace_is_restored_with_the_session() -> None:
    conv = _conversation()
    conv.steps = StepLog(done=((6000, 0),) * 12)
    fresh = _conversation()
    assert fresh.token_trigger == _early(fresh, 1500)
    fresh.load_state(list(conv.entries), conv.version, conv.state_extra())
    assert fresh.steps.pace() == conv.steps.pace() == 6000
    assert fresh.token_trigger == conv.token_trigger == int(0.9 * conv.budget)


def test_a_chat_request_adds_two_turn_groups_and_the_pace_weighs_the_request() -> None:
    # no tools: a request is a user message and the reply, two turn groups of 750 tokens;
    # the held turns measure 750 a group, the pace 1,500 a request: at 1,500 tokens a
    # request the window-fill trigger is the best, so the controller keeps it
    engine = make_engine(
        [
            Pinned(name="system", budget=6000, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=4000),
            SlidingWindow(name="conversation", budget="50%", eviction=Compact(target=20_000)),
        ],
        max_tokens=62_000,
        summarizer=StubSummarizer(size=40),
    )
    engine.write("system", words(5000, "sys"))
    conv = engine.window.region("conversation")
    conv.cost_terms = ANTHROPIC
    conv.replies = 1000
    for i in range(12):
        engine.add_user(words(750, f"u{i}x"))
        engine.add_assistant(words(750, f"a{i}x"))
    assert conv.growth() == 750
    assert conv.steps.pace() == 1500
    window_fill = int(0.9 * conv.budget)
    assert _early(conv, 750) < window_fill <= _early(conv, 1500)
    assert conv.token_trigger == window_fill
