"""Runs interleaved across messages (``a1{c1}, a2{c2}, t(c1), t(c2)``) are one unit: a cut at
any unit start (what eviction, compaction and kept tails cut at) never separates a tool_use
from its tool_result."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.turngroups import group_messages


def _cuts_are_clean(msgs: list[Message]) -> None:
    g = group_messages(msgs)
    starts = sorted({min(grp.members) for grp in g.groups})
    for cut in starts:
        head, tail = msgs[:cut], msgs[cut:]
        head_calls = {u.id for m in head for u in m.tool_calls}
        tail_calls = {u.id for m in tail for u in m.tool_calls}
        for m in tail:
            for r in m.tool_results:
                assert r.tool_use_id not in head_calls, (cut, r.tool_use_id)
        for m in head:
            for r in m.tool_results:
                assert r.tool_use_id not in tail_calls


def test_two_assistant_messages_then_their_results_are_one_unit() -> None:
    msgs = [
        Message.user("go"),
        Message.assistant("", [ToolUse("c1", "a")]),
        Message.assistant("", [ToolUse("c2", "b")]),
        Message.tool([ToolResult("c1", "1")]),
        Message.tool([ToolResult("c2", "2")]),
        Message.assistant("done"),
    ]
    g = group_messages(msgs)
    assert g.group_of(1).members == (1, 2, 3, 4)
    assert g.group_of(1).answered == ("c1", "c2") and not g.group_of(1).open
    _cuts_are_clean(msgs)


_event = st.one_of(
    st.tuples(st.just("call"), st.integers(1, 3)),
    st.tuples(st.just("answer"), st.integers(0, 5)),
    st.tuples(st.just("user"), st.just(0)),
)


@settings(max_examples=300, deadline=None)
@given(events=st.lists(_event, max_size=25))
def test_no_unit_start_separates_a_call_from_its_result(events: list[tuple[str, int]]) -> None:
    msgs: list[Message] = []
    pending: list[str] = []
    n = 0
    for kind, k in events:
        if kind == "call":
            ids = [f"c{n + i}" for i in range(k)]
            n += k
            pending.extend(ids)
            msgs.append(Message.assistant("", [ToolUse(i, "t") for i in ids]))
        elif kind == "answer" and pending:
            call = pending.pop(k % len(pending))
            msgs.append(Message.tool([ToolResult(call, "r")]))
        elif kind == "user" and not pending:
            msgs.append(Message.user("u"))
    _cuts_are_clean(msgs)
