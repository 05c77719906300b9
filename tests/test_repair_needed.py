"""The quick check that lets ``Engine.repair`` skip a history with nothing to repair
(:func:`regio.engine._history.needs_repair`): it never says "nothing to repair" of a history
the full repair would change, and it says so of the plain shape every agent loop sends, so a
proxy that repairs the window on every request pays its new messages, not its length."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history_support import call, history_engine, results, user
from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine._history import HISTORY_ACTIONS, needs_repair, repair_history

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "200"))
_CHANGES = HISTORY_ACTIONS - {"empty_dropped"}
_ids = st.sampled_from(["a", "b", "c", "toolu_01", "bad id", "x" * 41])


@st.composite
def _histories(draw: st.DrawFn) -> list[Message]:
    """Plain tool loops (user, calls, their results in any order and split), then mutated."""
    out: list[Message] = [user("start")]
    fresh = iter(f"call_{n}" for n in range(1000))
    for _ in range(draw(st.integers(0, 5))):
        ids = [next(fresh) for _ in range(draw(st.integers(0, 3)))]
        out.append(call(draw(st.sampled_from(["", "ok"])), *ids))
        order = draw(st.permutations(ids))
        cut = draw(st.integers(0, len(order)))
        for part in (order[:cut], order[cut:]):
            if part:
                out.append(results(*part))
        if draw(st.booleans()):
            out.append(user(draw(st.sampled_from(["", "next"]))))
    for _ in range(draw(st.integers(0, 2))):  # break it, sometimes
        kind = draw(st.sampled_from(["drop", "duplicate", "swap", "insert"]))
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        if kind == "drop":
            del out[at]
        elif kind == "duplicate":
            out.insert(at, out[at])
        elif kind == "swap" and at + 1 < len(out):
            out[at], out[at + 1] = out[at + 1], out[at]
        elif kind == "insert":
            out.insert(
                at,
                draw(
                    st.sampled_from(
                        [
                            call("", "a"),
                            results("a"),
                            Message.tool([ToolResult("call_0", "50%", final=False)]),
                            Message("user", (ToolUse("call_0", "read", {}),)),
                            Message("assistant", (ToolResult("call_0", "r"),)),
                            Message("system", (Text("be brief"),)),
                            call("", draw(_ids)),
                        ]
                    )
                ),
            )
    return out


@settings(max_examples=EXAMPLES, deadline=None)
@given(_histories())
def test_a_history_said_to_need_no_repair_is_left_unchanged_by_the_repair(
    messages: list[Message],
) -> None:
    if not needs_repair(messages):
        changes = [c.action for c in repair_history(messages).changes if c.action in _CHANGES]
        assert changes == []


@settings(max_examples=EXAMPLES, deadline=None)
@given(_histories())
def test_a_repaired_history_needs_no_repair_when_it_is_a_plain_tool_loop(
    messages: list[Message],
) -> None:
    fixed = repair_history(messages).messages
    has_system = any(m.role == "system" for m in messages)
    reports = any(isinstance(b, ToolResult) and not b.is_final for m in messages for b in m.blocks)
    if not has_system and not reports:
        assert not needs_repair(fixed)


def test_each_break_of_a_tool_loop_is_sent_to_the_full_repair() -> None:
    loop = [user("go"), call("", "c1", "c2"), results("c2", "c1"), user("next")]
    assert not needs_repair(loop)
    assert needs_repair([user("go"), call("", "c1")])  # a call without its result
    assert needs_repair([user("go"), results("c1")])  # a result without its call
    assert needs_repair([*loop, call("", "c1"), results("c1")])  # a reused id
    assert needs_repair([user("go"), call("", "bad id"), results("bad id")])  # refused id
    assert needs_repair([user("go"), call("", "c1"), call("", "c2"), results("c1", "c2")])
    assert needs_repair([*loop[:2], results("c1"), results("c2"), results("c2")])


def test_engine_repair_still_closes_an_interrupted_call_in_a_window() -> None:
    engine = history_engine()
    engine.add_user("start")
    engine.add_assistant("", [ToolUse("c1", "read", {"path": "a"})])
    engine.add_user("never mind")
    changes = engine.repair()
    assert [c.action for c in changes] == ["call_closed"]
    assert engine.repair() == []


def test_engine_repair_of_a_valid_long_window_does_not_run_the_full_repair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import regio.engine._repairs as repairs

    engine = history_engine()
    engine.add_user("start")
    for n in range(40):
        engine.add_assistant("", [ToolUse(f"c{n}", "read", {"path": "a"})])
        engine.add_tool_result(f"c{n}", "contents")

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the full repair ran on a window with nothing to repair")

    monkeypatch.setattr(repairs, "repair_history", refuse)
    assert engine.repair() == []
