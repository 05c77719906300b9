"""The repair of broken histories: repair_history over messages (what adapters and the proxy
run on what they receive) and Engine.repair over an engine's conversation. Each way a history
breaks (an orphaned call or result, a reused call id, groups split by an old compaction, a
summary that took one half of a call and its result) is repaired into what both providers
accept, every change is reported, nothing leaves the transcript, and a second repair changes
nothing."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history_support import (
    call,
    history_engine,
    problems,
    results,
    take_out,
    user,
)
from regio.callids import ID_ACTIONS
from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.engine._history import INTERRUPTED_RESULT, HistoryRepaired, repair_history
from regio.layout import check_anthropic, check_openai_chat
from regio.layout.events import OrphanResultDropped, Repaired, ResultSynthesized
from regio.persistence._statefile import engine_state
from runtime_stubs import StubCounter

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "150"))

BROKEN: dict[str, list[Message]] = {
    "orphaned call": [user("fix it"), call("reading", "c1"), user("go on"), call("done")],
    "orphaned call at the end": [user("fix it"), call("reading", "c1", "c2"), results("c2")],
    "orphaned result": [user("fix it"), results("c9"), call("ok")],
    "reused call id": [
        user("a"),
        call("", "c"),
        results("c"),
        user("b"),
        call("", "c"),
        results("c"),
    ],
    "reused call id, interleaved": [user("a"), call("", "c"), call("", "c"), results("c", "c")],
    "group split by an old compaction": [
        user("go on"),
        call("", "c2"),
        results("c1"),
        results("c2"),
    ],
    "summary that took a result": [user("[summary of c1's result]"), call("", "c1"), user("next")],
    "two results of one call": [
        user("a"),
        call("", "c1"),
        results("c1"),
        results("c1"),
        call("ok"),
    ],
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_history_is_repaired_into_what_both_providers_accept(name: str) -> None:
    messages = BROKEN[name]
    assert problems(messages), "the case must be broken to begin with"
    fixed = repair_history(messages)
    assert problems(fixed.messages) == []
    assert fixed.changed and any(c.action != "results_moved" for c in fixed.changes)
    again = repair_history(fixed.messages)
    assert again.changes == [] and again.messages == fixed.messages


def test_an_orphaned_call_is_closed_with_a_result_the_agent_reads_as_interrupted() -> None:
    fixed = repair_history(BROKEN["orphaned call"])
    closing = [b for m in fixed.messages for b in m.blocks if isinstance(b, ToolResult)]
    assert [(r.tool_use_id, r.content, r.is_error) for r in closing] == [
        ("c1", INTERRUPTED_RESULT, True)
    ]
    assert [c.action for c in fixed.changes] == ["call_closed"]
    assert fixed.changes[0] == HistoryRepaired("call_closed", "c1", 1, detail=INTERRUPTED_RESULT)


def test_a_reused_call_id_is_renamed_with_the_results_that_answer_it() -> None:
    fixed = repair_history(BROKEN["reused call id"])
    calls = [b.id for m in fixed.messages for b in m.blocks if isinstance(b, ToolUse)]
    answers = [b.tool_use_id for m in fixed.messages for b in m.blocks if isinstance(b, ToolResult)]
    assert calls == answers == ["c", "c-1"]  # an id every provider accepts
    assert fixed.changes == [
        HistoryRepaired("call_renamed", "c", 4, detail="c-1"),
        HistoryRepaired("result_renamed", "c", 5, detail="c-1"),
    ]
    kept = [b for bs in fixed.kept for b in bs if isinstance(b, ToolResult)]
    assert [r.content for r in kept] == [
        r.content for m in BROKEN["reused call id"] for r in m.tool_results
    ]


def test_orphaned_and_superseded_results_are_named_as_such() -> None:
    orphan = repair_history(BROKEN["orphaned result"]).changes
    assert orphan == [HistoryRepaired("orphan_result_dropped", "c9", 1)]
    twice = repair_history(BROKEN["two results of one call"]).changes
    assert twice == [  # the later result is kept, and placed after its call
        HistoryRepaired("duplicate_result_dropped", "c1", 2),
        HistoryRepaired("results_moved", "c1", 3),
    ]


def test_a_call_in_a_message_that_is_not_the_assistants_is_dropped() -> None:
    fixed = repair_history([Message("user", (Text("x"), ToolUse("u1", "read", {}))), call("ok")])
    assert fixed.changes == [HistoryRepaired("call_dropped", "u1", 0)]
    assert fixed.messages[0] == user("x")


def test_system_messages_stay_where_they_are() -> None:
    messages = [Message.system("rules"), user("a"), call("", "c1"), Message.system("more rules")]
    fixed = repair_history(messages)
    assert [m.role for m in fixed.messages] == ["system", "user", "assistant", "tool", "system"]
    assert fixed.messages[0] == messages[0] and fixed.messages[-1] == messages[-1]


# ----- the property: any history --------------------------------------------------------------
_ids = st.sampled_from(["a", "b", "c", "d"])
_message = st.one_of(
    st.builds(lambda t: user(t), st.sampled_from(["", "hi", "next"])),
    st.builds(
        lambda ids, t: call(t, *ids), st.lists(_ids, max_size=3), st.sampled_from(["", "ok"])
    ),
    st.builds(lambda ids: results(*ids), st.lists(_ids, min_size=1, max_size=3)),
    st.builds(
        lambda i, t: Message("user", (ToolResult(i, "r"), Text(t))), _ids, st.sampled_from(["x"])
    ),
    st.builds(lambda i: Message.tool([ToolResult(i, "50%", final=False)]), _ids),
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(_message, max_size=14))
def test_any_history_repairs_into_a_valid_one_and_a_second_repair_changes_nothing(
    messages: list[Message],
) -> None:
    fixed = repair_history(messages)
    running = {
        b.tool_use_id
        for m in messages
        for b in m.blocks
        if isinstance(b, ToolResult) and not b.is_final
    }
    if not running:  # a running job's report is placed by the render repair, not a history
        assert problems(fixed.messages) == []
    again = repair_history(fixed.messages)
    assert not again.changed and again.messages == fixed.messages
    texts = [b.text for m in messages for b in m.blocks if isinstance(b, Text) and b.text]
    out = [b.text for m in fixed.messages for b in m.blocks if isinstance(b, Text)]
    assert all(any(t in o for o in out) for t in texts)  # no text is lost
    for i, blocks in enumerate(fixed.kept):  # in place, nothing but calls and results dropped
        assert [b for b in messages[i].blocks if isinstance(b, Text) and b.text] == [
            b for b in blocks if isinstance(b, Text) and b.text
        ]


# ----- Engine.repair ---------------------------------------------------------------------------
def _broken_engine(kind: str) -> tuple[Engine, str]:
    """An engine whose conversation is broken as ``kind`` says, and the call id concerned."""
    e = history_engine()
    e.add_user("please fix the failing test")
    if kind == "orphaned call":  # a crash between the call and its result
        e.add_assistant("reading", [ToolUse("c1", "read", {"path": "a.py"})])
        return e, "c1"
    if kind == "orphaned result":  # an import from another framework
        e.add_tool_result("c9", "a result nobody asked for")
        e.add_assistant("noted")
        return e, "c9"
    if kind == "reused call id":  # a window admitted before admission named ids (old state)
        for m in (
            Message.assistant("", [ToolUse("c", "read", {"path": "a.py"})]),
            Message.tool((ToolResult("c", "first"),)),
            Message("user", (Text("and again"),)),
            Message.assistant("", [ToolUse("c", "read", {"path": "b.py"})]),
            Message.tool((ToolResult("c", "second"),)),
        ):
            e.window.add_message(m, tokens=5)
        return e, "c"
    e.add_assistant("", [ToolUse("c1", "read", {"path": "a.py"})])
    e.add_assistant("", [ToolUse("c2", "read", {"path": "b.py"})])
    first = e.add_tool_result("c1", "def a(): return 1")
    second = e.add_tool_result("c2", "def b(): return 2")
    e.add_user("thanks, now run the tests")
    by_id = {x.id: x for x in e.window.region("conversation").entries}
    calls = [x.id for x in by_id.values() if x.role == "assistant"]
    if kind == "group split by an old compaction":  # took a1, a2 and t(c1), left t(c2)
        take_out(e, "e1", *calls, first.id)
        return e, "c2"
    # "summary that took a result": took t(c1) and t(c2), left the calls
    take_out(e, first.id, second.id)
    return e, "c1"


ENGINE_CASES = [
    "orphaned call",
    "orphaned result",
    "reused call id",
    "group split by an old compaction",
    "summary that took a result",
]


def _render_fixes(engine: Engine) -> list[Any]:
    """What the render-time repair still had to fix (drops, synthesized results, call ids)."""
    found = []
    for provider, model in (("anthropic", "claude-sonnet-4-6"), ("openai", "gpt-4o")):
        request, payload = engine.request(provider, model)
        checks = check_anthropic(payload) if provider == "anthropic" else check_openai_chat(payload)
        assert checks == []
        found += [
            ev
            for ev in request.events
            if isinstance(ev, OrphanResultDropped | ResultSynthesized)
            or (isinstance(ev, Repaired) and ("dropped" in ev.action or ev.action in ID_ACTIONS))
        ]
    return found


@pytest.mark.parametrize("kind", ENGINE_CASES)
def test_engine_repair_makes_a_broken_conversation_valid_and_keeps_the_transcript(
    kind: str, tmp_path: Any
) -> None:
    engine, call_id = _broken_engine(kind)
    assert _render_fixes(engine), "broken: the render-time repair fixes it on every request"
    before = list(engine.transcript())
    seen: list[Any] = []
    engine.subscribe(seen.append)
    changes = engine.repair()
    assert changes and all(c.entry for c in changes)
    assert [c for c in seen if isinstance(c, HistoryRepaired)] == changes
    assert any(c.tool_use_id == call_id for c in changes)
    assert _render_fixes(engine) == []
    assert list(engine.transcript())[: len(before)] == before  # nothing left the transcript
    assert engine.repair() == []
    again = Engine.load(engine.save(tmp_path / "state.json"), token_counter=StubCounter())
    assert (
        again.request("anthropic", "claude-sonnet-4-6")[1]
        == engine.request("anthropic", "claude-sonnet-4-6")[1]
    )
    assert engine_state(again).window == engine_state(engine).window


def test_a_call_whose_result_a_compaction_took_is_closed_with_the_way_back() -> None:
    engine, _ = _broken_engine("summary that took a result")
    changes = engine.repair()
    closed = [c for c in changes if c.action == "call_closed"]
    assert {c.tool_use_id for c in closed} == {"c1", "c2"}
    assert all('context_restore(call_id="' in c.detail for c in closed)
    outcome = engine.handle_tool_call("context_restore", {"call_id": "c1"})
    assert "def a(): return 1" in outcome.text  # the original result comes back


def test_an_interrupted_call_reads_as_interrupted_in_the_request() -> None:
    engine, _ = _broken_engine("orphaned call")
    engine.repair()
    _, payload = engine.request("anthropic", "claude-sonnet-4-6")
    blocks = [
        b for m in payload["messages"] if isinstance(m["content"], list) for b in m["content"]
    ]
    closing = [b for b in blocks if b.get("type") == "tool_result"]
    assert len(closing) == 1 and closing[0]["is_error"] is True
    assert INTERRUPTED_RESULT in str(closing[0]["content"])


def test_a_running_job_is_not_closed() -> None:
    engine = history_engine()
    engine.add_user("start the build")
    engine.add_assistant("", [ToolUse("job", "build", {})])
    engine.add_tool_result("job", "building: 10%", final=False)
    assert engine.repair() == []


_step = st.one_of(
    st.tuples(st.just("user"), st.sampled_from(["go on", "next"])),
    st.tuples(st.just("call"), st.lists(_ids, min_size=1, max_size=2)),
    st.tuples(st.just("result"), _ids),
    st.tuples(st.just("report"), _ids),
    st.tuples(st.just("take_out"), st.floats(0.0, 1.0)),
)


def _play(steps: list[tuple[str, Any]]) -> Engine:
    engine = history_engine()
    engine.add_user("start")
    for kind, arg in steps:
        if kind == "user":
            engine.add_user(arg)
        elif kind == "call":
            engine.add_assistant("", [ToolUse(i, "read", {"path": i}) for i in arg])
        elif kind in ("result", "report"):
            engine.add_tool_result(arg, f"{kind} of {arg}", final=kind == "result")
        else:
            entries = engine.window.region("conversation").entries
            if len(entries) > 1:  # an old compaction took one entry, whatever it split
                take_out(engine, entries[int(arg * (len(entries) - 1))].id)
    return engine


@settings(max_examples=max(10, EXAMPLES // 5), deadline=None)
@given(st.lists(_step, max_size=12))
def test_engine_repair_of_any_conversation_leaves_nothing_to_fix_and_is_idempotent(
    steps: list[tuple[str, Any]],
) -> None:
    engine = _play(steps)
    before = list(engine.transcript())
    engine.repair()
    assert engine.repair() == []
    assert list(engine.transcript())[: len(before)] == before
    assert _render_fixes(engine) == []
