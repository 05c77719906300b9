"""What the proxy benchmarks share: the scripted upstream, the worker's command, one session
step of the client, and the per-phase table (benchmarks/test_bench_proxy.py,
benchmarks/test_bench_proxy_stationary.py; their docstrings say what each measures).

A session (``REGIO_BENCH_STEPS`` steps, default 50) sends its whole history each step (the
Anthropic Messages API, streamed on even steps), then adds the model's call and a
750-1,250-token tool result (sizes differ by session, so relief steps do not all fall
together): its history grows by about 1,000 tokens a step, to about 50,000 tokens, past the
worker's 32,000-token window. The upstream answers every request with a tool call after
``REGIO_BENCH_MODEL_SECONDS`` (default 5.0 s, the model's own time); the worker (``regio
proxy``, one process, SQLite store, ``--request-log``) gets ``REGIO_BENCH_PROXY_ARGS`` on its
command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from proxy_support import blueprint, free_port, proxy_command, wait_for_port
from reading_agent_support import add_read, request_body

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = int(os.environ.get("REGIO_BENCH_SESSIONS", "100"))
STEPS = int(os.environ.get("REGIO_BENCH_STEPS", "50"))
MODEL_SECONDS = float(os.environ.get("REGIO_BENCH_MODEL_SECONDS", "5.0"))
BLUEPRINT = blueprint(
    "proxy-bench",
    "anthropic:claude-sonnet-4-6",
    window=32000,
    output=2000,
    conversation="70%",
    history=3000,
    system=2000,
    extra="relief: {enabled: true, restore_tool: false}\n",
)
UPSTREAM = """
import sys, uvicorn
sys.path.insert(0, {tests!r})
from proxy_support import ScriptedUpstream, Step
steps = [Step("Reading the next file.", (("read", {{"path": "f.py"}}),))] * 100000
app = ScriptedUpstream(steps, delay={delay}).app()
uvicorn.run(app, host="127.0.0.1", port={port}, log_level="warning", timeout_keep_alive=75)
"""


def result_text(session: int, step: int) -> str:
    """A tool result of 750-1,250 tokens: sessions differ in size, so their compactions do not
    all fall together."""
    lines = 30 + (session * 7) % 21
    return "\n".join(
        f"s{session} step {step} line {j}: value = compute({j})  # {'x' * 60}" for j in range(lines)
    )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def step(client: httpx.AsyncClient, url: str, n: int, history: list[Any], index: int) -> str:
    """Step ``index`` of session ``n``: send ``history`` (streamed on even steps), then add the
    model's call and a tool result to it. Returns the proxy's session id (its
    ``x-regio-session`` response header)."""
    stream = index % 2 == 0
    body = request_body(history, stream=stream)
    headers = {"x-api-key": "sk-bench"}
    if stream:
        text = []
        async with client.stream("POST", f"{url}/v1/messages", json=body, headers=headers) as r:
            assert r.status_code == 200
            session = r.headers["x-regio-session"]
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
        session = r.headers["x-regio-session"]
        call = next(b for b in r.json()["content"] if b["type"] == "tool_use")
    add_read(history, call["id"], result_text(n, index))
    return session


@contextlib.asynccontextmanager
async def warmed_client(url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the worker at ``url`` with a connection per session, after two requests of
    a warm-up session (the worker's first requests load tokenizers and code)."""
    limits = httpx.Limits(max_connections=SESSIONS + 10)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        warm = [{"role": "user", "content": "Warm-up session: read every file."}]
        for index in range(2):
            await step(client, url, -1, warm, index)
        yield client


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank); NaN when there are none (a phase whose
    requests all compacted has no "no compaction" figure)."""
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


@contextlib.contextmanager
def serving(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """The scripted upstream and one worker, each in a process of its own: ``(the worker's
    base URL, its process, its request log)``; both stopped on exit."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }
    up_port, proxy_port = free_port(), free_port()
    upstream = subprocess.Popen(
        [
            sys.executable,
            "-c",
            UPSTREAM.format(tests=str(ROOT / "tests"), port=up_port, delay=MODEL_SECONDS),
        ],
        env=env,
    )
    bp, log = tmp_path / "bp.yaml", tmp_path / "requests.jsonl"
    bp.write_text(BLUEPRINT, encoding="utf-8")
    proxy = subprocess.Popen(
        proxy_command(
            bp,
            f"http://127.0.0.1:{up_port}",
            f"sqlite:{tmp_path}/proxy.db",
            proxy_port,
            "--request-log",
            str(log),
            *os.environ.get("REGIO_BENCH_PROXY_ARGS", "").split(),
        ),
        env=env,
    )
    try:
        wait_for_port(up_port, upstream, "upstream")
        wait_for_port(proxy_port, proxy, "proxy")
        yield f"http://127.0.0.1:{proxy_port}", proxy, log
    finally:
        for proc in (proxy, upstream):
            proc.terminate()
            proc.wait(timeout=30)


def logged_sessions(log: Path) -> dict[str, list[dict[str, Any]]]:
    """The request log's lines by session, in order; ``REGIO_BENCH_LOG=path`` keeps a copy."""
    keep = os.environ.get("REGIO_BENCH_LOG")
    if keep:
        Path(keep).write_text(log.read_text())
    by_session: dict[str, list[dict[str, Any]]] = {}
    for line in log.read_text().splitlines():
        row = json.loads(line)
        by_session.setdefault(row["session"], []).append(row)
    return by_session


def phases() -> dict[str, range]:
    """A session's steps by phase: its first request (it creates the session) on its own, the
    first 10%, the 10% from 40% of the way (the window full) and the last 10%."""
    tenth = max(1, STEPS // 10)
    full = (STEPS * 2) // 5
    return {
        "session start": range(0, 1),
        "first 10%": range(1, 1 + tenth),
        "window full": range(full, full + tenth),
        "last 10%": range(STEPS - tenth, STEPS),
    }


def latency_figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The per-request figures of ``rows`` (request log lines) the tables report."""
    plain = [r for r in rows if not r["compacted"]]
    return {
        "proxy cpu ms p50": percentile([r["added_cpu_ms"] for r in plain], 0.5),
        "added ms p50": percentile([r["added_ms"] for r in rows], 0.5),
        "added ms p99": percentile([r["added_ms"] for r in rows], 0.99),
        "added ms p50, no compaction": percentile([r["added_ms"] for r in plain], 0.5),
        "added ms p99, no compaction": percentile([r["added_ms"] for r in plain], 0.99),
        "share compacting": 1 - len(plain) / len(rows) if rows else float("nan"),
        "client tokens": statistics.mean(r["client_tokens"] for r in rows),
        "upstream tokens": statistics.mean(r["upstream_tokens"] for r in rows),
    }


def print_table(title: str, table: dict[str, dict[str, float]]) -> None:
    """``table`` (phase -> figure -> value) with the ratios last / first and last / full."""
    names = list(table)
    print(f"\n{title}")
    print(f"{'':28}" + "".join(f"{k:>14}" for k in names) + f"{'last/first':>12}{'last/full':>11}")
    for key in table["first 10%"]:
        a, f, b = (table[p][key] for p in ("first 10%", "window full", "last 10%"))
        cells = "".join(f"{table[p][key]:14.2f}" for p in names)
        ratios = f"{b / a if a else float('nan'):12.2f}{b / f if f else float('nan'):11.2f}"
        print(f"{key:28}{cells}{ratios}")
