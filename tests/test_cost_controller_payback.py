"""An early compaction is a bet on the session's future (docs/runtime.md, "The cost
controller"; :mod:`regio.policies.costcontrol`): the controller keeps the window-fill trigger
until a compaction before it would pay for itself within a third of the requests the session
has made so far (the Copernican estimate of what is left, three chances in four)."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.policies.costcontrol import (
    CostTerms,
    compaction_cost,
    controlled_trigger,
    interval,
    payback_requests,
    pays_back,
)
from regio.regions import SlidingWindow
from runtime_stubs import summary_engine, words

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))

#: Anthropic's 5-minute cache and Sonnet's prices: read 0.1, write 1.25, output 5 (x input).
ANTHROPIC = CostTerms(read=0.1, write=1.25, output=5.0, summary=2000)


def test_a_compaction_pays_back_after_the_requests_the_formula_gives() -> None:
    # keeps 20,000 after 33,317 came: 0.1 * 53,317 + 5 * 2,000 + 1.25 * 20,000 = 40,331.7
    # input-token equivalents once; saves 0.1 * 33,317 = 3,331.7 a request; within a third
    # of the requests so far: 40,331.7 / (3,331.7 / 3) = 36.3 -> once it has made 37
    cost = compaction_cost(20_000, 33_317, ANTHROPIC)
    assert cost == pytest.approx(40_331.7, abs=0.01)
    assert payback_requests(20_000, 33_317, ANTHROPIC) == 37
    assert not pays_back(36, 20_000, 33_317, ANTHROPIC)
    assert pays_back(37, 20_000, 33_317, ANTHROPIC)
    # no growth or a free read: an early compaction never pays back
    assert payback_requests(20_000, 0, ANTHROPIC) is None
    assert payback_requests(20_000, 1000, CostTerms(read=0.0, write=1.0)) is None


@settings(max_examples=EXAMPLES * 8, deadline=None)
@given(
    elapsed=st.integers(0, 100_000),
    kept=st.integers(0, 500_000),
    growth=st.integers(1, 500_000),
    read=st.sampled_from([0.1, 0.3, 0.5, 1.0]) | st.floats(0.01, 1.0),
    write=st.sampled_from([0.0, 1.0, 1.25, 2.0]),
    output=st.sampled_from([0.0, 4.0, 5.0, 8.0]),
    summary=st.integers(0, 5000),
)
def test_the_payback_request_count_is_the_first_age_at_which_the_compaction_pays(
    elapsed: int, kept: int, growth: int, read: float, write: float, output: float, summary: int
) -> None:
    terms = CostTerms(read=read, write=write, output=output, summary=summary)
    needed = payback_requests(kept, growth, terms)
    assert needed is not None
    assert pays_back(elapsed, kept, growth, terms) == (elapsed >= needed)


def test_the_payback_count_agrees_with_the_test_where_the_ratio_is_a_whole_number() -> None:
    # cost 0.3 * 5 = 1.5, a request saves 0.3 * 3 / 3 = 0.3: in floating point 5 * 0.3 * 3 / 3
    # is 1.4999999999999998, so the fifth request does not pay and the count says 6
    terms = CostTerms(read=0.3, write=0.0, output=0.0, summary=0.0)
    needed = payback_requests(2, 3, terms)
    assert needed is not None
    assert pays_back(needed, 2, 3, terms) and not pays_back(needed - 1, 2, 3, terms)


def test_a_young_session_keeps_the_window_fill_trigger_until_an_early_compaction_pays() -> None:
    early = controlled_trigger(165_000, 1500, 20_000, ANTHROPIC)
    assert early == 53_317  # R + x*, without a session age (the steady state)
    needed = payback_requests(20_000, interval(1500, 20_000, ANTHROPIC), ANTHROPIC)
    assert needed == 37
    assert controlled_trigger(165_000, 1500, 20_000, ANTHROPIC, elapsed=0) == 165_000
    assert controlled_trigger(165_000, 1500, 20_000, ANTHROPIC, elapsed=needed - 1) == 165_000
    assert controlled_trigger(165_000, 1500, 20_000, ANTHROPIC, elapsed=needed) == early
    # where compacting when full is already the best, the session's age changes nothing
    assert controlled_trigger(40_000, 1500, 20_000, ANTHROPIC, elapsed=0) == 40_000


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(
    limit=st.integers(1_000, 1_000_000),
    delta=st.integers(0, 20_000),
    kept=st.integers(0, 200_000),
    read=st.floats(0.01, 1.0),
    write=st.floats(0.0, 2.0),
    summary=st.floats(0, 5000),
    ages=st.tuples(st.integers(0, 10_000), st.integers(0, 10_000)),
)
def test_the_trigger_never_passes_the_window_and_only_moves_earlier_as_the_session_ages(
    limit: int,
    delta: int,
    kept: int,
    read: float,
    write: float,
    summary: float,
    ages: tuple[int, int],
) -> None:
    terms = CostTerms(read=read, write=write, summary=summary)
    young, old = sorted(ages)
    steady = controlled_trigger(limit, delta, kept, terms)
    at_young = controlled_trigger(limit, delta, kept, terms, elapsed=young)
    at_old = controlled_trigger(limit, delta, kept, terms, elapsed=old)
    assert steady <= at_old <= at_young <= limit
    assert at_young in (steady, limit) and at_old in (steady, limit)
    needed = payback_requests(kept, interval(delta, kept, terms), terms)
    if needed is not None and old >= needed:
        assert at_old == steady


def _engine() -> tuple[object, SlidingWindow]:
    """A 200k window: 5,000 system tokens, a summary history and a conversation whose
    compaction keeps 20,000 tokens, priced as ``ANTHROPIC``."""
    engine = summary_engine(
        200_000, system=(6000, 5000), history=4000, conversation=("50%", 20_000), summary=40
    )
    conv = engine.window.region("conversation")
    conv.cost_terms = ANTHROPIC
    return engine, conv


def _requests(
    engine: object, conv: SlidingWindow, count: int, size: int = 1500
) -> list[tuple[int, int]]:
    """``count`` requests each adding a ``size``-token tool round; at the first request
    that compacted, the conversation's tokens and its steady trigger just before it (none:
    an empty list)."""
    compacted: list[tuple[int, int]] = []
    engine.add_user("go")  # type: ignore[attr-defined]
    for i in range(count):
        marks = conv.hysteresis(steady=True)
        before = (conv.used_tokens, marks[0] if marks else 0)
        engine.request()  # type: ignore[attr-defined]
        if engine.events.of_kind("compaction_completed") and not compacted:  # type: ignore[attr-defined]
            compacted.append(before)
        engine.add_assistant(f"s{i}", [ToolUse(f"c{i}", "bash", {"i": i})])  # type: ignore[attr-defined]
        engine.add_tool_result(f"c{i}", words(size - 2, f"r{i}x"))  # type: ignore[attr-defined]
    return compacted


def test_a_short_session_is_not_compacted_before_the_window_forces_it() -> None:
    engine, conv = _engine()
    # 30 rounds of 2,500 tokens: 75,000 tokens, past the steady trigger R + x* (~66,800),
    # far from full, and 30 requests are not yet the ~31 a compaction there needs to pay
    assert not _requests(engine, conv, 30, size=2500)
    assert conv.replies == 30
    trigger, _ = conv.hysteresis()
    steady, _ = conv.hysteresis(steady=True)
    assert steady < conv.used_tokens < trigger  # the controller would, if it paid back
    assert trigger == int(0.9 * conv.budget)  # the window-fill trigger


def test_a_long_session_is_compacted_early_once_that_pays_back() -> None:
    engine, conv = _engine()
    compacted = _requests(engine, conv, 60)
    assert compacted, "a 60-request session compacts before the window is full"
    used, steady = compacted[0]
    # from the request where it pays back on: past the steady trigger, long before full
    assert steady <= used < int(0.9 * conv.budget)
    assert math.isclose(conv.replies, 60)


def test_the_session_age_is_saved_with_the_conversation() -> None:
    _, conv = _engine()
    conv.replies = 41
    extra = conv.state_extra()
    assert extra["replies"] == 41
    _, fresh = _engine()
    fresh.load_state(list(conv.entries), conv.version, extra)
    assert fresh.replies == 41
    # a state saved before the count existed counts the assistant messages it holds
    engine, conv = _engine()
    _requests(engine, conv, 3)
    _, legacy = _engine()
    legacy.load_state(list(conv.entries), conv.version, {})
    assert legacy.replies == 3
