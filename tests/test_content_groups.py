"""Turn grouping: every message in exactly one group, calls never split from their results."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, Text, Thinking, ToolResult, ToolUse, canonical_json
from regio.turngroups import group_entries, group_messages


def test_a_call_and_its_adjacent_result_form_one_group() -> None:
    msgs = [
        Message.user("go"),
        Message.assistant("", [ToolUse("c1", "ls")]),
        Message.tool([ToolResult("c1", "a.py")]),
        Message.assistant("done"),
    ]
    g = group_messages(msgs)
    assert [grp.members for grp in g.groups] == [(0,), (1, 2), (3,)]
    assert g.open_groups == ()
    assert g.orphan_results == ()


def test_parallel_calls_answered_in_several_messages_out_of_order_stay_one_group() -> None:
    msgs = [
        Message.assistant("", [ToolUse("c1", "a"), ToolUse("c2", "b"), ToolUse("c3", "c")]),
        Message.tool([ToolResult("c3", "3")]),
        Message.user("meanwhile"),
        Message.tool([ToolResult("c1", "1"), ToolResult("c2", "2")]),
    ]
    g = group_messages(msgs)
    assert g.groups[0].members == (0, 1, 3)
    assert g.groups[0].answered == ("c1", "c2", "c3")
    assert g.group_of(2).members == (2,)
    assert not g.groups[0].open


def test_thinking_blocks_stay_with_their_assistant_message() -> None:
    msg = Message.assistant("", [ToolUse("c1", "a")], thinking=[Thinking("hmm", "sig")])
    assert isinstance(msg.blocks[0], Thinking)
    g = group_messages([msg, Message.tool([ToolResult("c1", "r")])])
    assert g.groups[0].members == (0, 1)


def test_a_call_without_result_is_reported_as_an_open_group() -> None:
    g = group_messages([Message.user("x"), Message.assistant("", [ToolUse("c7", "a")])])
    assert g.open_groups == ("g:c7",)
    assert g.groups[1].pending == ("c7",)


def test_a_result_whose_call_is_absent_is_an_orphan_and_stands_alone() -> None:
    g = group_messages([Message.tool([ToolResult("c9", "old")]), Message.user("hi")])
    assert g.orphan_results == ((0, "c9"),)
    assert [grp.members for grp in g.groups] == [(0,), (1,)]


def test_a_result_that_arrives_before_its_call_is_an_orphan() -> None:
    g = group_messages(
        [Message.tool([ToolResult("c1", "early")]), Message.assistant("", [ToolUse("c1", "a")])]
    )
    assert g.orphan_results == ((0, "c1"),)
    assert g.open_groups == ("g:c1",)


def test_one_message_answering_two_groups_merges_them_into_one_unit() -> None:
    msgs = [
        Message.assistant("", [ToolUse("c1", "a")]),
        Message.assistant("", [ToolUse("c2", "b")]),
        Message.tool([ToolResult("c1", "1"), ToolResult("c2", "2")]),
    ]
    g = group_messages(msgs)
    assert len(g.groups) == 1
    assert g.groups[0].members == (0, 1, 2)


def test_entry_groups_are_named_after_entry_ids_not_positions() -> None:
    entries = [Entry(id="e-17", blocks=(Text("hi"),), role="user")]
    assert group_entries(entries).groups[0].id == "m:e-17"


def test_canonical_json_orders_keys_so_equal_inputs_give_equal_bytes() -> None:
    a = ToolUse("c1", "f", {"b": 1, "a": {"y": 2, "x": 3}})
    b = ToolUse("c1", "f", {"a": {"x": 3, "y": 2}, "b": 1})
    assert canonical_json(a) == canonical_json(b)


def test_blocks_round_trip_through_msgspec_json() -> None:
    msg = Message.assistant("t", [ToolUse("c1", "f", {"k": [1, 2]})], [Thinking("x")])
    data = msgspec.json.encode(msg)
    assert msgspec.json.decode(data, type=Message) == msg


# --- property tests -------------------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Random histories: plain turns, single/parallel calls answered later, some never answered,
    some orphan results, results split across messages and interleaved with other messages."""
    msgs: list[Message] = []
    pending: list[str] = []
    n_calls = 0
    for _ in range(draw(st.integers(0, 25))):
        action = draw(st.sampled_from(["user", "assistant", "call", "answer", "orphan"]))
        if action == "user":
            msgs.append(Message.user("u"))
        elif action == "assistant":
            msgs.append(Message.assistant("a"))
        elif action == "call":
            width = draw(st.integers(1, 4))
            ids = [f"c{n_calls + i}" for i in range(width)]
            n_calls += width
            pending.extend(ids)
            msgs.append(Message.assistant("", [ToolUse(i, "t") for i in ids]))
        elif action == "answer" and pending:
            k = draw(st.integers(1, len(pending)))
            chosen = draw(st.permutations(pending))[:k]
            for c in chosen:
                pending.remove(c)
            msgs.append(Message.tool([ToolResult(c, "r") for c in chosen]))
        else:
            msgs.append(Message.tool([ToolResult(f"x{len(msgs)}", "orphan")]))
    return msgs


@settings(max_examples=150, deadline=None)
@given(histories())
def test_every_message_belongs_to_exactly_one_group(msgs: list[Message]) -> None:
    g = group_messages(msgs)
    seen = sorted(i for grp in g.groups for i in grp.members)
    assert seen == list(range(len(msgs)))
    for i in range(len(msgs)):
        assert i in g.group_of(i).members


@settings(max_examples=150, deadline=None)
@given(histories())
def test_grouping_never_splits_a_call_from_its_results(msgs: list[Message]) -> None:
    g = group_messages(msgs)
    owner: dict[str, int] = {}
    for i, m in enumerate(msgs):
        for c in m.tool_calls:
            owner.setdefault(c.id, g.assignment[i])
    for i, m in enumerate(msgs):
        for r in m.tool_results:
            if r.tool_use_id in owner and (i, r.tool_use_id) not in g.orphan_results:
                assert g.assignment[i] == owner[r.tool_use_id]


@settings(max_examples=150, deadline=None)
@given(histories())
def test_open_groups_and_orphans_are_reported_exactly(msgs: list[Message]) -> None:
    g = group_messages(msgs)
    called_before: set[str] = set()
    answered: set[str] = set()
    expected_orphans = []
    for i, m in enumerate(msgs):
        for r in m.tool_results:
            if r.tool_use_id in called_before:
                answered.add(r.tool_use_id)
            else:
                expected_orphans.append((i, r.tool_use_id))
        called_before.update(c.id for c in m.tool_calls)
    assert list(g.orphan_results) == expected_orphans
    unanswered = called_before - answered
    expected_open = {grp.id for grp in g.groups if set(grp.call_ids) & unanswered}
    assert set(g.open_groups) == expected_open
    for grp in g.groups:
        assert set(grp.pending) == set(grp.call_ids) & unanswered
