"""A stale tail copy leaves as soon as its rent until the conversation's next rewrite would
cost more than the rewrite that drops it now (regio.layout.tail.forecast_due,
regio.policies.rewriteodds.rewrite_horizon, docs/layout.md "Garbage collection")."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, make_window, say
from regio.layout import assemble
from regio.layout.model import TailCopy
from regio.layout.tail import forecast_due, stale_tokens
from regio.policies.rewriteodds import MIN_STEPS, rewrite_horizon
from regio.providers import economics_for

ANTHROPIC = economics_for("anthropic", "claude-sonnet-4-5")


def _copy(region: str, tokens: int, anchor: str | None, digest: str) -> TailCopy:
    return TailCopy(region, digest, "x", tokens, 0, anchor, 1)


def _entries(*tokens: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(id=f"e{i}", tokens=t) for i, t in enumerate(tokens)]


# -- the horizon ----------------------------------------------------------------------------


def test_the_horizon_is_the_steps_to_the_trigger_at_the_mean_step() -> None:
    # 800 tokens to the trigger at 100 a step: 8 requests; 60 requests so far allow 20
    assert rewrite_horizon([100] * 8, 1000, 200, 60) == 8.0
    assert rewrite_horizon([50, 150] * 4, 1000, 200, 60) == 8.0


def test_the_horizon_is_at_most_a_third_of_the_requests_so_far() -> None:
    # a session that has made 9 requests is held to 3 more (three chances in four)
    assert rewrite_horizon([100] * 8, 10_000, 200, 9) == 3.0


def test_a_conversation_at_its_trigger_has_no_horizon_left() -> None:
    assert rewrite_horizon([100] * 8, 1000, 1500, 60) == 0.0


def test_too_few_steps_or_no_growth_give_no_horizon() -> None:
    assert rewrite_horizon([100] * (MIN_STEPS - 1), 1000, 0, 60) is None
    assert rewrite_horizon([0] * MIN_STEPS, 1000, 0, 60) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 5000), min_size=MIN_STEPS, max_size=32),
    st.integers(1, 200_000),
    st.integers(0, 200_000),
    st.integers(0, 2000),
)
def test_the_horizon_never_passes_the_trigger_nor_the_copernican_share(
    steps: list[int], trigger: int, used: int, replies: int
) -> None:
    h = rewrite_horizon(steps, trigger, used, replies)
    if sum(steps) == 0:
        assert h is None
        return
    assert h is not None and h >= 0
    mean = sum(steps) / len(steps)
    assert h <= max(0.0, (trigger - used) / mean) + 1e-9
    assert h <= replies / 3 + 1e-9


# -- the rule -------------------------------------------------------------------------------


def _old_and_new() -> tuple[list[TailCopy], list[TailCopy], list[SimpleNamespace]]:
    """A 1,000-token copy of ``a`` frozen after e1, superseded by the tail's new copy; a current
    200-token copy of ``b`` frozen after e2."""
    frozen = [_copy("a", 1000, "e1", "a1"), _copy("b", 200, "e2", "b1")]
    tail = [_copy("a", 1000, "e3", "a2")]
    return frozen, tail, _entries(100, 100, 100, 100)


def test_the_rent_to_the_horizon_is_weighed_against_what_a_collection_writes_again() -> None:
    frozen, tail, conv = _old_and_new()
    assert stale_tokens(frozen, tail) == 1000
    # written again: e2 and e3 (200) and the copies that stay current, b (200) and a's new
    # copy (1000): 1,400 tokens x 11.5 = 16,100 = 1,000 stale tokens x 16.1 requests
    again = 1400
    assert not forecast_due(frozen, tail, conv, 16.0, 11.5)
    assert forecast_due(frozen, tail, conv, again * 11.5 / 1000, 11.5)
    assert forecast_due(frozen, tail, conv, 16.2, 11.5)


def test_without_stale_copies_or_horizon_nothing_is_collected() -> None:
    frozen, _tail, conv = _old_and_new()
    assert not forecast_due(frozen, [], conv, 1e9, 11.5)  # every copy is current
    frozen, tail, conv = _old_and_new()
    assert not forecast_due(frozen, tail, conv, 0.0, 11.5)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 20_000),
    st.integers(0, 5000),
    st.lists(st.integers(0, 3000), min_size=1, max_size=12),
    st.floats(0, 500),
    st.floats(0.5, 20),
)
def test_a_collection_is_due_exactly_when_the_rent_reaches_the_rewrite(
    stale: int, current: int, entries: list[int], horizon: float, ratio: float
) -> None:
    frozen = [_copy("a", stale, "e0", "a1"), _copy("b", current, "e0", "b1")]
    tail = [_copy("a", 10, f"e{len(entries) - 1}", "a2")]
    conv = _entries(*entries)
    again = sum(entries[1:]) + current + 10
    due = forecast_due(frozen, tail, conv, horizon, ratio)
    assert due == (horizon > 0 and stale * horizon >= ratio * again)
    if due:  # a longer horizon is never less reason to collect
        assert forecast_due(frozen, tail, conv, horizon * 2, ratio)


# -- in the layout --------------------------------------------------------------------------


def _session(horizon: float | None, turns: int = 6) -> list:
    """A large rewritten region changes once early; the conversation then grows slowly."""
    w = make_window()
    w.write("scratch", "draft plan " * 400, tokens=1100)
    state, requests = None, []
    for n in range(turns):
        say(w, "user", f"question {n}")
        if n == 2:
            w.clear("scratch")
            w.write("scratch", "final plan " * 400, tokens=1100)
        req = assemble(
            w, "regio", tools=TOOLS, state=state, economics=ANTHROPIC, rewrite_horizon=horizon
        )
        requests.append(req)
        state = req.state
        say(w, "assistant", f"answer {n}")
    return requests


def _settled(requests: list) -> list[tuple[int, str]]:
    return [
        (i, e.reason) for i, r in enumerate(requests) for e in r.events if e.kind == "tail_settled"
    ]


def test_a_stale_copy_leaves_when_the_conversation_has_long_to_go() -> None:
    requests = _session(horizon=200.0)
    assert _settled(requests) == [(2, "forecast")]  # the request that made it stale
    last = requests[-1].state
    assert [c.region for c in (*last.frozen, *last.tail)].count("scratch") == 1
    assert last.rewrite_horizon == 200.0


@pytest.mark.parametrize("horizon", [None, 1.0])
def test_a_stale_copy_stays_when_a_rewrite_is_near_or_not_known(horizon: float | None) -> None:
    requests = _session(horizon=horizon)
    assert _settled(requests) == []  # 11.5x the rewrite: six requests of rent are not enough
    assert stale_tokens(requests[-1].state.frozen, requests[-1].state.tail) > 0


# -- through the engine ---------------------------------------------------------------------


def test_the_engine_lays_each_request_out_with_its_conversations_horizon() -> None:
    from regio.content import ToolUse
    from regio.policies.relief import ReliefPolicy
    from runtime_stubs import summary_engine, words

    engine = summary_engine(
        64_000,
        system=(3000, 2500),
        history=2000,
        conversation=("75%", 2000),
        summary=60,
        relief=ReliefPolicy(keep_last=1, trim=False, clear_after_summary=True),
    )
    engine.add_user("fix the bug")
    conv = engine.window.conversation
    seen = []
    for i in range(MIN_STEPS + 3):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(300, f"r{i}x"))
        expected = conv.rewrite_horizon()
        engine.request("anthropic", "claude-sonnet-4-6")
        assert engine.state.layout_state.rewrite_horizon == expected
        seen.append(expected)
    assert seen[0] is None and seen[-1] is not None and seen[-1] > 0
