"""Field cases about tool-call integrity, rendered with BOTH the Anthropic and OpenAI renderers
(field-cases.md FC-01..04, FC-07(b), FC-09, FC-10 projection, FC-17)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import history_window, raw_entry
from regio.content import Message, Text, ToolResult, ToolUse
from regio.layout import (
    CONVERSATION_START,
    MISSING_RESULT,
    PENDING_RESULT,
    LayoutError,
    PMessage,
    assemble,
    check_anthropic,
    check_openai_chat,
    render_anthropic,
    render_openai_chat,
    repair,
)
from regio.regions import Pinned, SlidingWindow, Window


def u(i, tokens=10):
    return raw_entry(f"u{i}", "user", Text(f"u{i}"), tokens=tokens)


def a(i, *calls, tokens=10):
    return raw_entry(
        f"a{i}",
        "assistant",
        Text(f"a{i}"),
        *(ToolUse(c, "run", {"n": 1}) for c in calls),
        tokens=tokens,
    )


def t(c, tokens=10):
    return raw_entry(f"t{c}", "tool", ToolResult(c, f"out {c}"), tokens=tokens)


def both(entries, strategy="regio"):
    req = assemble(history_window(entries), strategy, min_cache_tokens=1)
    an = render_anthropic(req, model="m")
    oa = render_openai_chat(req, model="m")
    assert check_anthropic(an) == [], check_anthropic(an)
    assert check_openai_chat(oa) == [], check_openai_chat(oa)
    return req, an, oa


def ids_in(an, oa):
    a_ids = [
        (c["type"], c.get("id") or c.get("tool_use_id"))
        for m in an["messages"]
        for c in m["content"]
        if c["type"] in ("tool_use", "tool_result")
    ]
    o_ids = [("tool_use", c["id"]) for m in oa["messages"] for c in m.get("tool_calls") or []]
    o_ids += [("tool_result", m["tool_call_id"]) for m in oa["messages"] if m["role"] == "tool"]
    return a_ids, o_ids


@pytest.mark.parametrize("budget", [75, 80, 90])
def test_fc_01_a_trimmed_window_never_renders_a_result_without_its_call(budget):
    w = Window(
        regions=[
            Pinned(name="system", budget=100, volatility="stable"),
            SlidingWindow(name="history", budget=budget),
        ],
        max_tokens=1000,
    )
    w.write("system", "S", tokens=1)
    w.add_message(Message.user("u1"), tokens=10)
    w.add_message(Message.assistant("a1", [ToolUse("c1", "run", {})]), tokens=10)
    w.add_message(Message.tool([ToolResult("c1", "x")]), tokens=50)
    w.add_message(Message.user("u2"), tokens=10)
    w.add_message(Message.assistant("a2"), tokens=10)
    req = assemble(w, "regio", min_cache_tokens=1)
    an, oa = render_anthropic(req, model="m"), render_openai_chat(req, model="m")
    assert check_anthropic(an) == [] and check_openai_chat(oa) == []
    a_ids, o_ids = ids_in(an, oa)
    assert (("tool_use", "c1") in a_ids) == (("tool_result", "c1") in a_ids)
    assert sorted(a_ids) == sorted(o_ids)


def test_fc_01_a_kept_result_whose_call_was_cut_is_dropped_in_both_renderers():
    req, an, oa = both([t("c1"), u(2), a(2)])
    assert ids_in(an, oa) == ([], [])
    assert [e.tool_use_id for e in req.events if e.kind == "orphan_result_dropped"] == ["c1"]


def test_fc_02_a_view_that_hides_an_old_result_keeps_call_and_placeholder_together():
    cleared = raw_entry("tc1", "tool", ToolResult("c1", "[cleared]"), tokens=2)
    _, an, oa = both([u(1), a(1, "c1"), cleared, a(2), u(2)])
    a_ids, o_ids = ids_in(an, oa)
    assert a_ids == [("tool_use", "c1"), ("tool_result", "c1")]
    assert sorted(o_ids) == sorted(a_ids)


@pytest.mark.parametrize("width", [2, 5, 10])
def test_fc_03_a_parallel_group_renders_its_results_in_one_user_message_after_the_call(width):
    calls = [f"c{k}" for k in range(width)]
    results = [t(c) for c in reversed(calls)]  # results arrive in another order
    _, an, oa = both([u(1), a(1, *calls), *results, a(2), u(2)])
    msgs = an["messages"]
    assert [c["tool_use_id"] for c in msgs[2]["content"]] == calls
    tools = [m for m in oa["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == calls


def test_fc_04_removal_from_the_middle_never_leaves_a_result_anywhere_without_its_call():
    # an engine with the bug removed a2{c1} from the middle and kept t(c1)
    req, an, oa = both([u(1), a(1), u(2), t("c1"), a(3), u(3)])
    assert ids_in(an, oa) == ([], [])
    assert [e.kind for e in req.events if e.kind == "orphan_result_dropped"] == [
        "orphan_result_dropped"
    ]


def test_fc_07b_a_restored_projection_is_repaired_the_same_way_in_both_renderers():
    entries = [t("c9"), u(1), a(1, "c1"), u(2)]
    _req, an, oa = both(entries)
    a_ids, o_ids = ids_in(an, oa)
    assert ("tool_result", "c9") not in a_ids and ("tool_result", "c9") not in o_ids
    assert an["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": MISSING_RESULT,
    }
    assert [m for m in oa["messages"] if m["role"] == "tool"] == [
        {"role": "tool", "tool_call_id": "c1", "content": MISSING_RESULT}
    ]
    # idempotent, deterministic, and the log is unchanged
    w = history_window(entries)
    before = list(w.region("history").entries)
    assert render_anthropic(assemble(w, "regio"), model="m") == render_anthropic(
        assemble(w, "regio"), model="m"
    )
    assert w.region("history").entries == before
    once, _ = repair([PMessage(e.role, e.blocks, e.id) for e in entries])
    assert repair(once)[0] == once


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=5))
def test_fc_09_every_cut_position_renders_with_l_and_w(cut):
    full = [u(1), a(1, "c1"), t("c1"), a(2), u(2)]
    _req, an, oa = both(full[cut:])
    first = an["messages"][0]
    assert first["role"] == "user"
    assert not any(c["type"] == "tool_result" for c in first["content"])
    conv = [m for m in oa["messages"] if m["role"] != "system"]
    assert not conv or conv[0]["role"] != "tool"


def test_fc_09b_a_history_starting_with_a_result_drops_it_with_one_warning_naming_the_call():
    w = history_window([t("c1"), a(2), u(2)])
    w.write("summaries", "s1: the user asked for X; c1 ran ls", tokens=12)
    req = assemble(w, "regio")
    warnings = [e for e in req.events if e.kind == "orphan_result_dropped"]
    assert [e.tool_use_id for e in warnings] == ["c1"]
    an = render_anthropic(req, model="m")
    oa = render_openai_chat(req, model="m")
    assert check_anthropic(an) == [] and check_openai_chat(oa) == []
    # the summary opens the messages, before the history, never inside the system text
    assert all("s1:" not in block["text"] for block in an["system"])
    assert an["messages"][0]["role"] == "user"
    assert "s1:" in an["messages"][0]["content"][0]["text"]
    assert an["messages"][1]["role"] == "assistant"
    bare = render_anthropic(assemble(history_window([t("c1"), a(2), u(2)]), "regio"), model="m")
    assert bare["messages"][0]["content"][0]["text"] == CONVERSATION_START
    again = render_anthropic(assemble(w, "regio"), model="m")
    assert again["messages"][0] == an["messages"][0]  # the insertion has the same bytes


def test_fc_10_a_pending_call_gets_a_placeholder_in_the_projection_only():
    w = history_window([u(1), a(1, "c1")])
    req = assemble(w, "regio")
    an, oa = render_anthropic(req, model="m"), render_openai_chat(req, model="m")
    assert an["messages"][-1]["content"][0]["content"] == PENDING_RESULT
    assert oa["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": PENDING_RESULT}
    assert len(w.region("history").entries) == 2
    w.region("history").entries.append(t("c1"))
    an2 = render_anthropic(assemble(w, "regio"), model="m")
    results = [c for m in an2["messages"] for c in m["content"] if c["type"] == "tool_result"]
    assert [r["content"] for r in results] == ["out c1"]


def test_fc_17_every_request_has_exactly_one_system_prompt_and_the_new_one_replaces_the_old():
    w = history_window([u(1), a(1)], system="S1 instructions")
    r1 = assemble(w, "regio")
    w.clear("system")
    w.write("system", "S2 instructions", tokens=4)
    r3 = assemble(w, "regio", state=r1.state)
    an, oa = render_anthropic(r3, model="m"), render_openai_chat(r3, model="m")
    assert [m["role"] for m in oa["messages"]].count("system") == 1
    assert "S1" not in str(an) and "S1" not in str(oa)
    assert "S2 instructions" in an["system"][0]["text"]
    with pytest.raises(LayoutError, match="role 'system'"):
        repair([PMessage("system", (Text("S1"),))])
