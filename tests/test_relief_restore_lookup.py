"""``context_restore`` and ``restorable`` read only what they need: whether the engine offers
the tool comes from its options (no schema is built), and the live result of a call is
looked up through the window's call index, its result index and the transcript's index;
both answer exactly what the full scan answers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief import _chain as relief
from regio.compaction.relief import _originals as relief_originals
from regio.content import ToolResult, ToolUse
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import Checklist, CompactHistory, Keyed, Pinned, SlidingWindow
from regio.session import _toolspecs as toolspecs
from runtime_stubs import StubSummarizer, make_engine, words

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _scan_restore(c: Any, call_id: str) -> tuple[str, bool]:
    """``restore`` as a full scan of the conversation decides it (the reference)."""
    original = relief_originals.original_result(c, call_id)
    if original is None:
        return relief_originals.restore(c, call_id)  # the unknown-id message
    conv = c.window.conversation
    live = [
        b
        for e in conv.entries
        for b in e.blocks
        if isinstance(b, ToolResult) and b.tool_use_id == call_id
    ]
    if live and live[-1].content == original.content:
        return f"the result of call {call_id!r} is in the conversation unchanged", False
    return original.content, True


# per step: (call id, result words, a user turn first)
_STEPS = st.lists(
    st.tuples(st.integers(0, 12), st.integers(5, 120), st.booleans()), min_size=1, max_size=40
)


@FAST
@given(_STEPS, st.integers(0, 3))
def test_restore_answers_what_a_full_scan_of_the_conversation_answers(
    steps: list[Any], keep: int
) -> None:
    engine = make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=3000,
                eviction=Compact(compact_count=500, trigger=900, target=400),
            ),
        ],
        max_tokens=5000,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=ReliefPolicy(clear_at_least=10, trim_at_least=10, keep_last=keep),
    )
    engine.add_user("go")
    for n, (call, size, user) in enumerate(steps):
        if user:
            engine.add_user(f"next {n}")
        engine.add_assistant(f"step {n}", [ToolUse(f"c{call}", "read", {"n": n})])
        engine.add_tool_result(f"c{call}", words(size, f"r{n}x"))
        engine.request()
    for call in range(14):
        c = engine.session
        assert relief_originals.restore(c, f"c{call}") == _scan_restore(c, f"c{call}")


_MODES = st.sampled_from(["all", "auto", "none"]) | st.lists(
    st.sampled_from(["context_restore", "context_read", "compact", "todo_add"]), max_size=3
).map(tuple)


@FAST
@given(_MODES, st.booleans(), st.booleans(), st.sampled_from([None, True, False]))
def test_restorable_says_what_the_offered_tools_say(
    mode: Any, writable: bool, checklist: bool, restore_tool: bool | None
) -> None:
    regions: list[Any] = [Pinned(name="system", budget=200)]
    if writable:
        regions.append(Keyed(name="notes", budget=500))
    if checklist:
        regions.append(Checklist(name="plan", budget=300))
    regions.append(SlidingWindow(name="conversation", budget=2000))
    policy = None if restore_tool is None else ReliefPolicy(restore_tool=restore_tool)
    engine = make_engine(regions, max_tokens=4000, relief=policy, context_tools=mode)
    offered = toolspecs.offered_tool_specs(engine.window, mode, policy)
    assert relief.restorable(engine.session) == any(s.name == "context_restore" for s in offered)


def test_restorable_builds_no_tool_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(
        [Pinned(name="system", budget=200), SlidingWindow(name="conversation", budget=2000)],
        max_tokens=4000,
        relief=ReliefPolicy(),
        context_tools="all",
    )
    built: list[Any] = []
    original = toolspecs.context_tool_specs
    monkeypatch.setattr(toolspecs, "context_tool_specs", lambda w: built.append(w) or original(w))
    assert relief.restorable(engine.session)
    assert built == []
