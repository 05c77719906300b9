"""Renderer shapes: Anthropic, OpenAI chat / responses, plain text; repair; classifier."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, answer, call, history_window, make_window, raw_entry, say
from regio.content import Text, Thinking, ToolResult, ToolUse
from regio.layout import (
    CONTINUE_TEXT,
    PMessage,
    assemble,
    classify,
    render_anthropic,
    render_openai_chat,
    render_openai_responses,
    render_text,
    repair,
    to_cache_request,
)


def _window():
    w = make_window()
    say(w, "user", "fix it")
    call(w, "checking", "c1", "c2")
    answer(w, "c2", "c1")
    say(w, "user", "and?")
    return w


def test_anthropic_tool_results_come_first_in_a_user_message_and_the_tail_closes_it():
    p = render_anthropic(assemble(_window(), "regio", tools=TOOLS), model="m")
    msgs = p["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    last = msgs[-1]["content"]
    assert [c["type"] for c in last] == ["tool_result", "tool_result", "text", "text"]
    assert [c["tool_use_id"] for c in last[:2]] == ["c1", "c2"]  # call order
    assert last[-1]["text"].startswith("## scratch")
    assert p["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    assert list(p["tools"][0]["input_schema"]) == sorted(p["tools"][0]["input_schema"])


def test_openai_chat_has_one_system_message_canonical_arguments_and_tool_messages():
    p = render_openai_chat(assemble(_window(), "regio", tools=TOOLS), model="gpt")
    roles = [m["role"] for m in p["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "user"]
    calls = p["messages"][2]["tool_calls"]
    assert calls[0]["function"]["arguments"] == '{"cmd":"ls c1"}'
    assert p["messages"][-1]["content"].startswith("## scratch")
    assert p["prompt_cache_key"].startswith("regio-")


def test_openai_responses_uses_function_call_items():
    p = render_openai_responses(assemble(_window(), "regio", tools=TOOLS), model="gpt")
    kinds = [i.get("type", i.get("role")) for i in p["input"]]
    assert kinds == [
        "user",
        "assistant",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "user",
        "user",
    ]
    assert p["instructions"].startswith("## system")


def test_plain_text_prompt_ends_with_the_assistant_cue():
    p = render_text(assemble(_window(), "regio"), model="local")
    assert p["prompt"].endswith("Assistant:")
    assert "Tool result c1: output of c1" in p["prompt"]


def test_an_anthropic_request_ending_with_the_assistant_gets_a_fixed_user_turn():
    w = make_window(scratch=None)
    say(w, "user", "hi")
    say(w, "assistant", "hello")
    p = render_anthropic(assemble(w, "regio"), model="m")
    assert p["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": CONTINUE_TEXT}],
    }


def test_thinking_stays_with_its_assistant_message_and_never_carries_a_marker():
    e = [
        raw_entry("e1", "user", Text("q " * 3000), tokens=3000),
        raw_entry("e2", "assistant", Thinking("hmm", "sig"), tokens=5),
    ]
    req = assemble(history_window(e), "regio", min_cache_tokens=1)
    p = render_anthropic(req, model="m")
    assert p["messages"][1]["content"][0]["type"] == "thinking"
    assert "cache_control" not in p["messages"][1]["content"][0]
    assert "cache_control" in p["messages"][0]["content"][0]


messages_st = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "tool"]),
        st.lists(st.sampled_from(["t", "u1", "u2", "r1", "r2", "r9"]), min_size=1, max_size=3),
    ),
    max_size=10,
)


def _mk(spec):
    out = []
    for role, kinds in spec:
        blocks = []
        for k in kinds:
            if k == "t":
                blocks.append(Text("x"))
            elif k.startswith("u") and role == "assistant":
                blocks.append(ToolUse(f"c{k[1]}", "run", {}))
            elif k.startswith("r"):
                blocks.append(ToolResult(f"c{k[1]}", "out"))
        if blocks:
            out.append(PMessage(role, tuple(blocks)))
    return out


@settings(max_examples=100, deadline=None)
@given(messages_st)
def test_repair_is_idempotent_and_satisfies_w_and_l(spec):
    once, _ = repair(_mk(spec))
    twice, events = repair(once)
    assert twice == once and events == []
    if once:
        assert not any(isinstance(b, ToolResult) for b in once[0].blocks)
    for i, m in enumerate(once):
        calls = [b.id for b in m.blocks if isinstance(b, ToolUse)]
        if calls:
            nxt = once[i + 1]
            assert nxt.role == "tool"
            assert [b.tool_use_id for b in nxt.blocks] == calls


def test_classify_names_the_first_divergence_with_its_token_offset():
    w = _window()
    r1 = assemble(w, "regio", tools=TOOLS)
    assert classify(r1, r1).kind == "identical"
    w.clear("system")
    w.write("system", "changed", tokens=2)
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    s = classify(r1, r2)
    assert (s.kind, s.at) == ("divergence", "system:system")
    assert s.offset == sum(b.tokens for b in r1.level("tools"))


def test_to_cache_request_keeps_blocks_marks_and_key():
    req = assemble(_window(), "regio", tools=TOOLS)
    cr = to_cache_request(req, t_start=10.0, model="claude-sonnet-4-5")
    assert len(cr.blocks) == len(req.blocks)
    assert [b.mark for b in cr.blocks] == [b.breakpoint for b in req.blocks]
    assert cr.key == req.prompt_cache_key and cr.prompt_tokens == req.tokens
    assert {b.level for b in cr.blocks} == {"tools", "system", "messages"}
