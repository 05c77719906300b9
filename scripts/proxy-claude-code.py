#!/usr/bin/env python3
"""Claude Code, unmodified, through ``regio proxy``, against a scripted local upstream.

    npm install --prefix /tmp/cc @anthropic-ai/claude-code      # once
    python scripts/proxy-claude-code.py /tmp/cc/node_modules/.bin/claude

What runs: a local upstream speaking the Anthropic Messages API (streamed, as Claude Code asks)
whose "model" follows a script: asked for the task, it calls Claude Code's ``Bash`` tool to write
``hello.txt``; given that tool's result, it answers with a one-line summary; any other request
Claude Code makes (a title, a quota check) gets a short text. ``regio proxy`` sits in front of it
(``examples/blueprints/proxy.yaml``, a SQLite store in a temporary folder), and Claude Code runs
in print mode in a temporary folder with ``ANTHROPIC_BASE_URL`` pointing at the proxy. The script
prints Claude Code's output, the file it wrote, what the upstream received and the proxy's
status; docs/proxy.md shows a run. Nothing leaves the machine (the network hosts Claude Code
would otherwise call are switched off by its own environment variables).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
TASK = "Create a file hello.txt containing the line: hello from regio"
received: list[dict[str, Any]] = []


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def _reply(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model: a Bash call for the task, a summary after its result, else text."""
    tools = {t.get("name") for t in body.get("tools") or []}
    last = body["messages"][-1]["content"]
    blocks = last if isinstance(last, list) else [{"type": "text", "text": last}]
    if any(b.get("type") == "tool_result" for b in blocks):
        return [{"type": "text", "text": "Done: hello.txt now says 'hello from regio'."}]
    text = " ".join(str(b.get("text", "")) for b in blocks)
    if "Bash" in tools and "hello.txt" in text:
        command = "printf 'hello from regio\\n' > hello.txt"
        return [
            {"type": "text", "text": "I'll write the file."},
            {
                "type": "tool_use",
                "id": f"toolu_{len(received):04d}",
                "name": "Bash",
                "input": {"command": command, "description": "Write hello.txt"},
            },
        ]
    return [{"type": "text", "text": "Hello file task"}]


async def messages(request: Request) -> Response:
    body = json.loads(await request.body())
    received.append(body)
    content = _reply(body)
    prompt = len(json.dumps(body)) // 4  # the scripted upstream's rough count: 4 bytes a token
    usage = {
        "input_tokens": prompt,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "output_tokens": 20,
    }
    stop = "tool_use" if content[-1]["type"] == "tool_use" else "end_turn"
    message = {
        "id": f"msg_{len(received):04d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return JSONResponse(message)
    events = [
        _event(
            "message_start",
            {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
        )
    ]
    for i, block in enumerate(content):
        start = block if block["type"] == "tool_use" else {"type": "text", "text": ""}
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
        events.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            )
        )
        delta = (
            {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            if block["type"] == "tool_use"
            else {"type": "text_delta", "text": block["text"]}
        )
        events.append(
            _event(
                "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
            )
        )
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
    )
    events.append(_event("message_stop", {"type": "message_stop"}))

    async def stream() -> Any:
        for e in events:
            yield e

    return StreamingResponse(stream(), media_type="text/event-stream")


async def count_tokens(request: Request) -> Response:
    return JSONResponse({"input_tokens": 100})


def _serve(app: Any, port: int) -> uvicorn.Server:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server


def main(claude: str) -> int:
    sys.path.insert(0, str(ROOT / "src"))
    from regio.proxy import ProxyConfig, create_app

    routes = [
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
    ]
    upstream = _serve(Starlette(routes=routes), 18931)
    work = Path(tempfile.mkdtemp(prefix="regio-cc-"))
    blueprint = ROOT / "examples" / "blueprints" / "proxy.yaml"
    proxy_app = create_app(
        ProxyConfig(blueprint, "http://127.0.0.1:18931", store=f"sqlite:{work}/proxy.db")
    )
    proxy = _serve(proxy_app, 18932)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:18932",
        "ANTHROPIC_API_KEY": "sk-ant-demo",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": str(work),
    }
    project = work / "project"
    project.mkdir()
    run = subprocess.run(
        [claude, "-p", TASK, "--allowedTools", "Bash", "--model", "claude-sonnet-4-6"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    print("$ ANTHROPIC_BASE_URL=http://127.0.0.1:18932 claude -p", json.dumps(TASK))
    print(run.stdout.strip() or run.stderr.strip()[-2000:])
    hello = project / "hello.txt"
    print(
        f"\nhello.txt: {hello.read_text().strip()!r}" if hello.exists() else "\nhello.txt: missing"
    )
    print(f"\nupstream requests: {len(received)}")
    for body in received:
        tools = len(body.get("tools") or [])
        kinds = [m["role"] for m in body["messages"]]
        stream = body.get("stream", False)
        print(f"  model {body.get('model')}, stream {stream}, {tools} tools, messages {kinds}")
    status = httpx.get("http://127.0.0.1:18932/status.json").json()
    totals = status["totals"]
    print(f"\nproxy: {totals['sessions']} session, {totals['requests']} requests")
    for s in status["sessions"]:
        print(
            f"  session {s['id']} ({s['found_by']}): {s['requests']} requests, "
            f"{s['history_items']} history items, client tokens {s['client_tokens']}, "
            f"upstream tokens {s['upstream_tokens']}"
        )
    proxy.should_exit = upstream.should_exit = True
    return 0 if hello.exists() and run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "claude"))
