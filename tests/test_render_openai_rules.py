"""The two OpenAI renderers follow one set of rules: both payloads are checked before they are
returned, thinking is left out of both wherever it stands, and one function writes the tools."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, answer, call, history_window, make_window, raw_entry, say
from regio.content import Text, Thinking, ToolResult, ToolUse
from regio.layout import LayoutError, assemble, render_openai_chat, render_openai_responses
from regio.layout.render.openai import check_openai_responses, function_tools


def _request():
    w = make_window()
    say(w, "user", "fix it")
    call(w, "checking", "c1", "c2")
    answer(w, "c2", "c1")
    say(w, "user", "and?")
    return assemble(w, "regio", tools=TOOLS)


def _without_calls(request):
    blocks = tuple(b for b in request.blocks if not isinstance(b.block, ToolUse))
    return msgspec.structs.replace(request, blocks=blocks)


def test_responses_renderer_refuses_an_output_that_answers_no_earlier_call():
    with pytest.raises(LayoutError, match="answers c1, not an earlier call"):
        render_openai_responses(_without_calls(_request()), model="gpt")


def test_responses_and_chat_renderers_both_refuse_a_result_without_its_call():
    bad = _without_calls(_request())
    for render in (render_openai_chat, render_openai_responses):
        with pytest.raises(LayoutError, match="malformed"):
            render(bad, model="gpt")


def test_a_well_formed_responses_payload_passes_its_check():
    payload = render_openai_responses(_request(), model="gpt")
    assert check_openai_responses(payload) == []


def test_both_renderers_write_the_same_tools_through_one_function():
    request = _request()
    chat = render_openai_chat(request, model="gpt")["tools"]
    responses = render_openai_responses(request, model="gpt")["tools"]
    assert [t["function"] for t in chat] == [
        {k: v for k, v in t.items() if k not in ("type", "strict")} for t in responses
    ]
    assert all(t["strict"] is False for t in responses)
    assert function_tools(request.blocks, "openai_chat") == chat


# ------------------------------------------------------------------ thinking, wherever it is

ROLES = st.sampled_from(["user", "assistant"])
TURNS = st.lists(st.tuples(ROLES, st.booleans(), st.booleans()), min_size=1, max_size=6)


def _entries(turns, thinking: bool):
    """A conversation of ``turns`` (role, with a tool call, with thinking), thinking blocks
    placed in user, assistant and tool messages alike when ``thinking``."""
    out = []
    for n, (role, tool, think) in enumerate(turns):
        extra = (Thinking(f"hmm {n}", "sig"),) if thinking and think else ()
        if role == "assistant" and tool:
            out.append(
                raw_entry(f"a{n}", "assistant", *extra, Text(f"t{n}"), ToolUse(f"c{n}", "run"))
            )
            out.append(raw_entry(f"r{n}", "tool", *extra, ToolResult(f"c{n}", f"out {n}")))
        else:
            out.append(raw_entry(f"m{n}", role, *extra, Text(f"text {n}")))
    if out[-1].role != "user":
        out.append(raw_entry("last", "user", Text("go on")))
    return out


@settings(max_examples=60, deadline=None)
@given(TURNS)
def test_thinking_is_left_out_of_both_openai_payloads_wherever_it_stands(turns):
    for render, key in ((render_openai_chat, "messages"), (render_openai_responses, "input")):
        plain = render(assemble(history_window(_entries(turns, False)), "regio"), model="gpt")
        mixed = render(assemble(history_window(_entries(turns, True)), "regio"), model="gpt")
        assert mixed[key] == plain[key]


def test_thinking_in_a_user_message_renders_like_the_message_without_it():
    entries = [raw_entry("u", "user", Thinking("pasted reasoning", "sig"), Text("question"))]
    request = assemble(history_window(entries), "regio")
    chat = render_openai_chat(request, model="gpt")["messages"]
    responses = render_openai_responses(request, model="gpt")["input"]
    assert chat[-1] == {"role": "user", "content": "question"}
    assert responses[-1] == {"role": "user", "content": "question"}
