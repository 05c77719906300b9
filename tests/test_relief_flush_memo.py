"""One compaction flush shares one memo of relief edits and gains across its passes (the chain
before the summary, the clearing before the cut, the chain after the summary;
:class:`regio.compaction.relief._memo.ReliefMemo`): each result's salient extract is worked out
once per flush, not once per pass, and the session comes out byte for byte as with a fresh
memo per pass (requests, events, entries). An edit is reused only while its block is the one
it was worked out for: a block an earlier stage rewrote is weighed again."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import regio.compaction._flush as compaction
import regio.compaction.relief._chain as relief_mod
from regio.compaction.relief._memo import ReliefMemo
from regio.content import ToolUse
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words


def _engine(
    policy: ReliefPolicy, trigger: int = 1000, target: int = 400, budget: int = 4000
) -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=800, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=budget,
                eviction=Compact(compact_count=500, trigger=trigger, target=target),
            ),
        ],
        max_tokens=2 * budget,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=policy,
    )


def _result(i: int, arg: int, size: int) -> str:
    """A tool output with items a placeholder's salient extract keeps (a path, an error)."""
    return f"src/mod_{arg}.py:{i}: ValueError in handle_{i}\n{words(size, f't{i}x')}"


def _session(engine: Any, steps: list[Any], every: int) -> dict[str, Any]:
    """Play ``steps`` (tool, argument, result words, assistant words), a request after every
    ``every`` steps and at the end; everything the session shows: each request's payload,
    every event, every region's entries and the relief tallies."""
    seen: list[Any] = []
    engine.subscribe(seen.append)
    payloads = []
    engine.add_user("fix the bug")
    for i, (tool, arg, size, text) in enumerate(steps):
        call = ToolUse(f"c{i}", tool, {"arg": arg})
        engine.add_assistant(words(text, f"a{i}x") or f"step {i}", [call])
        engine.add_tool_result(call.id, _result(i, arg, size))
        if i % every == every - 1:
            payloads.append(engine.request()[1])
    payloads.append(engine.request()[1])
    return {
        "payloads": payloads,
        "events": [e.to_dict() for e in seen],
        "entries": {r.name: msgspec.to_builtins(list(r.entries)) for r in engine.window.regions},
        "tallies": msgspec.to_builtins(engine.session.book.relief.stages),
    }


_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["bash", "cat", "grep"]),
        st.integers(0, 2),
        st.integers(1, 220),
        st.integers(0, 140),
    ),
    min_size=5,
    max_size=40,
)
_POLICY = st.fixed_dictionaries(
    {
        "keep_last": st.integers(0, 3),
        "clear_at_least": st.integers(0, 400),
        "trim_at_least": st.integers(0, 400),
        "dedupe_at_least": st.integers(0, 300),
        "placeholder_extract_tokens": st.sampled_from([0, 8, 40]),
        "trim_over_chars": st.just(400),
        "trim_head_chars": st.just(120),
        "trim_tail_chars": st.just(60),
        "clear_after_summary": st.booleans(),
        "trim": st.booleans(),
    }
)
_TOOLS = st.dictionaries(
    st.sampled_from(["bash", "cat", "grep"]),
    st.builds(ToolRelief, clear=st.booleans(), dedupe=st.booleans()),
    max_size=3,
)


#: A session where the chain trims a result under pressure that a later pass clears: the
#: clear stage's edit memoized for the result as received is stale (found by this test
#: against a memo keyed by entry id alone).
_TRIMMED_THEN_CLEARED = (
    [("bash", 0, n, t) for n, t in [(1, 0), (1, 0), (1, 0), (1, 105), (63, 140), (132, 0)]]
    + [("bash", 0, 173, 115), ("bash", 0, 167, 69), ("bash", 0, 1, 0)],
    {
        "keep_last": 3,
        "clear_at_least": 178,
        "trim_at_least": 30,
        "dedupe_at_least": 0,
        "placeholder_extract_tokens": 0,
        "trim_over_chars": 400,
        "trim_head_chars": 120,
        "trim_tail_chars": 60,
        "clear_after_summary": True,
        "trim": True,
    },
    {},
    1027,
    0.5,
    1,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(*_TRIMMED_THEN_CLEARED)
@given(
    _STEPS,
    _POLICY,
    _TOOLS,
    st.integers(500, 1800),
    st.floats(0.05, 0.6),
    st.integers(1, 6),
)
def test_a_flush_sharing_its_relief_memo_leaves_the_session_byte_identical_to_fresh_passes(
    steps: list[Any],
    options: dict[str, Any],
    tools: dict[str, ToolRelief],
    trigger: int,
    share: float,
    every: int,
) -> None:
    policy = ReliefPolicy(**options, tools=tools)
    target = int(trigger * share)
    shared = _session(_engine(policy, trigger, target), steps, every)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compaction, "ReliefMemo", lambda: None)  # every pass keeps its own memo
        fresh = _session(_engine(policy, trigger, target), steps, every)
    assert shared["events"] == fresh["events"]
    assert shared["payloads"] == fresh["payloads"]
    assert shared["entries"] == fresh["entries"]
    assert shared["tallies"] == fresh["tallies"]


#: The kept part of the summary frees less than ``clear_at_least`` by clearing: the flush
#: runs the chain (which cannot reach the target and is skipped), then clears every result
#: before the cut, then summarizes (tests/test_relief_before_cut.py).
BEFORE = ReliefPolicy(clear_at_least=300, trim_at_least=100_000, keep_last=1)


def test_a_flush_extracts_each_cleared_results_salient_items_once() -> None:
    engine = _engine(BEFORE, budget=100_000)
    engine.add_user("fix the bug")
    for i in range(60):  # far over the trigger, no request: one flush does it all
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        engine.add_tool_result(call.id, _result(i, 0, 150))
    calls: Counter[str] = Counter()
    real = relief_mod.salient_extract

    def counting(text: str, budget: int, count: Any) -> str:
        calls[text] += 1
        return real(text, budget, count)

    seen: list[Any] = []
    engine.subscribe(seen.append)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(relief_mod, "salient_extract", counting)
        engine.flush()
    kinds = [e.kind for e in seen]
    # the chain was weighed and skipped, the clearing ran before the summary
    assert kinds[:2] == ["relief_skipped", "relief_applied"]
    assert "compaction_completed" in kinds
    assert len(calls) >= 50
    assert all(n == 1 for n in calls.values()), calls.most_common(3)


def test_a_block_rewritten_since_its_edit_was_memoized_is_weighed_again() -> None:
    policy = ReliefPolicy(
        clear_at_least=0,
        trim_at_least=0,
        keep_last=0,
        trim_over_chars=400,
        trim_head_chars=120,
        trim_tail_chars=60,
    )
    engine = _engine(policy, trigger=100_000, target=50_000)
    engine.add_user("fix the bug")
    for i in range(3):
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        engine.add_tool_result(call.id, _result(i, i, 200))
    engine.add_assistant("done", [])
    c, region = engine.session, engine.window.region("conversation")
    memo = ReliefMemo()
    first = relief_mod._Pass(c, region, policy, relief_mod._stages(c, policy), memo)
    clear, trim = (next(s for s in first.stages if s.name == n) for n in ("clear", "trim"))
    oldest = first.candidates(clear)[0]
    stale = first.edit(clear, oldest)  # memoized for the result as received
    first.stage(trim, 0)  # trims every result: the clear stage has not run
    assert first.candidates(clear)[0] == oldest  # trimmed, still to clear, same block
    later = relief_mod._Pass(c, region, policy, relief_mod._stages(c, policy), memo)
    own = relief_mod._Pass(c, region, policy, relief_mod._stages(c, policy))
    hits = memo.hits
    again = later.edit(clear, later.candidates(clear)[0])
    assert memo.hits == hits  # not taken from the memo
    assert again == own.edit(clear, own.candidates(clear)[0])  # what a fresh pass works out
    assert again != stale  # the extract and the gain are the trimmed result's
    assert later.edit(clear, later.candidates(clear)[0]) == again
    assert memo.hits == hits + 1  # the new edit is memoized in its turn
