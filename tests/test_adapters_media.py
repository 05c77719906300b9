"""Every adapter carries images and documents through (never drops them) and joins text parts
with a blank line: content_text / content_blocks of regio.adapters.chat, then each framework
against its real package, offline."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import regio
from media_support import image_bytes, pdf_bytes
from regio.adapters.chat import chat_messages, content_blocks, content_text, response_items
from regio.content import Document, Image, Text, ToolResult
from regio.sdk._objects import SDKInputError

# LiteLLM reads its model-price map from the installed package, never the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
BLUEPRINT = ROOT / "examples" / "blueprints" / "coding-agent.yaml"
PNG = image_bytes(64, 48)
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
PDF = pdf_bytes(2)
PDF_URL = "data:application/pdf;base64," + base64.b64encode(PDF).decode()


def _media(engine: regio.Engine) -> list[Any]:
    """Every image / document block the engine's transcript holds, tool results' included."""
    out: list[Any] = []
    for record in engine.transcript():
        for b in record.entry.blocks if record.entry is not None else ():
            if isinstance(b, Image | Document):
                out.append(b)
            elif isinstance(b, ToolResult):
                out.extend(b.media)
    return out


# ------------------------------------------------------------------------- the shared reader

TEXTS = st.lists(st.text(min_size=1, max_size=20), max_size=6)


@given(TEXTS)
def test_text_parts_are_joined_by_a_blank_line(texts):
    parts = [{"type": "text", "text": t} for t in texts]
    assert content_text(parts) == "\n\n".join(texts)


@given(st.lists(st.one_of(st.text(min_size=1, max_size=8), st.just(None)), max_size=8))
def test_media_parts_keep_their_place_between_the_joined_texts(spec):
    image = {"type": "image_url", "image_url": {"url": PNG_URL}}
    parts = [image if s is None else {"type": "text", "text": s} for s in spec]
    blocks = content_blocks(parts)
    expected: list[Any] = []
    run: list[str] = []
    for s in spec:
        if s is None:
            if run:
                expected.append("\n\n".join(run))
                run = []
            expected.append("image")
        else:
            run.append(s)
    if run:
        expected.append("\n\n".join(run))
    assert [b.text if isinstance(b, Text) else "image" for b in blocks] == expected
    assert all(isinstance(b, Text | Image) for b in blocks)


def test_chat_user_and_tool_messages_keep_their_images_and_files():
    messages = chat_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "text", "text": "here"},
                    {"type": "image_url", "image_url": {"url": PNG_URL}},
                    {"type": "file", "file": {"filename": "r.pdf", "file_data": PDF_URL}},
                ],
            },
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "function": {"name": "shot", "arguments": "{}"}}],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [
                    {"type": "text", "text": "the page"},
                    {"type": "image_url", "image_url": {"url": PNG_URL}},
                ],
            },
        ]
    )
    user, _, tool = messages
    assert user.blocks[0] == Text("look\n\nhere")
    assert isinstance(user.blocks[1], Image) and (user.blocks[1].width, user.blocks[1].height) == (
        64,
        48,
    )
    assert isinstance(user.blocks[2], Document) and user.blocks[2].pages == 2
    result = tool.tool_results[0]
    assert result.content == "the page" and isinstance(result.media[0], Image)


def test_an_audio_part_is_refused_naming_its_place():
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    with pytest.raises(SDKInputError, match=r"messages\[0\]\.content\[1\].*input_audio"):
        chat_messages([{"role": "user", "content": [{"type": "text", "text": "hi"}, audio]}])


# ------------------------------------------------------------------------------- LangChain


def test_langchain_user_image_reaches_the_engine_and_the_model():
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage

    from examples_support import FakeChatModel
    from regio.adapters.langchain import RegioMiddleware

    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    model = FakeChatModel(messages=iter([AIMessage("A red square.")]))
    agent = create_agent(model, tools=[], middleware=[RegioMiddleware(engine)])
    ask = HumanMessage(
        [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
        ]
    )
    agent.invoke({"messages": [ask]})
    assert [type(b) for b in _media(engine)] == [Image]
    sent = model.seen[0][-1].content
    assert any(isinstance(p, dict) and p.get("type") in ("image_url", "image") for p in sent)


# ------------------------------------------------------------------------------ pydantic-ai


def test_pydantic_ai_binary_image_and_pdf_reach_the_engine_and_come_back():
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import BinaryContent, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from regio.adapters.pydantic_ai import RegioHistory

    seen: list[Any] = []

    def fake_model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart("A red square and a report.")])

    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    agent = Agent(FunctionModel(fake_model), capabilities=[ProcessHistory(RegioHistory(engine))])
    agent.run_sync(
        [
            "What are these?",
            BinaryContent(PNG, media_type="image/png"),
            BinaryContent(PDF, media_type="application/pdf", identifier="report"),
        ]
    )
    assert [type(b) for b in _media(engine)] == [Image, Document]
    parts = [p for m in seen[0] for p in m.parts if isinstance(p, UserPromptPart)]
    content = parts[-1].content
    binaries = [c for c in content if isinstance(c, BinaryContent)]
    assert [b.media_type for b in binaries] == ["image/png", "application/pdf"]
    assert binaries[0].data == PNG and binaries[1].data == PDF


def test_pydantic_ai_audio_is_refused_naming_the_part():
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import AudioUrl, ModelRequest, UserPromptPart

    from regio.adapters.pydantic_ai import RegioHistory

    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    request = ModelRequest(parts=[UserPromptPart(["hear", AudioUrl("https://x.invalid/a.mp3")])])
    with pytest.raises(SDKInputError, match=r"parts\[0\]\.content\[1\].*AudioUrl"):
        asyncio.run(RegioHistory(engine)([request]))


# ---------------------------------------------------------------------- OpenAI Agents SDK


def test_agents_session_keeps_input_images_and_tool_output_media():
    pytest.importorskip("agents")
    from regio.adapters.openai_agents import RegioSession

    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    session = RegioSession(engine, "t")
    items = [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Compare"},
                {"type": "input_image", "image_url": PNG_URL, "detail": "low"},
            ],
        },
        {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [
                {"type": "input_text", "text": "page"},
                {"type": "input_file", "filename": "r.pdf", "file_data": PDF_URL},
            ],
        },
    ]
    asyncio.run(session.add_items(items))
    assert [type(b) for b in _media(engine)] == [Image, Document]
    out = asyncio.run(session.get_items())
    kinds = [
        p.get("type")
        for i in out
        for p in (i.get("content") or i.get("output") or [])
        if isinstance(p, dict)
    ]
    assert "input_image" in kinds and "input_file" in kinds


def test_response_items_join_text_parts_with_a_blank_line():
    (message,) = response_items(
        [{"role": "user", "content": [{"type": "input_text", "text": t} for t in ("a", "b")]}]
    )
    assert message.blocks == (Text("a\n\nb"),)


# ---------------------------------------------------------------------------------- LiteLLM


def test_litellm_sends_the_engines_images_to_the_provider():
    pytest.importorskip("litellm")
    import httpx
    from openai import OpenAI

    from regio.adapters import litellm as regio_litellm

    sent: list[dict[str, Any]] = []
    answer = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-5",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=answer)

    client = OpenAI(
        api_key="sk-offline", http_client=httpx.Client(transport=httpx.MockTransport(server))
    )
    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    engine.add_message(
        chat_messages(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": {"url": PNG_URL}},
                    ],
                }
            ]
        )[0]
    )
    regio_litellm.completion(engine, model="openai/gpt-5", client=client)
    last_user = next(m for m in sent[0]["messages"] if m["role"] == "user")
    assert any(p.get("type") == "image_url" for p in last_user["content"])
