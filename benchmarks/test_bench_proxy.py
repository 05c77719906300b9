"""What the proxy adds per request, as sessions grow: one worker, 100 concurrent sessions whose
histories grow to about 50,000 tokens, against a scripted local upstream.

Setup: the upstream (:class:`proxy_support.ScriptedUpstream`, in a process of its own) answers
every request at once with a tool call; the proxy (``regio proxy``, one worker, in a process of
its own, SQLite store, ``--request-log``) lays out a 32,000-token window; the client (this
process, asyncio + httpx) drives ``REGIO_BENCH_SESSIONS`` sessions (default 100) through
``REGIO_BENCH_STEPS`` steps (default 50) in lockstep rounds: each round every session sends its
next request at once (the Anthropic Messages API, streamed on even steps), then adds the
model's call and a ~1,000-token tool result to its history. So the client's history grows by
about 1,000 tokens a step, to about 50,000 tokens, past the window (the blueprint compacts).

Measured per round (one request per session):

* **added CPU per request**: the proxy process's CPU time over the round (``/proc/<pid>/stat``
  utime + stime: everything, HTTP included) divided by the requests of the round;
* **added latency**: per request, the wall time the proxy itself spent on it (the request log's
  ``added_ms``: reading the request, finding and leasing the session, laying out, committing;
  not the upstream's time), p50 and p99 over the round's requests.

Reported: the first 10% of rounds against the last 10%, and their ratio (the target: at most
1.5, flat as the sessions grow). Not a timed test: run it by hand, ``pytest
benchmarks/test_bench_proxy.py -s`` (several minutes on 2 cores), and read the table it prints.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")

import httpx

from proxy_support import free_port

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = int(os.environ.get("REGIO_BENCH_SESSIONS", "100"))
STEPS = int(os.environ.get("REGIO_BENCH_STEPS", "50"))
BLUEPRINT = """
version: 1
name: proxy-bench
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 32000,
        max_output_tokens: 2000}
tokenizer: o200k_base
tools: {context: none}
relief: {enabled: true, restore_tool: false}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, heading: false,
     capture: [{rule: system_prompt}]}
  - {name: conversation_history, kind: compact_history, source: conversation,
     volatility: grows, budget: 3000}
  - {name: conversation, kind: sliding_window, budget: "70%", max_items: 2000,
     eviction: {strategy: compact, compact_count: 20}}
"""
UPSTREAM = """
import sys, uvicorn
sys.path.insert(0, {tests!r})
from proxy_support import ScriptedUpstream, Step
steps = [Step("Reading the next file.", (("read", {{"path": "f.py"}}),))] * 100000
uvicorn.run(ScriptedUpstream(steps).app(), host="127.0.0.1", port={port}, log_level="warning")
"""
TOOLS = [
    {
        "name": "read",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def _result(session: int, step: int) -> str:
    return "\n".join(
        f"s{session} step {step} line {j}: value = compute({j})  # {'x' * 60}" for j in range(40)
    )


def _wait(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("a server did not start") from None
            time.sleep(0.05)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _step(client: httpx.AsyncClient, url: str, n: int, history: list[Any], step: int) -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1000,
        "system": "You read files.",
        "tools": TOOLS,
        "messages": history,
        "stream": step % 2 == 0,
    }
    headers = {"x-api-key": "sk-bench"}
    if body["stream"]:
        text = []
        async with client.stream("POST", f"{url}/v1/messages", json=body, headers=headers) as r:
            assert r.status_code == 200
            async for line in r.aiter_lines():
                text.append(line)
        start = next(
            json.loads(line[6:])
            for line in text
            if '"content_block_start"' in line and '"tool_use"' in line
        )
        call = start["content_block"]
    else:
        r = await client.post(f"{url}/v1/messages", json=body, headers=headers)
        assert r.status_code == 200, r.text
        call = next(b for b in r.json()["content"] if b["type"] == "tool_use")
    history.append(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the next file."},
                {"type": "tool_use", "id": call["id"], "name": "read", "input": {"path": "f.py"}},
            ],
        }
    )
    history.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call["id"], "content": _result(n, step)}
            ],
        }
    )


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def test_added_cpu_and_latency_per_request_stay_flat_as_sessions_grow(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }
    up_port, proxy_port = free_port(), free_port()
    upstream = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM.format(tests=str(ROOT / "tests"), port=up_port)], env=env
    )
    bp, log = tmp_path / "bp.yaml", tmp_path / "requests.jsonl"
    bp.write_text(BLUEPRINT, encoding="utf-8")
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "regio.cli",
            "proxy",
            "--blueprint",
            str(bp),
            "--upstream",
            f"http://127.0.0.1:{up_port}",
            "--store",
            f"sqlite:{tmp_path}/proxy.db",
            "--port",
            str(proxy_port),
            "--request-log",
            str(log),
        ],
        env=env,
    )
    rounds: list[dict[str, float]] = []
    try:
        _wait(up_port, upstream)
        _wait(proxy_port, proxy)
        url = f"http://127.0.0.1:{proxy_port}"

        async def run() -> None:
            limits = httpx.Limits(max_connections=SESSIONS + 10)
            async with httpx.AsyncClient(timeout=600, limits=limits) as client:
                histories = [
                    [{"role": "user", "content": f"Session {n}: read every file."}]
                    for n in range(SESSIONS)
                ]
                for step in range(STEPS):
                    cpu = _cpu_seconds(proxy.pid)
                    started = time.perf_counter()
                    await asyncio.gather(
                        *(_step(client, url, n, h, step) for n, h in enumerate(histories))
                    )
                    rounds.append(
                        {
                            "cpu_ms": (_cpu_seconds(proxy.pid) - cpu) * 1000 / SESSIONS,
                            "wall_s": time.perf_counter() - started,
                        }
                    )

        asyncio.run(run())
    finally:
        for proc in (proxy, upstream):
            proc.terminate()
            proc.wait(timeout=30)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    by_session: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_session.setdefault(line["session"], []).append(line)
    assert len(by_session) == SESSIONS and all(len(v) == STEPS for v in by_session.values())
    tenth = max(1, STEPS // 10)
    phases = {"first 10%": range(0, tenth), "last 10%": range(STEPS - tenth, STEPS)}
    table = {}
    for name, steps in phases.items():
        added = [v[i]["added_ms"] for v in by_session.values() for i in steps]
        own_cpu = [v[i]["added_cpu_ms"] for v in by_session.values() for i in steps]
        client_tokens = statistics.mean(
            v[i]["client_tokens"] for v in by_session.values() for i in steps
        )
        upstream_tokens = statistics.mean(
            v[i]["upstream_tokens"] for v in by_session.values() for i in steps
        )
        table[name] = {
            "process cpu ms/request": statistics.mean(rounds[i]["cpu_ms"] for i in steps),
            "engine cpu ms/request": statistics.mean(own_cpu),
            "added ms p50": _percentile(added, 0.5),
            "added ms p99": _percentile(added, 0.99),
            "client tokens": client_tokens,
            "upstream tokens": upstream_tokens,
        }
    print(f"\n{SESSIONS} sessions x {STEPS} steps, one worker")
    print(f"{'':26}" + "".join(f"{k:>14}" for k in phases) + f"{'ratio':>10}")
    for key in table["first 10%"]:
        a, b = table["first 10%"][key], table["last 10%"][key]
        print(f"{key:26}{a:14.2f}{b:14.2f}{b / a if a else float('nan'):10.2f}")
    print("compactions:", sum(line["compacted"] for line in lines), "of", len(lines), "requests")
    print(
        "per round (cpu ms/request, wall s):",
        [(round(r["cpu_ms"], 1), round(r["wall_s"], 1)) for r in rounds],
    )
    for key in ("process cpu ms/request", "added ms p50", "added ms p99"):
        assert table["last 10%"][key] / table["first 10%"][key] <= 1.5, (key, table)
