"""What the proxy adds per request, as sessions grow: one worker, 100 concurrent sessions whose
histories grow to about 50,000 tokens, against a scripted local upstream.

Setup: the upstream (:class:`proxy_support.ScriptedUpstream`, in a process of its own) answers
every request with a tool call after ``REGIO_BENCH_MODEL_SECONDS`` (default 5.0 s: the model's
own time, short for an agent step); the proxy (``regio proxy``, one worker, in a process of its
own, SQLite store, ``--request-log``) lays out a 32,000-token window; the client (this process,
asyncio + httpx) runs ``REGIO_BENCH_SESSIONS`` sessions (default 100) at once, each through
``REGIO_BENCH_STEPS`` steps (default 50; their starts spread over the first model interval):
each step sends the whole history (the Anthropic Messages API, streamed on even steps), then
adds the model's call and a 750-1,250-token tool result (sizes differ by session, so compactions
do not all fall together). So each client's history grows by about 1,000 tokens a step, to about
50,000 tokens, past the window: from about a fifth of the way the window is full and the
blueprint compacts every ~15 steps.

Measured:

* **added CPU per request**: the proxy process's CPU time (``/proc/<pid>/stat`` utime + stime:
  everything, HTTP included) while the sessions made their k-th step (between the moments the
  (k-1)·N-th and k·N-th responses completed) divided by N; and per request, the CPU time of the
  proxy's own work (the request log's ``added_cpu_ms``: reading and digesting the request, the
  engine, the relay, the commit);
* **added latency**: per request, the wall time the proxy spent on it before the answer reached
  the client (the request log's ``added_ms``: reading the request, finding and leasing the
  session, laying out, committing, waiting for the worker; not the upstream's time), p50 and
  p99. A compaction that runs beside the upstream call (``beside_ms``) is in it only where it
  outlasted the upstream.

Reported, for the first 10% of each session's requests, the 10% from 40% of the way (the window
full, past most sessions' first compaction) and the last 10%: every figure with the ratios
last/first and last/full; "no compaction" figures leave out the requests that compacted (and,
for the process's CPU, their own CPU time); a compaction is a cost of the full window, never in
the first 10%, reported as a session's first compaction against its last. A session's first
request, which creates it, is reported apart, and two requests of a warm-up session run first.
``REGIO_BENCH_LOG=path`` keeps the request log; ``REGIO_BENCH_PROXY_ARGS`` adds options to the
worker's command line (``"--threads 4"``).

Asserted: the process's CPU per request without compactions, last 10% against first 10% and
against the full window, and the proxy's own CPU against the full window, each at most 1.5; a
session's last compaction at most 1.5 times its first. The latency is printed, not asserted: a
compaction (~65 ms of CPU) holds the worker's interpreter, the requests arriving meanwhile wait
behind it, so on a shared machine the percentiles follow the load and the compaction waves.

Not a timed test: run it by hand, ``pytest benchmarks/test_bench_proxy.py -s`` (a few minutes),
and read the table it prints; docs/proxy.md has a run.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")

import httpx

from proxy_support import blueprint, free_port, proxy_command, wait_for_port

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
TOOLS = [
    {
        "name": "read",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def _result(session: int, step: int) -> str:
    """A tool result of 750-1,250 tokens: sessions differ in size, so their compactions do not
    all fall together."""
    lines = 30 + (session * 7) % 21
    return "\n".join(
        f"s{session} step {step} line {j}: value = compute({j})  # {'x' * 60}" for j in range(lines)
    )


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
    rounds: list[dict[str, float]] = []
    try:
        wait_for_port(up_port, upstream, "upstream")
        wait_for_port(proxy_port, proxy, "proxy")
        url = f"http://127.0.0.1:{proxy_port}"

        async def run() -> None:
            limits = httpx.Limits(max_connections=SESSIONS + 10)
            async with httpx.AsyncClient(timeout=600, limits=limits) as client:
                warm = [{"role": "user", "content": "Warm-up session: read every file."}]
                for step in range(2):  # the worker's first requests load tokenizers and code
                    await _step(client, url, -1, warm, step)
                done = [0]
                marks = [_cpu_seconds(proxy.pid)]

                async def session(n: int) -> None:
                    await asyncio.sleep(random.Random(n).uniform(0, MODEL_SECONDS))  # spread
                    history = [{"role": "user", "content": f"Session {n}: read every file."}]
                    for step in range(STEPS):
                        await _step(client, url, n, history, step)
                        done[0] += 1
                        if done[0] % SESSIONS == 0:  # about one more step of every session
                            marks.append(_cpu_seconds(proxy.pid))

                await asyncio.gather(*(session(n) for n in range(SESSIONS)))
                for a, b in itertools.pairwise(marks):
                    rounds.append({"cpu_ms": (b - a) * 1000 / SESSIONS})

        asyncio.run(run())
    finally:
        for proc in (proxy, upstream):
            proc.terminate()
            proc.wait(timeout=30)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    keep = os.environ.get("REGIO_BENCH_LOG")
    if keep:
        Path(keep).write_text(log.read_text())
    by_session: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_session.setdefault(line["session"], []).append(line)
    by_session = {k: v for k, v in by_session.items() if len(v) == STEPS}  # not the warm-up
    assert len(by_session) == SESSIONS
    tenth = max(1, STEPS // 10)
    full = (STEPS * 2) // 5  # 40% in: every session's window is full and has compacted
    phases = {  # a session's first request (it creates the session) is reported on its own
        "session start": range(0, 1),
        "first 10%": range(1, 1 + tenth),
        "window full": range(full, full + tenth),
        "last 10%": range(STEPS - tenth, STEPS),
    }
    table: dict[str, dict[str, float]] = {}
    for name, steps in phases.items():
        rows = [v[i] for v in by_session.values() for i in steps]
        plain = [r for r in rows if not r["compacted"]]
        # the process's CPU of a step less what its compactions took, over the others
        own = [
            (
                rounds[i]["cpu_ms"] * SESSIONS
                - sum(v[i]["added_cpu_ms"] for v in by_session.values() if v[i]["compacted"])
            )
            / max(1, sum(not v[i]["compacted"] for v in by_session.values()))
            for i in steps
        ]
        table[name] = {
            "process cpu ms/request": statistics.mean(rounds[i]["cpu_ms"] for i in steps),
            "process cpu, no compaction": statistics.mean(own),
            "proxy cpu ms p50": _percentile([r["added_cpu_ms"] for r in plain], 0.5),
            "added ms p50": _percentile([r["added_ms"] for r in rows], 0.5),
            "added ms p99": _percentile([r["added_ms"] for r in rows], 0.99),
            "added ms p50, no compaction": _percentile([r["added_ms"] for r in plain], 0.5),
            "added ms p99, no compaction": _percentile([r["added_ms"] for r in plain], 0.99),
            "share compacting": 1 - len(plain) / len(rows),
            "client tokens": statistics.mean(r["client_tokens"] for r in rows),
            "upstream tokens": statistics.mean(r["upstream_tokens"] for r in rows),
        }
    compactions = [[r for r in v if r["compacted"]] for v in by_session.values()]
    firsts = [c[0] for c in compactions if len(c) >= 2]
    lasts = [c[-1] for c in compactions if len(c) >= 2]
    print(f"\n{SESSIONS} sessions x {STEPS} steps, one worker")
    print(f"{'':28}" + "".join(f"{k:>14}" for k in phases) + f"{'last/first':>12}{'last/full':>11}")
    for key in table["first 10%"]:
        a, f, b = (table[p][key] for p in ("first 10%", "window full", "last 10%"))
        cells = "".join(f"{table[p][key]:14.2f}" for p in phases)
        ratios = f"{b / a if a else float('nan'):12.2f}{b / f if f else float('nan'):11.2f}"
        print(f"{key:28}{cells}{ratios}")
    print("compactions:", sum(line["compacted"] for line in lines), "of", len(lines), "requests")
    for label, group in (("first", firsts), ("last", lasts)):
        if not group:  # relief (clearing old results) kept every session under its trigger
            print(f"a session's {label} compaction: none (no session compacted twice)")
            continue
        print(
            f"a session's {label} compaction: proxy cpu p50 "
            f"{_percentile([r['added_cpu_ms'] for r in group], 0.5):.1f} ms, added p50 "
            f"{_percentile([r['added_ms'] for r in group], 0.5):.1f} ms, client tokens "
            f"{statistics.mean(r['client_tokens'] for r in group):.0f}"
        )
    print("process cpu ms/request per step:", [round(r["cpu_ms"], 1) for r in rounds])
    # asserted: the process's CPU per request, compactions taken out, does not grow from the first
    # 10% to the last (1k to 50k tokens of history); at the same window (full from 40% in) the
    # proxy's own CPU does not grow either; a compaction costs the same at the end as at the start.
    # Latency is printed, not asserted: on a shared machine it follows the load (docs/proxy.md).
    cpu = "process cpu, no compaction"
    assert table["last 10%"][cpu] / table["first 10%"][cpu] <= 1.5, table
    for key in (cpu, "proxy cpu ms p50"):
        assert table["last 10%"][key] / table["window full"][key] <= 1.5, (key, table)
    if firsts:
        first_c = _percentile([r["added_cpu_ms"] for r in firsts], 0.5)
        assert _percentile([r["added_cpu_ms"] for r in lasts], 0.5) / first_c <= 1.5
