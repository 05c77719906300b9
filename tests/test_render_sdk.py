"""Rendered payloads are accepted by the official SDK clients (loopback HTTP server)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

pytest.importorskip("anthropic", reason="the anthropic SDK is not installed")
pytest.importorskip("openai", reason="the openai SDK is not installed")

import anthropic
import openai

from layout_support import TOOLS, answer, call, make_window, say
from regio.layout import assemble, render_anthropic, render_openai_chat, render_openai_responses

ANTHROPIC_REPLY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-5",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
CHAT_REPLY = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
RESPONSES_REPLY = {
    "id": "r1",
    "object": "response",
    "created_at": 0,
    "model": "gpt-4o",
    "status": "completed",
    "output": [],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


@pytest.fixture
def server():
    bodies: list[tuple[str, dict]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append((self.path, body))
            if self.path.endswith("/messages"):
                reply = ANTHROPIC_REPLY
            elif self.path.endswith("/responses"):
                reply = RESPONSES_REPLY
            else:
                reply = CHAT_REPLY
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", bodies
    httpd.shutdown()
    httpd.server_close()


def _request():
    w = make_window()
    w.write("notes", "the repo uses make", tokens=5)
    say(w, "user", "fix the build")
    call(w, "looking", "c1", "c2")
    answer(w, "c1", "c2")
    say(w, "assistant", "done")
    say(w, "user", "thanks, now run tests")
    return assemble(w, "regio", tools=TOOLS)


def test_the_anthropic_client_sends_the_rendered_payload_unchanged(server):
    base, bodies = server
    payload = render_anthropic(_request(), model="claude-sonnet-5", max_tokens=64)
    client = anthropic.Anthropic(api_key="test", base_url=base, max_retries=0)
    reply = client.messages.create(**payload)
    assert reply.content[0].text == "ok"
    path, body = bodies[-1]
    assert path == "/v1/messages"
    assert body == json.loads(json.dumps(payload))


def test_the_openai_chat_client_sends_the_rendered_payload_unchanged(server):
    base, bodies = server
    payload = render_openai_chat(_request(), model="gpt-4o", max_tokens=64)
    client = openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)
    reply = client.chat.completions.create(**payload)
    assert reply.choices[0].message.content == "ok"
    path, body = bodies[-1]
    assert path == "/v1/chat/completions"
    assert body == json.loads(json.dumps(payload))


def test_the_openai_responses_client_sends_the_rendered_payload_unchanged(server):
    base, bodies = server
    payload = render_openai_responses(_request(), model="gpt-4o", max_tokens=64)
    client = openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)
    client.responses.create(**payload)
    path, body = bodies[-1]
    assert path == "/v1/responses"
    assert body == json.loads(json.dumps(payload))
