"""Tool call ids: one rule (:mod:`regio.callids`) where the engine admits a message, where a
request is rendered and where a history is repaired. A call id used twice (a backend that
numbers its calls ``call_0`` at every step, two calls of one message with one id) never pairs
a result with the wrong call; every id a request carries is one Anthropic
(``^[a-zA-Z0-9_-]+$``) and OpenAI (at most 40 characters) accept, and the offline validators
check exactly that; an empty id or name is refused where it comes in, naming the place."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mutation_support import CONVERSATION_BLUEPRINT
from regio.adapters.chat import chat_messages
from regio.callids import ID_ACTIONS, id_problem, provider_id, renamed_id
from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.engine._history import HistoryRepaired, repair_history
from regio.errors import RegioError
from regio.layout import check_anthropic, check_openai_chat
from regio.layout.events import Repaired
from regio.layout.wellformed import anthropic_problems, openai_chat_problems

ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")


def _engine() -> Engine:
    engine = Engine.from_blueprint(CONVERSATION_BLUEPRINT)
    engine.add_user("read the files")
    return engine


def _pairs(engine: Engine) -> dict[str, list[tuple[str, str]]]:
    """Per provider, ``(call input path, result text)`` of every call as the request pairs
    them; both payloads pass their provider's checks (ids included)."""
    out: dict[str, list[tuple[str, str]]] = {}
    _, anthropic = engine.request("anthropic")
    assert check_anthropic(anthropic) == []
    blocks = [
        b for m in anthropic["messages"] if isinstance(m["content"], list) for b in m["content"]
    ]
    paths = {b["id"]: b["input"]["path"] for b in blocks if b["type"] == "tool_use"}
    out["anthropic"] = [
        (paths[b["tool_use_id"]], str(b["content"])) for b in blocks if b["type"] == "tool_result"
    ]
    _, openai = engine.request("openai")
    assert check_openai_chat(openai) == []
    calls = {
        c["id"]: _path_of(c["function"]["arguments"])
        for m in openai["messages"]
        for c in m.get("tool_calls") or []
    }
    out["openai"] = [
        (calls[m["tool_call_id"]], m["content"]) for m in openai["messages"] if m["role"] == "tool"
    ]
    return out


def _path_of(arguments: str) -> str:
    return str(json.loads(arguments)["path"])


def _id_changes(engine: Engine) -> list[HistoryRepaired]:
    return [e for e in engine.window.events.history if isinstance(e, HistoryRepaired)]


# ----- reused ids at admission ------------------------------------------------------------------
def test_a_backend_reusing_one_call_id_at_every_step_gets_each_result_paired_with_its_call() -> (
    None
):
    engine = _engine()
    for k in range(3):
        engine.add_message(Message("assistant", (ToolUse("call_0", "read", {"path": f"f{k}"}),)))
        engine.add_tool_result("call_0", f"content of f{k}")
    expected = [(f"f{k}", f"content of f{k}") for k in range(3)]
    assert _pairs(engine) == {"anthropic": expected, "openai": expected}
    changes = _id_changes(engine)
    assert [(c.action, c.tool_use_id, c.detail) for c in changes] == [
        ("call_renamed", "call_0", "call_0-1"),
        ("result_renamed", "call_0", "call_0-1"),
        ("call_renamed", "call_0", "call_0-2"),
        ("result_renamed", "call_0", "call_0-2"),
    ]
    assert all(c.entry for c in changes)  # each names the entry admitted


def test_two_calls_with_one_id_in_one_message_keep_their_own_results() -> None:
    engine = _engine()
    engine.add_message(
        Message(
            "assistant", (ToolUse("p", "read", {"path": "a"}), ToolUse("p", "read", {"path": "b"}))
        )
    )
    engine.add_message(Message.tool((ToolResult("p", "A"), ToolResult("p", "B"))))
    assert _pairs(engine)["anthropic"] == [("a", "A"), ("b", "B")]


def test_a_result_answers_the_oldest_unanswered_call_of_its_id_across_messages() -> None:
    engine = _engine()
    engine.add_message(Message("assistant", (ToolUse("p", "read", {"path": "a"}),)))
    engine.add_message(Message("assistant", (ToolUse("p", "read", {"path": "b"}),)))
    engine.add_tool_result("p", "A")
    engine.add_tool_result("p", "B")
    engine.add_tool_result("p-1", "B again")  # a framework that reads the engine's ids
    assert _pairs(engine)["openai"] == [("a", "A"), ("b", "B again")]


def test_a_loaded_engine_names_ids_as_the_saved_one_would(tmp_path: Path) -> None:
    engine = _engine()
    engine.add_message(Message("assistant", (ToolUse("c", "read", {"path": "a"}),)))
    engine.add_tool_result("c", "A")
    engine.add_message(Message("assistant", (ToolUse("c", "read", {"path": "b"}),)))
    again = Engine.load(engine.save(tmp_path / "s.json"))
    for e in (engine, again):
        e.add_tool_result("c", "B")  # answers the renamed call, not the answered one
    assert _pairs(again) == _pairs(engine)
    assert _pairs(again)["anthropic"] == [("a", "A"), ("b", "B")]


def test_an_id_equal_to_an_earlier_rename_is_renamed_again_and_every_id_stays_unique() -> None:
    engine = _engine()
    for i, path in (("c", "a"), ("c", "b"), ("c-1", "c")):
        engine.add_message(Message("assistant", (ToolUse(i, "read", {"path": path}),)))
    calls = [b.id for e in engine.window.conversation.entries for b in e.message.tool_calls]
    assert calls == ["c", "c-1", "c-1-1"]


# ----- the request path: a window admitted without the rule (an old state) ---------------------
def _unnamed(engine: Engine, messages: list[Message]) -> None:
    for m in messages:
        engine.window.add_message(m, tokens=5)


def test_the_request_path_renames_a_reused_id_of_an_old_window_like_admission_does() -> None:
    engine = _engine()
    _unnamed(
        engine,
        [
            Message("assistant", (ToolUse("call_0", "read", {"path": "f0"}),)),
            Message.tool((ToolResult("call_0", "content of f0"),)),
            Message("assistant", (ToolUse("call_0", "read", {"path": "f1"}),)),
            Message.tool((ToolResult("call_0", "content of f1"),)),
        ],
    )
    expected = [("f0", "content of f0"), ("f1", "content of f1")]
    assert _pairs(engine) == {"anthropic": expected, "openai": expected}
    request, _ = engine.request("anthropic")
    renamed = [e for e in request.events if isinstance(e, Repaired) and e.action in ID_ACTIONS]
    assert [(e.action, e.tool_use_id, e.detail) for e in renamed] == [
        ("call_renamed", "call_0", "call_0-1"),
        ("result_renamed", "call_0", "call_0-1"),
    ]


def test_ids_a_provider_refuses_are_mapped_the_same_way_in_every_place() -> None:
    odd = ["c.1:x", "functions.Bash:0", "call~1", "x" * 53, "a b"]
    engine = _engine()
    engine.add_message(Message.assistant("", [ToolUse(i, "read", {"path": i}) for i in odd]))
    engine.add_message(Message.tool([ToolResult(i, f"r {i}") for i in odd]))
    assert _pairs(engine)["anthropic"] == [(i, f"r {i}") for i in odd]
    old = _engine()  # the same history in a window admitted without the rule
    _unnamed(
        old,
        [
            Message.assistant("", [ToolUse(i, "read", {"path": i}) for i in odd]),
            Message.tool([ToolResult(i, f"r {i}") for i in odd]),
        ],
    )
    assert old.request("anthropic")[1]["messages"] == engine.request("anthropic")[1]["messages"]
    repaired = repair_history(
        [
            Message.assistant("", [ToolUse(i, "read", {}) for i in odd]),
            Message.tool([ToolResult(i, "r") for i in odd]),
        ]
    )
    assert [b.id for b in repaired.messages[1].blocks if isinstance(b, ToolUse)] == [
        provider_id(i) for i in odd
    ]


@pytest.mark.parametrize(
    "raw", ["c.1:x", "", "~", "x" * 41, "call_HGn16KZh9oNCruxsMJ4gYXan~1", "\ud800", "é"]
)
def test_a_mapped_or_renamed_id_is_one_both_providers_accept(raw: str) -> None:
    for new in (provider_id(raw), renamed_id(provider_id(raw), 12)):
        assert id_problem(new) is None
        assert ANTHROPIC_ID.fullmatch(new) and len(new) <= 40
    assert provider_id(provider_id(raw)) == provider_id(raw)  # a valid id is kept as it is


def test_engine_repair_of_an_old_session_with_tilde_ids_maps_them() -> None:
    engine = _engine()
    _unnamed(
        engine,
        [
            Message("assistant", (ToolUse("c1~1", "read", {"path": "a"}),)),
            Message.tool((ToolResult("c1~1", "A"),)),
        ],
    )
    changes = engine.repair()
    assert [(c.action, c.tool_use_id) for c in changes] == [
        ("id_mapped", "c1~1"),
        ("id_mapped", "c1~1"),
    ]
    assert _pairs(engine)["anthropic"] == [("a", "A")]


# ----- the offline validators check what the providers check ------------------------------------
def test_the_anthropic_validator_refuses_ids_outside_its_pattern() -> None:
    for bad in ("c1~1", "c.1", "", "a b"):
        messages = [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": bad, "name": "r", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": bad, "content": "x"}],
            },
        ]
        found = anthropic_problems(messages)
        assert len([p for p in found if p.startswith("W-A.5")]) == 2, (bad, found)
    long_ok = "x" * 60  # Anthropic's pattern has no length limit
    messages[1]["content"][0]["id"] = messages[2]["content"][0]["tool_use_id"] = long_ok
    assert anthropic_problems(messages) == []


def test_the_openai_validator_refuses_empty_and_long_ids() -> None:
    for bad in ("", "x" * 41):
        messages = [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": bad, "type": "function", "function": {"name": "r", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": bad, "content": "x"},
        ]
        assert len([p for p in openai_chat_problems(messages) if p.startswith("W-O.4")]) == 2


# ----- empty ids and names are refused where they come in -----------------------------------------
@pytest.mark.parametrize(
    ("block", "place"),
    [
        (ToolUse("", "read", {}), "blocks[0].id"),
        (ToolUse("c1", "", {}), "blocks[0].name"),
        (ToolResult("", "x"), "blocks[0].tool_use_id"),
    ],
)
def test_an_empty_call_id_or_tool_name_is_refused_naming_the_place(block: Any, place: str) -> None:
    engine = _engine()
    before = len(engine.transcript())
    role = "assistant" if isinstance(block, ToolUse) else "tool"
    with pytest.raises(RegioError, match=re.escape(f"add_message: {place} is empty")):
        engine.add_message(Message(role, (block,)))
    assert len(engine.transcript()) == before


def test_a_stream_refuses_an_empty_call_id_or_name() -> None:
    engine = _engine()
    with engine.stream_assistant() as stream:
        with pytest.raises(RegioError, match="tool_call_start got an empty call id"):
            stream.tool_call_start("", "read")
        stream.tool_call_start("c1")
        with pytest.raises(RegioError, match="empty name for call 'c1'"):
            stream.tool_call_name("c1", "")
    assert engine.transcript()[-1].entry is not None
    assert engine.transcript()[-1].entry.role == "user"  # nothing was admitted


@pytest.mark.parametrize(
    ("messages", "place"),
    [
        (
            [{"role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]}],
            r"messages\[0\].tool_calls\[0\].function: 'name'",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "", "function": {"name": "r"}}]}],
            r"messages\[0\].tool_calls\[0\]: 'id'",
        ),
        ([{"role": "tool", "content": "x"}], r"messages\[0\]: 'tool_call_id'"),
    ],
)
def test_chat_messages_refuse_a_call_or_result_without_id_or_name(
    messages: list[dict[str, Any]], place: str
) -> None:
    with pytest.raises(RegioError, match=place):
        chat_messages(messages)


# ----- the invariant, for any history ------------------------------------------------------------
_ids = st.sampled_from(["c", "call_0", "p:1", "x" * 45, "a.b", "d"])


@st.composite
def _histories(draw: Any) -> list[tuple[str, Any]]:
    steps = draw(
        st.lists(
            st.one_of(
                st.tuples(st.just("calls"), st.lists(_ids, min_size=1, max_size=3)),
                st.tuples(st.just("results"), st.lists(_ids, min_size=1, max_size=3)),
                st.tuples(st.just("user"), st.just("")),
            ),
            max_size=12,
        )
    )
    return steps


@settings(max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "40")), deadline=None)
@given(_histories())
def test_any_history_renders_ids_both_providers_accept_and_pairs_each_result_with_its_call(
    steps: list[tuple[str, Any]],
) -> None:
    """Each call gets a unique path; each result names the call it answers by the id as sent
    and carries that call's path: the request pairs every result with the call the rule
    assigns it to (the oldest unanswered call of that id), both providers accept it, and a
    window admitted without the rule (an old state) renders the same pairs."""
    engine, old = _engine(), _engine()
    waiting: dict[str, list[str]] = {}
    made: dict[str, list[str]] = {}
    n = 0
    for kind, ids in steps:
        if kind == "user":
            message = Message("user", (Text("go on"),))
        elif kind == "calls":
            calls = []
            for i in ids:
                n += 1
                calls.append(ToolUse(i, "read", {"path": f"p{n}"}))
                waiting.setdefault(i, []).append(f"p{n}")
                made.setdefault(i, []).append(f"p{n}")
            message = Message("assistant", tuple(calls))
        else:
            results = []
            for i in ids:
                queue = waiting.get(i) or []
                path = queue.pop(0) if queue else (made[i][-1] if made.get(i) else "orphan")
                results.append(ToolResult(i, f"result of {path}"))
            message = Message.tool(tuple(results))
        engine.add_message(message)
        old.window.add_message(message, tokens=5)
    pairs = _pairs(engine)
    for provider in ("anthropic", "openai"):
        for path, text in pairs[provider]:
            assert text in (
                f"result of {path}",
                "[result pending: this tool call has not returned yet]",
                "[no result was recorded for this tool call]",
            ), (path, text)
    assert _pairs(old) == pairs
