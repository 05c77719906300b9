"""A loopback OpenAI-compatible chat server for the ``regio run`` tests (offline).

:func:`serve_chat` answers every ``POST`` (``/v1/chat/completions``) with one canned JSON body;
:func:`chat_answer` builds a Chat Completions answer; :data:`BLUEPRINT` is the small blueprint
those runs use (:func:`write_blueprint`). The ``chat_server`` fixture of ``tests/conftest.py``
starts servers with :func:`serve_chat` and stops them after the test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BLUEPRINT = """
version: 1
name: cli-test
model: {provider: openai, name: gpt-4o, context_window: 8000, max_output_tokens: 200}
tokenizer: o200k_base
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: Be brief.}
  - {name: conversation, kind: sliding_window, budget: 4000}
"""


def write_blueprint(folder: Path) -> Path:
    """:data:`BLUEPRINT` written to ``folder/bp.yaml``; returns its path."""
    path = folder / "bp.yaml"
    path.write_text(BLUEPRINT, encoding="utf-8")
    return path


def chat_answer(usage: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    """A Chat Completions answer ``"Hello there."`` with ``usage`` (``None``: no ``usage``
    object at all) and any ``extra`` top-level keys (llama.cpp's ``timings``, say)."""
    out: dict[str, Any] = {
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
        **extra,
    }
    if usage is not None:
        out["usage"] = usage
    return out


@contextmanager
def serve_chat(answer: dict[str, Any]) -> Iterator[str]:
    """A server on a free loopback port answering every POST with ``answer`` (JSON); yields
    its base URL (``http://127.0.0.1:<port>/v1``) and stops it on exit."""
    body = json.dumps(answer).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()
