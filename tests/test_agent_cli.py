"""``regio run`` against a loopback server with canned answers (offline)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from regio.cli import main

BLUEPRINT = """
version: 1
name: cli-test
model: {provider: openai, name: gpt-4o, context_window: 8000, max_output_tokens: 200}
tokenizer: o200k_base
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: Be brief.}
  - {name: conversation, kind: sliding_window, budget: 4000}
"""

ANSWER = {
    "id": "x",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Hello there."},
        }
    ],
    "usage": {
        "prompt_tokens": 321,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 256},
    },
    "timings": {"cache_n": 256, "prompt_n": 65, "prompt_ms": 12.5},
}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        data = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def blueprint(tmp_path) -> str:
    path = tmp_path / "bp.yaml"
    path.write_text(BLUEPRINT, encoding="utf-8")
    return str(path)


def test_regio_run_prints_the_server_cache_and_the_prediction_per_step(
    blueprint, server_url, capsys
):
    status = main(
        [
            "run",
            blueprint,
            "--base-url",
            server_url,
            "--model",
            "m",
            "--task",
            "Say hello",
            "--predict",
            "profile",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "321" in out and "256" in out and "12.5" in out
    assert "final_answer" in out and "Hello there." in out


def test_regio_run_without_a_base_url_is_an_input_error(blueprint, capsys):
    status = main(["run", blueprint, "--provider", "openai-compatible", "--task", "x"])
    assert status == 2
    assert "--base-url" in capsys.readouterr().err


def test_regio_run_with_a_broken_blueprint_is_an_input_error(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nregions: 3\n", encoding="utf-8")
    assert main(["run", str(bad), "--base-url", "http://127.0.0.1:9/v1", "--task", "x"]) == 2
