"""The LangChain middleware renders the wrapped model's provider format: a ChatAnthropic model
gets regio's planned cache_control breakpoints, a ChatOpenAI model Chat Completions messages;
the caller's system message is kept (first, or in a pinned region). Real langchain-anthropic
and langchain-openai over mock HTTP transports: no network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_anthropic")
pytest.importorskip("langchain_openai")

import anthropic
import httpx2
from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

import regio
from examples_support import FakeChatModel
from regio.adapters.langchain import RegioMiddleware, chat_model_provider

ROOT = Path(__file__).resolve().parents[1]
BLUEPRINT = ROOT / "examples" / "blueprints" / "coding-agent.yaml"
CALLER = "Always answer in English and cite the file you read."
TASK = "The test suite fails on add(); " + "the issue describes the failing case in detail. " * 300


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"contents of {path}: " + "def test_api(): assert add(1, 1) == 2\n" * 200


def _anthropic_reply(n: int, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


ANTHROPIC_REPLIES = [
    _anthropic_reply(
        1,
        [
            {"type": "text", "text": "Reading the test."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "t.py"}},
        ],
    ),
    _anthropic_reply(2, [{"type": "text", "text": "add() is wrong; fixed."}]),
]


def _chat_anthropic(sent: list[dict[str, Any]]) -> ChatAnthropic:
    def server(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=ANTHROPIC_REPLIES[len(sent) - 1])

    model = ChatAnthropic(model="claude-sonnet-4-6", api_key="sk-offline", max_tokens=1024)
    client = anthropic.Client(
        api_key="sk-offline", http_client=httpx2.Client(transport=httpx2.MockTransport(server))
    )
    model.__dict__["_client"] = client  # langchain-anthropic's cached client, offline
    return model


def _engine_with_payloads() -> tuple[regio.Engine, list[dict[str, Any]]]:
    """An engine with a long task (so breakpoints are planned) that keeps every payload it
    rendered."""
    engine = regio.Engine.from_blueprint(BLUEPRINT)
    engine.write("task", TASK)
    rendered: list[dict[str, Any]] = []
    request = engine.request

    def keep(*args: Any, **kwargs: Any) -> Any:
        out = request(*args, **kwargs)
        rendered.append(json.loads(json.dumps(out[1])))
        return out

    engine.request = keep  # type: ignore[method-assign]
    return engine, rendered


def _markers(payload: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every cache_control of a payload as (where, ttl): tools by name, system blocks by text,
    message blocks by (role, type, id or text)."""
    out: list[tuple[str, Any]] = []
    for t in payload.get("tools") or []:
        if "cache_control" in t:
            out.append((f"tool {t['name']}", t["cache_control"]))
    for b in payload.get("system") or []:
        if "cache_control" in b:
            out.append((f"system {b['text'][:40]}", b["cache_control"]))
    for m in payload["messages"]:
        for b in m["content"]:
            if "cache_control" in b:
                key = b.get("id") or b.get("tool_use_id") or b.get("text", "")[:40]
                out.append((f"{m['role']} {b['type']} {key}", b["cache_control"]))
    return out


def _planned(payload: dict[str, Any]) -> list[tuple[str, Any]]:
    """The markers regio planned, a tool_use one moved to the next message's first block."""
    moved = json.loads(json.dumps(payload))
    msgs = moved["messages"]
    for n, m in enumerate(msgs[:-1]):
        for b in m["content"]:
            if b["type"] == "tool_use" and "cache_control" in b:
                msgs[n + 1]["content"][0].setdefault("cache_control", b.pop("cache_control"))
    return _markers(moved)


def _run_anthropic(middleware_kwargs: dict[str, Any] | None = None):
    engine, rendered = _engine_with_payloads()
    sent: list[dict[str, Any]] = []
    agent = create_agent(
        _chat_anthropic(sent),
        tools=[read_file],
        system_prompt=CALLER,
        middleware=[RegioMiddleware(engine, **(middleware_kwargs or {}))],
    )
    agent.invoke({"messages": [{"role": "user", "content": "Fix the failing test"}]})
    return engine, rendered, sent


def test_anthropic_model_gets_every_planned_cache_control_breakpoint():
    _, rendered, sent = _run_anthropic()
    assert len(sent) == len(rendered) == 2
    for ours, wire in zip(rendered, sent, strict=True):
        assert _planned(ours), "regio planned no breakpoint: the test would prove nothing"
        assert _markers(wire) == _planned(ours)
    assert any(k.startswith("user tool_result") for k, _ in _markers(sent[1]))


def test_anthropic_model_gets_regios_content_blocks_and_tools():
    _, rendered, sent = _run_anthropic()
    wire = sent[1]
    assert [m["role"] for m in wire["messages"]] == [m["role"] for m in rendered[1]["messages"]]
    blocks = [b["type"] for m in wire["messages"] for b in m["content"]]
    assert "tool_use" in blocks and "tool_result" in blocks
    assert [t["name"] for t in wire["tools"]] == ["read_file"]
    assert wire["tools"][0]["input_schema"] == rendered[1]["tools"][0]["input_schema"]


def _offline_chat_openai(sent: list[dict[str, Any]], answers: list[dict[str, Any]]) -> Any:
    """A real ``ChatOpenAI`` whose HTTP calls are answered offline: request ``i`` is recorded
    in ``sent`` and answered with ``answers[i]`` (a request past them fails the test)."""

    def server(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        message = answers[len(sent) - 1]
        return httpx2.Response(
            200,
            json={
                "id": "c",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-5",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            },
        )

    client = httpx2.Client(transport=httpx2.MockTransport(server))
    return ChatOpenAI(model="gpt-5", api_key="sk-offline", http_client=client)


def test_callers_system_message_is_kept_first_before_regios_pinned_content():
    _, rendered, sent = _run_anthropic()
    for ours, wire in zip(rendered, sent, strict=True):
        assert wire["system"][0] == {"type": "text", "text": CALLER}
        assert wire["system"][1:] == ours["system"]


def test_callers_system_message_can_live_in_a_pinned_region():
    engine, rendered, sent = _run_anthropic({"system_region": "system"})
    texts = [b["text"] for b in sent[0]["system"]]
    assert sum(CALLER in t for t in texts) == 1
    assert engine.window.region("system").entries[0].text.strip() == CALLER
    assert sent[0]["system"] == rendered[0]["system"]


def test_openai_model_gets_chat_messages_and_the_callers_system_first():
    sent: list[dict[str, Any]] = []
    answers = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "t.py"}'},
                }
            ],
        },
        {"role": "assistant", "content": "Fixed."},
    ]

    model = _offline_chat_openai(sent, answers)
    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    agent = create_agent(
        model, tools=[read_file], system_prompt=CALLER, middleware=[RegioMiddleware(engine)]
    )
    agent.invoke({"messages": [{"role": "user", "content": "Fix the failing test"}]})
    assert len(sent) == 2
    system = sent[1]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(CALLER + "\n\n")
    assert "autonomous software engineer" in system["content"]
    assert [m["role"] for m in sent[1]["messages"]][1:] == ["user", "assistant", "tool"]
    assert "cache_control" not in json.dumps(sent[1])


@pytest.mark.parametrize(
    ("make", "provider"),
    [
        (lambda: ChatAnthropic(model="claude-sonnet-4-6", api_key="x"), "anthropic"),
        (
            lambda: ChatAnthropic(model="claude-sonnet-4-6", api_key="x").bind_tools([read_file]),
            "anthropic",
        ),
        (lambda: init_chat_model("anthropic:claude-sonnet-4-6", api_key="x"), "anthropic"),
        (
            lambda: init_chat_model(configurable_fields="any", model="claude-sonnet-4-6"),
            "anthropic",
        ),
        (lambda: ChatOpenAI(model="gpt-5", api_key="x"), "openai"),
        (lambda: init_chat_model("openai:gpt-5", api_key="x"), "openai"),
        (lambda: ChatOpenAI(model="claude-via-proxy", api_key="x"), "openai"),
        (lambda: FakeChatModel(messages=iter([])), "openai"),
    ],
)
def test_the_provider_is_detected_from_the_wrapped_chat_model(make, provider):
    assert chat_model_provider(make()) == provider


def test_an_unknown_provider_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="anthropic, openai"):
        RegioMiddleware(regio.Engine.from_blueprint(BLUEPRINT), provider="gemini")


def test_a_chosen_provider_overrides_detection():
    engine, rendered = _engine_with_payloads()
    sent: list[dict[str, Any]] = []
    model = _chat_anthropic(sent)
    agent = create_agent(
        model, tools=[read_file], middleware=[RegioMiddleware(engine, provider="openai")]
    )
    agent.invoke({"messages": [{"role": "user", "content": "Fix the failing test"}]})
    assert "cache_control" not in json.dumps(sent[0])
    assert "messages" in rendered[0] and rendered[0]["messages"][0]["role"] == "system"


def test_a_breakpoint_on_a_tool_use_moves_to_the_result_that_answers_it():
    from regio.adapters.langchain import _anthropic_window

    marker = {"type": "ephemeral", "ttl": "5m"}
    body = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "reading"},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "read_file",
                        "input": {"path": "t.py"},
                        "cache_control": marker,
                    },
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}],
            },
        ]
    }
    model = ChatAnthropic(model="claude-sonnet-4-6", api_key="x", max_tokens=1024)
    wire = model._get_request_payload(_anthropic_window(body))
    assert _markers(wire) == [("user tool_result toolu_1", marker)]
    assert "cache_control" in body["messages"][1]["content"][1]  # the engine's payload is untouched


IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}


@st.composite
def anthropic_bodies(draw: Any) -> dict[str, Any]:
    """Anthropic payload messages (user first and last, roles alternating) of text, image,
    tool_use and tool_result blocks, with cache_control on up to 4 of them."""
    turns = draw(st.integers(0, 4))
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    for n in range(turns):
        calls = draw(st.integers(0, 2))
        said = [{"type": "text", "text": f"step {n}"}] if draw(st.booleans()) or not calls else []
        uses = [
            {"type": "tool_use", "id": f"toolu_{n}_{k}", "name": "read_file", "input": {"k": k}}
            for k in range(calls)
        ]
        messages.append({"role": "assistant", "content": said + uses})
        answers = [
            {"type": "tool_result", "tool_use_id": u["id"], "content": f"out {n}"} for u in uses
        ]
        extra = [IMAGE] if draw(st.booleans()) else []
        messages.append(
            {"role": "user", "content": answers + extra + [{"type": "text", "text": f"next {n}"}]}
        )
    blocks = [b for m in messages for b in m["content"]]
    marked = draw(st.lists(st.sampled_from(range(len(blocks))), max_size=4, unique=True))
    for i in marked:
        blocks[i]["cache_control"] = {
            "type": "ephemeral",
            "ttl": draw(st.sampled_from(["5m", "1h"])),
        }
    return {"messages": messages}


@settings(max_examples=60, deadline=None)
@given(anthropic_bodies())
def test_langchain_anthropic_sends_every_marker_of_any_payload(body):
    from regio.adapters.langchain import _anthropic_window

    model = ChatAnthropic(model="claude-sonnet-4-6", api_key="x", max_tokens=1024)
    wire = model._get_request_payload(_anthropic_window(body))
    assert _markers(wire) == _planned(body)


NOTE = "add() lives in calc.py"
CONTEXT_REPLIES = [
    _anthropic_reply(
        1,
        [
            {
                "type": "tool_use",
                "id": "toolu_9",
                "name": "context_write",
                "input": {"region": "file_notes", "key": "calc.py", "text": NOTE},
            }
        ],
    ),
    _anthropic_reply(2, [{"type": "text", "text": "Noted."}]),
]


@pytest.mark.parametrize("own", [[read_file], []], ids=["with-own-tools", "without"])
def test_regios_context_tools_reach_an_anthropic_model_and_its_calls_run_in_the_engine(own):
    engine = regio.Engine.from_blueprint(BLUEPRINT, context_tools="all")
    sent: list[dict[str, Any]] = []
    model = _chat_anthropic(sent)
    ANTHROPIC_REPLIES[:], saved = CONTEXT_REPLIES, list(ANTHROPIC_REPLIES)
    try:
        agent = create_agent(model, tools=own, middleware=[RegioMiddleware(engine)])
        agent.invoke({"messages": [{"role": "user", "content": "Note where add() is"}]})
    finally:
        ANTHROPIC_REPLIES[:] = saved
    names = [s.name for s in engine.tool_specs([])]
    assert "context_write" in names
    assert [t["name"] for t in sent[0]["tools"]] == [*names, *(t.name for t in own)]
    assert engine.window.region("file_notes").entries[0].text.endswith(NOTE)
    results = [b for m in sent[1]["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert len(results) == 1 and "not a valid tool" not in json.dumps(results)
    assert [s.name for s in engine.tool_specs(None)] == [t["name"] for t in sent[1]["tools"]]


def test_regios_context_tools_reach_an_openai_model_in_regios_order():
    sent: list[dict[str, Any]] = []

    model = _offline_chat_openai(sent, [{"role": "assistant", "content": "Done."}])
    engine = regio.Engine.from_blueprint(
        BLUEPRINT, provider="openai", model="gpt-5", context_tools="all"
    )
    agent = create_agent(model, tools=[read_file], middleware=[RegioMiddleware(engine)])
    agent.invoke({"messages": [{"role": "user", "content": "Fix the failing test"}]})
    wire = [t["function"]["name"] for t in sent[0]["tools"]]
    assert wire == [s.name for s in engine.tool_specs([])] + ["read_file"]
