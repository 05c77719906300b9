"""One relief pass computes each candidate's edit once: the salient extract of a placeholder
and the tokens it frees are worked out once per pass (a memo the pass owns), not once to see
what the stage could reach, again to choose its batch and again to apply it."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import regio.compaction.relief._chain as relief_mod
from regio.content import ToolUse
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words

POLICY = ReliefPolicy(
    clear_at_least=10,
    trim_at_least=10,
    keep_last=1,
    trim_over_chars=400,
    trim_head_chars=100,
    trim_tail_chars=50,
)


def _filled(sizes: list[int]) -> Any:
    engine = make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=20000,
                eviction=Compact(compact_count=5000, trigger=19000, target=9000),
            ),
        ],
        max_tokens=30000,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=POLICY,
    )
    engine.add_user("fix the bug")
    for i, size in enumerate(sizes):
        call = ToolUse(f"c{i}", "bash", {"cmd": str(i)})
        engine.add_assistant(words(size // 2, f"a{i}x"), [call])
        engine.add_tool_result(call.id, words(size, f"t{i}x"))
    engine.add_assistant("done", [])
    return engine


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(min_value=20, max_value=300), min_size=3, max_size=15),
    st.integers(min_value=0, max_value=2000),
)
def test_a_pass_extracts_each_cleared_results_salient_items_once(
    sizes: list[int], target: int
) -> None:
    engine = _filled(sizes)
    calls: Counter[str] = Counter()
    real = relief_mod.salient_extract

    def counting(text: str, budget: int, count: Any) -> str:
        calls[text] += 1
        return real(text, budget, count)

    region = engine.window.region("conversation")
    pressed = region.used_tokens > target
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(relief_mod, "salient_extract", counting)
        relief_mod.relieve(engine.session, region, target)
    assert bool(calls) == pressed  # under pressure the clear stage weighed its candidates
    assert all(n == 1 for n in calls.values()), calls.most_common(3)
