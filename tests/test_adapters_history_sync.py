"""The LangChain middleware and the pydantic-ai history processor hand every new user turn to
the engine: a second run of the same agent without a checkpointer (or without
``message_history``), and a history that already holds assistant turns, lose nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_anthropic")
pytest.importorskip("pydantic_ai")

import anthropic
import httpx2
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic

import regio
from regio.adapters.langchain import RegioMiddleware

BLUEPRINT = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"


def _texts(request: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for m in request["messages"]:
        content = m["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        out.append((m["role"], text))
    return out


def _model(sent: list[dict[str, Any]]) -> ChatAnthropic:
    def server(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        n = len(sent)
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": f"answer {n}"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )

    model = ChatAnthropic(model="claude-sonnet-4-6", api_key="sk-offline", max_tokens=256)
    client = anthropic.Client(
        api_key="sk-offline", http_client=httpx2.Client(transport=httpx2.MockTransport(server))
    )
    model.__dict__["_client"] = client  # langchain-anthropic's cached client, offline
    return model


def test_a_second_langchain_run_without_a_checkpointer_reaches_the_model() -> None:
    sent: list[dict[str, Any]] = []
    engine = regio.Engine.from_blueprint(BLUEPRINT)
    agent = create_agent(_model(sent), tools=[], middleware=[RegioMiddleware(engine)])
    agent.invoke({"messages": [{"role": "user", "content": "QUESTION ONE"}]})
    agent.invoke({"messages": [{"role": "user", "content": "QUESTION TWO"}]})
    assert _texts(sent[-1]) == [
        ("user", "QUESTION ONE"),
        ("assistant", "answer 1"),
        ("user", "QUESTION TWO"),
    ]


def test_a_langchain_history_with_assistant_turns_keeps_them() -> None:
    sent: list[dict[str, Any]] = []
    engine = regio.Engine.from_blueprint(BLUEPRINT)
    agent = create_agent(_model(sent), tools=[], middleware=[RegioMiddleware(engine)])
    history = [
        {"role": "user", "content": "EARLIER Q"},
        {"role": "assistant", "content": "EARLIER ANSWER"},
        {"role": "user", "content": "NOW Q"},
    ]
    agent.invoke({"messages": history})
    assert _texts(sent[-1]) == [
        ("user", "EARLIER Q"),
        ("assistant", "EARLIER ANSWER"),
        ("user", "NOW Q"),
    ]


def test_a_second_pydantic_ai_run_without_message_history_reaches_the_model() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from regio.adapters.pydantic_ai import RegioHistory

    seen: list[str] = []

    def reply(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.append(repr(messages))
        return ModelResponse(parts=[TextPart("ok")])

    history = RegioHistory(regio.Engine.from_blueprint(BLUEPRINT))
    agent = Agent(FunctionModel(reply), capabilities=[ProcessHistory(history)])
    agent.run_sync("QUESTION ONE")
    agent.run_sync("QUESTION TWO")
    assert "QUESTION TWO" in seen[-1] and "QUESTION ONE" in seen[-1]


def test_unreadable_pydantic_ai_arguments_take_the_shared_invalid_form() -> None:
    from pydantic_ai.messages import ModelResponse, ToolCallPart

    from regio.adapters.pydantic_ai import _to_regio
    from regio.callargs import INVALID_ARGUMENTS_KEY

    for raw in ('{"path": ', "[1, 2]"):
        response = ModelResponse(parts=[ToolCallPart("read_file", raw, tool_call_id="c1")])
        (message,) = _to_regio(response)
        (call,) = message.tool_calls
        assert INVALID_ARGUMENTS_KEY in call.input, (raw, call.input)
