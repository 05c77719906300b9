"""Fixtures a docs snippet names to run offline (tests/test_docs_examples.py).

A snippet that needs a provider key is preceded by ``<!-- docs-fixture: NAME -->`` on the line
before its fence and says which key it needs (``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``); the
docs test then runs it with the fixture applied: the provider SDK's clients get an HTTP mock of
the provider's API instead of the network (every client built from then on, the frameworks'
own included), and the key variable a placeholder. The mock answers like a small agent: it
calls the first tool the request offers (every string argument ``"tests/test_api.py"``) until a
tool result comes back, then answers in text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

#: The text the offline model answers with once it has seen a tool result.
ANSWER = "add() is wrong; fixed and the test passes."
ARGUMENT = "tests/test_api.py"


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    props = (schema or {}).get("properties") or {}
    return {k: ARGUMENT for k, v in props.items() if (v or {}).get("type", "string") == "string"}


def _anthropic_answer(body: dict[str, Any], n: int) -> dict[str, Any]:
    last = body["messages"][-1]["content"] if body.get("messages") else ""
    answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
    tools = [t for t in body.get("tools") or [] if "input_schema" in t]
    if tools and not answered:
        tool = tools[-1]  # the caller's own tools come after regio's context tools
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_offline_{n}",
                "name": tool["name"],
                "input": _arguments(tool["input_schema"]),
            }
        ]
    else:
        content = [{"type": "text", "text": ANSWER}]
    return {
        "id": f"msg_offline_{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-sonnet-4-6"),
        "content": content,
        "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0},
    }


def _openai_answer(path: str, body: dict[str, Any], n: int) -> dict[str, Any]:
    usage = {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}
    if path.endswith("/responses"):
        items = body.get("input") or []
        answered = any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
        )
        tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
        if tools and not answered:
            tool = tools[-1]
            output: list[dict[str, Any]] = [
                {
                    "type": "function_call",
                    "id": f"fc_offline_{n}",
                    "call_id": f"call_offline_{n}",
                    "name": tool["name"],
                    "arguments": json.dumps(_arguments(tool.get("parameters") or {})),
                    "status": "completed",
                }
            ]
        else:
            text = {"type": "output_text", "text": ANSWER, "annotations": []}
            output = [
                {
                    "type": "message",
                    "id": f"msg_offline_{n}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [text],
                }
            ]
        return {
            "id": f"resp_offline_{n}",
            "object": "response",
            "created_at": 1,
            "model": body.get("model", "gpt-5"),
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                **usage,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
    messages = body.get("messages") or []
    answered = bool(messages) and messages[-1].get("role") == "tool"
    tools = body.get("tools") or []
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
    if tools and not answered:
        fn = tools[-1]["function"]
        arguments = json.dumps(_arguments(fn.get("parameters") or {}))
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_offline_{n}",
                    "type": "function",
                    "function": {"name": fn["name"], "arguments": arguments},
                }
            ],
        }
    return {
        "id": f"chatcmpl-offline-{n}",
        "object": "chat.completion",
        "created": 1,
        "model": body.get("model", "gpt-5"),
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def anthropic_events(message: dict[str, Any]) -> bytes:
    """``message`` as Anthropic's server-sent events (a ``stream: true`` request)."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": {**message, "content": [], "stop_reason": None}}),
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            start, delta = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": block["text"]},
            )
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"index": index, "content_block": start}),
            ("content_block_delta", {"index": index, "delta": delta}),
            ("content_block_stop", {"index": index}),
        ]
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events += [
        ("message_delta", {"delta": stop, "usage": {"output_tokens": 20}}),
        ("message_stop", {}),
    ]
    return "".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n" for name, data in events
    ).encode()


def _patch_clients(
    monkeypatch: pytest.MonkeyPatch, classes: list[tuple[type, bool]], answer: Callable[..., Any]
) -> None:
    import httpx2

    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        body = json.loads(request.content or b"{}")
        reply = answer(request.url.path, body, len(calls))
        if body.get("stream") and reply.get("type") == "message":
            headers = {"content-type": "text/event-stream"}
            return httpx2.Response(200, content=anthropic_events(reply), headers=headers)
        return httpx2.Response(200, json=reply)

    for cls, is_async in classes:
        original = cls.__init__

        def init(
            self: Any, *args: Any, _original: Any = original, _async: bool = is_async, **kw: Any
        ) -> None:
            transport = httpx2.MockTransport(handler)
            kw["http_client"] = (
                httpx2.AsyncClient(transport=transport)
                if _async
                else httpx2.Client(transport=transport)
            )
            _original(self, *args, **kw)

        monkeypatch.setattr(cls, "__init__", init)


def anthropic_offline(namespace: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Anthropic's API, offline: every ``anthropic.Anthropic`` / ``AsyncAnthropic`` built from
    now on (LangChain's ``ChatAnthropic`` and pydantic-ai's Anthropic model use them) talks to
    the mock; ``ANTHROPIC_API_KEY`` is a placeholder."""
    import anthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-offline")
    _patch_clients(
        monkeypatch,
        [(anthropic.Anthropic, False), (anthropic.AsyncAnthropic, True)],
        lambda _path, body, n: _anthropic_answer(body, n),
    )


def openai_offline(namespace: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenAI's API (Chat Completions and Responses), offline, as :func:`anthropic_offline`:
    every ``openai.OpenAI`` / ``AsyncOpenAI`` built from now on (the Agents SDK's included);
    ``OPENAI_API_KEY`` is a placeholder and the Agents SDK uploads no traces."""
    import openai

    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline")
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # the SDK's trace upload
    _patch_clients(
        monkeypatch, [(openai.OpenAI, False), (openai.AsyncOpenAI, True)], _openai_answer
    )


def gemini_offline(namespace: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini through Google ADK, offline: ADK's ``Gemini`` model answers from the same script
    (call the request's first tool until a function response comes back, then answer) instead
    of calling the API; ``GOOGLE_API_KEY`` is a placeholder."""
    from google.adk.models.google_llm import Gemini
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    monkeypatch.setenv("GOOGLE_API_KEY", "offline")

    async def generate(self: Any, llm_request: Any, stream: bool = False) -> Any:
        parts = [p for c in llm_request.contents for p in c.parts or []]
        answered = any(p.function_response is not None for p in parts)
        tools = list(llm_request.tools_dict.values())
        if tools and not answered:
            schema = tools[-1]._get_declaration().parameters
            props = {k: {"type": "string"} for k in (schema.properties or {})} if schema else {}
            call = types.FunctionCall(
                id="call_offline", name=tools[-1].name, args=_arguments({"properties": props})
            )
            part = types.Part(function_call=call)
        else:
            part = types.Part(text=ANSWER)
        yield LlmResponse(content=types.Content(role="model", parts=[part]))

    monkeypatch.setattr(Gemini, "generate_content_async", generate)


#: Fixture name -> (the key variable the snippet must name, the fixture).
FIXTURES: dict[str, tuple[str, Callable[[dict[str, Any], pytest.MonkeyPatch], None]]] = {
    "anthropic-offline": ("ANTHROPIC_API_KEY", anthropic_offline),
    "openai-offline": ("OPENAI_API_KEY", openai_offline),
    "gemini-offline": ("GOOGLE_API_KEY", gemini_offline),
}
