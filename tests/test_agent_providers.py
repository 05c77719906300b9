"""Provider adapters: SDK round trips against a loopback server, response reading, scripted and
replay providers."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.agent.errors import (
    ProviderHTTPError,
    ProviderNotInstalledError,
    ProviderResponseError,
    ReplayExhaustedError,
    ScriptExhaustedError,
)
from regio.agent.providers import (
    INVALID_ARGUMENTS_KEY,
    AnthropicProvider,
    OpenAICompatibleProvider,
    ReplayProvider,
    ScriptedProvider,
    anthropic_usage,
    is_openai_host,
    openai_chat_completion,
    openai_usage,
    reply,
    require_sdk,
)
from regio.agent.types import LoopPricing, ProviderUsage
from regio.content import Message, Text, ToolUse
from regio.providers.overflow import classify_overflow

OPENAI_RESPONSE = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q": "regio"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                    },
                ],
            },
        }
    ],
    "usage": {
        "prompt_tokens": 2048,
        "completion_tokens": 17,
        "total_tokens": 2065,
        "prompt_tokens_details": {"cached_tokens": 1920},
    },
    "timings": {"cache_n": 1920, "prompt_n": 128, "prompt_ms": 41.5},
}

ANTHROPIC_RESPONSE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-model",
    "content": [
        {"type": "thinking", "thinking": "plan", "signature": "sig"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 50,
        "cache_read_input_tokens": 3000,
        "cache_creation_input_tokens": 400,
        "output_tokens": 25,
    },
}


class _Canned(BaseHTTPRequestHandler):
    """Answers every POST with the canned JSON of the server, recording the request body."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.received.append((self.path, body))  # type: ignore[attr-defined]
        status, payload = self.server.answer  # type: ignore[attr-defined]
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    server.received = []  # type: ignore[attr-defined]
    server.answer = (200, {})  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"


def test_the_openai_compatible_provider_maps_usage_and_tool_calls_over_the_sdk(loopback):
    pytest.importorskip("openai", reason="the openai SDK is not installed")
    loopback.answer = (200, OPENAI_RESPONSE)
    provider = OpenAICompatibleProvider(
        model="local",
        base_url=_url(loopback) + "/v1",
        max_tokens=32,
        temperature=0.0,
        max_retries=0,
    )
    payload = {
        "messages": [{"role": "user", "content": "hi"}],
        "prompt_cache_key": "k1",
        "cache_prompt": True,
    }
    completion = provider.complete(payload)
    assert completion.usage.prompt_tokens == 2048
    assert completion.usage.cached_tokens == 1920
    assert completion.usage.output_tokens == 17
    assert completion.usage.prompt_ms == 41.5
    assert completion.stop_reason == "tool_calls"
    assert completion.message.blocks[0] == Text("Let me look.")
    assert completion.message.tool_calls == (
        ToolUse("call_1", "search", {"q": "regio"}),
        ToolUse("call_2", "read", {"path": "a.py"}),
    )
    path, body = loopback.received[-1]
    assert path == "/v1/chat/completions"
    assert body["model"] == "local"
    assert body["max_tokens"] == 32
    assert body["temperature"] == 0.0
    assert body["cache_prompt"] is True  # an unknown key travels in extra_body
    assert "prompt_cache_key" not in body  # only real OpenAI gets the routing key


def test_the_async_openai_compatible_provider_gives_the_same_completion(loopback):
    pytest.importorskip("openai", reason="the openai SDK is not installed")
    loopback.answer = (200, OPENAI_RESPONSE)
    provider = OpenAICompatibleProvider(
        model="local", base_url=_url(loopback) + "/v1", max_retries=0
    )
    completion = asyncio.run(provider.acomplete({"messages": [{"role": "user", "content": "x"}]}))
    assert completion.usage.cached_tokens == 1920
    assert [c.name for c in completion.message.tool_calls] == ["search", "read"]


def test_prompt_cache_key_is_sent_only_to_openai_itself():
    assert is_openai_host(None)
    assert is_openai_host("https://api.openai.com/v1")
    assert not is_openai_host("http://127.0.0.1:18080/v1")
    assert not is_openai_host("https://openai.com.evil.example/v1")

    def create(*, model: str, messages: list, prompt_cache_key: str = "", **kw: Any) -> None:
        return None

    openai_kwargs = OpenAICompatibleProvider(model="gpt-4o").request_kwargs(
        {"messages": [], "prompt_cache_key": "k"}, create
    )
    assert openai_kwargs["prompt_cache_key"] == "k"
    local = OpenAICompatibleProvider(model="m", base_url="http://localhost:1/v1")
    assert "prompt_cache_key" not in local.request_kwargs(
        {"messages": [], "prompt_cache_key": "k"}, create
    )


def test_the_anthropic_provider_maps_cache_reads_and_writes_over_the_sdk(loopback):
    pytest.importorskip(
        "anthropic", reason="the anthropic SDK is not installed (extra 'providers')"
    )
    loopback.answer = (200, ANTHROPIC_RESPONSE)
    provider = AnthropicProvider(
        model="claude-test-model", base_url=_url(loopback), api_key="test-key", max_retries=0
    )
    payload = {
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    completion = provider.complete(payload)
    usage = completion.usage
    assert usage.prompt_tokens == 50 + 3000 + 400
    assert usage.cached_tokens == 3000
    assert usage.cache_write_tokens == 400
    assert usage.uncached_tokens == 50
    assert usage.output_tokens == 25
    assert completion.stop_reason == "tool_use"
    kinds = [type(b).__name__ for b in completion.message.blocks]
    assert kinds == ["Thinking", "Text", "ToolUse"]
    path, body = loopback.received[-1]
    assert path == "/v1/messages"
    assert body["max_tokens"] == 1024
    assert body["model"] == "claude-test-model"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_a_length_refusal_from_the_sdk_is_recognised_as_an_overflow(loopback):
    loopback.answer = (
        400,
        {
            "error": {
                "code": 400,
                "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size, try increasing it",
                "n_prompt_tokens": 9000,
                "n_ctx": 8192,
            }
        },
    )
    provider = OpenAICompatibleProvider(
        model="local", base_url=_url(loopback) + "/v1", max_retries=0
    )
    openai = pytest.importorskip("openai")
    with pytest.raises(openai.BadRequestError) as caught:
        provider.complete({"messages": [{"role": "user", "content": "x"}]})
    info = classify_overflow(caught.value)
    assert info is not None
    assert (info.reported, info.maximum) == (9000, 8192)


def test_an_anthropic_prompt_too_long_refusal_is_recognised_as_an_overflow(loopback):
    loopback.answer = (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210345 tokens > 200000 maximum",
            },
        },
    )
    anthropic = pytest.importorskip("anthropic")
    provider = AnthropicProvider(model="m", base_url=_url(loopback), api_key="k", max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        provider.complete({"messages": [{"role": "user", "content": "x"}]})
    info = classify_overflow(caught.value)
    assert info is not None and info.reported == 210345


def test_a_missing_sdk_names_the_providers_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ProviderNotInstalledError, match=r"pip install regio\[providers\]"):
        require_sdk("openai")
    with pytest.raises(ProviderNotInstalledError, match="regio"):
        OpenAICompatibleProvider(model="m").complete({"messages": []})


def test_a_response_without_choices_is_a_clear_error():
    with pytest.raises(ProviderResponseError, match="choices"):
        openai_chat_completion({"choices": []})


def test_tool_arguments_that_are_not_json_are_kept_for_an_error_result():
    data = json.loads(json.dumps(OPENAI_RESPONSE))
    data["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{not json"
    completion = openai_chat_completion(data)
    assert completion.message.tool_calls[0].input == {INVALID_ARGUMENTS_KEY: "{not json"}


def test_llamacpp_timings_give_the_cached_count_when_usage_has_no_details():
    usage = openai_usage(
        {"prompt_tokens": 100, "completion_tokens": 3},
        {"cache_n": 60, "prompt_n": 40, "prompt_ms": 12.0},
    )
    assert (usage.prompt_tokens, usage.cached_tokens, usage.prompt_ms) == (100, 60, 12.0)


@settings(max_examples=60, deadline=None)
@given(
    plain=st.integers(0, 10**6),
    read=st.integers(0, 10**6),
    write=st.integers(0, 10**6),
    out=st.integers(0, 10**5),
)
def test_anthropic_usage_always_adds_up_to_the_whole_prompt(plain, read, write, out):
    usage = anthropic_usage(
        {
            "input_tokens": plain,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": out,
        }
    )
    assert usage.prompt_tokens == plain + read + write
    assert usage.uncached_tokens + usage.cached_tokens + usage.cache_write_tokens == (
        usage.prompt_tokens
    )


@settings(max_examples=60, deadline=None)
@given(prompt=st.integers(0, 10**6), cached_share=st.floats(0, 1), out=st.integers(0, 10**4))
def test_pricing_never_charges_more_than_full_price_when_reads_are_discounted(
    prompt, cached_share, out
):
    cached = int(prompt * cached_share)
    usage = ProviderUsage(prompt_tokens=prompt, cached_tokens=cached, output_tokens=out)
    pricing = LoopPricing(input=3.0, output=15.0, cached=0.3)
    full = (prompt * 3.0 + out * 15.0) / 1e6
    assert pricing.cost(usage) <= full + 1e-12


def test_the_scripted_provider_answers_in_order_and_raises_scripted_errors():
    error = ProviderHTTPError(
        400, {"error": {"code": "context_length_exceeded", "message": "too long"}}
    )
    provider = ScriptedProvider(
        [reply("one", prompt_tokens=10), error, lambda payload: f"saw {len(payload['messages'])}"]
    )
    assert provider.complete({"messages": [1]}).message.text == "one"
    with pytest.raises(ProviderHTTPError):
        provider.complete({"messages": [1, 2]})
    assert provider.complete({"messages": [1, 2, 3]}).message.text == "saw 3"
    assert [len(c["messages"]) for c in provider.calls] == [1, 2, 3]
    with pytest.raises(ScriptExhaustedError, match="max_steps"):
        provider.complete({"messages": []})
    assert classify_overflow(error) is not None


def test_the_replay_provider_answers_with_recorded_messages_then_stops():
    provider = ReplayProvider.from_messages(
        [Message.assistant("a", [ToolUse("c1", "t", {})]), Message.assistant("done")]
    )
    assert provider.complete({}).message.tool_calls[0].id == "c1"
    assert provider.complete({}).message.blocks == (Text("done"),)
    with pytest.raises(ReplayExhaustedError):
        provider.complete({})


def test_the_replay_provider_reads_a_regio_trace_with_its_usage(tmp_path):
    from regio.traces.format import AssistantMessage, Header, Trace, Usage, UserMessage
    from regio.traces.jsonl import write_trace

    trace = Trace(
        header=Header(id="t", source_format="regio"),
        events=(
            UserMessage(t=0.0, blocks=(Text("task"),)),
            AssistantMessage(
                t=1.0,
                blocks=(Text("answer"),),
                usage=Usage(prompt_tokens=90, cached_tokens=40, output_tokens=5),
            ),
        ),
    )
    path = write_trace(trace, tmp_path / "t.jsonl")
    provider = ReplayProvider.from_trace(path)
    completion = provider.complete({})
    assert completion.message.text == "answer"
    assert (completion.usage.prompt_tokens, completion.usage.cached_tokens) == (90, 40)
