"""context_management rendered into Anthropic payloads (EngineOptions, blueprint key), refused
for other APIs, and sent through the real anthropic SDK's beta endpoint with its beta header."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
import pytest

from regio.blueprint import BlueprintError, load_blueprint
from regio.cache.context_editing import BETA, CLEAR_TOOL_USES, ContextEditingError
from regio.content import Message
from regio.engine import Engine
from regio.engine._from_blueprint import engine_options
from regio.session._options import EngineOptions

BLUEPRINT = """
version: 1
name: editing
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
context_management:
  clear_thinking: {keep: 2}
  clear_tool_uses: {trigger: 30000, keep: 5, clear_at_least: 5000, exclude_tools: [web_search]}
regions:
  - {name: conversation, kind: sliding_window, budget: 50%}
"""

EDITS = {
    "edits": [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
        {
            "type": CLEAR_TOOL_USES,
            "trigger": {"type": "input_tokens", "value": 30000},
            "keep": {"type": "tool_uses", "value": 5},
            "clear_at_least": {"type": "input_tokens", "value": 5000},
            "exclude_tools": ["web_search"],
        },
    ]
}


def engine(text: str = BLUEPRINT) -> Engine:
    return Engine.from_blueprint(text)


def test_blueprint_context_management_becomes_the_api_value() -> None:
    options = engine_options(BLUEPRINT)["options"]
    assert options.context_management == EDITS


def test_engine_renders_context_management_into_every_anthropic_payload() -> None:
    e = engine()
    e.add_message(Message.user("hello"))
    _req, first = e.request("anthropic", "claude-sonnet-4-6")
    _req, second = e.request("anthropic", "claude-sonnet-4-6")
    assert first["context_management"] == EDITS == second["context_management"]
    first["context_management"]["edits"].clear()  # the payload is the caller's own
    assert e.options.context_management == EDITS


def test_context_management_for_an_openai_request_is_a_clear_error() -> None:
    e = engine()
    e.add_message(Message.user("hello"))
    with pytest.raises(ContextEditingError, match="Anthropic's server-side context editing"):
        e.request("openai", "gpt-4o")


def test_blueprint_context_management_with_an_openai_model_is_refused() -> None:
    text = BLUEPRINT.replace(
        "provider: anthropic, name: claude-sonnet-4-6", "provider: openai, name: gpt-4o"
    )
    with pytest.raises(BlueprintError, match="context_management"):
        load_blueprint(text)


def test_engine_options_refuse_a_malformed_edit() -> None:
    with pytest.raises(ContextEditingError, match=r"edits\[0\]\.keep"):
        EngineOptions(context_management={"edits": [{"type": CLEAR_TOOL_USES, "keep": 3}]})
    assert attrs.fields(EngineOptions).context_management.default is None


class _Recorder(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.received.append((self.path, dict(self.headers), body))  # type: ignore[attr-defined]
        data = json.dumps(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": "done"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 2},
                "context_management": {"applied_edits": []},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    srv.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def test_payload_goes_through_the_sdk_beta_endpoint_with_the_beta_header(server: Any) -> None:
    pytest.importorskip("anthropic")
    from regio.agent.providers import AnthropicProvider

    e = engine()
    e.add_message(Message.user("hello"))
    _req, payload = e.request("anthropic", "claude-sonnet-4-6")
    host, port = server.server_address[:2]
    provider = AnthropicProvider(
        model="claude-sonnet-4-6", base_url=f"http://{host}:{port}", api_key="k", max_retries=0
    )
    completion = provider.complete(payload)
    path, headers, body = server.received[-1]
    assert path.startswith("/v1/messages")
    assert BETA in headers.get("anthropic-beta", "")
    assert body["context_management"] == EDITS
    assert completion.message.blocks
