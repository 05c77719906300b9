"""Per-turn cost of a session with an open background job.

A background job (one tool call) reports progress once a turn (``ToolResult(final=False)``)
while the agent keeps working: a user message, a tool call and its result, the job's newer
report and ``Engine.request`` — right after the report (the ordinary loop shape: the report is
the last message of every request), or after an assistant answer. The conversation compacts
(``compact`` eviction past 60 messages, 40 at a time).

Targets (ratios within one run, medians of many turns), in both shapes:

* per-request time with the job open <= 2x with the job closed, at turns 300-400 (the call's
  tool_result keeps its bytes; a newer report takes the older one's message out of the render
  log, which is not rebuilt from the job's call);
* per-request time with the job open at turns 300-400 <= 1.5x at turns 50-100 (the window
  compacts from turn ~20 on), and its growth from turns 10-20 to 300-400 <= 1.5x the closed
  job's (the job adds nothing that grows with the session).

Measured report-then-request (turns 10-20 / 50-100 / 300-400), before the fix: 1.37 / 2.48 /
2.62 ms with the job open against 0.70 ms closed at turns 300-400 (the render log re-repaired
from the job's call on every request); after: 0.73 / 0.80 / 0.87 ms open, 0.70 ms closed.

Run with ``pytest benchmarks/test_bench_progress.py -s`` (the figures are printed).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest

from regio.content import Message, ToolResult, ToolUse
from regio.regions.superseded import drop_superseded_progress
from regio.runtime import Engine

BLUEPRINT = """
version: 1
name: background
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000}
tokenizer: heuristic
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 400, seed: "You are careful."}
  - {name: history, kind: compact_history, source: conversation, budget: 1500}
  - name: conversation
    kind: sliding_window
    budget: 60000
    max_items: 60
    eviction: {strategy: compact, compact_count: 40}
"""


def _request_times(open_job: bool, turns: int, reply: bool = True) -> list[float]:
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("start the build in the background")
    engine.add_assistant("starting", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    if not open_job:
        engine.add_tool_result("bg", "build finished")
    times = []
    for i in range(1, turns + 1):
        engine.add_user(f"question {i} " + "word " * 10)
        engine.add_assistant(f"look {i}", [ToolUse(f"c{i}", "ls", {"i": i})])
        engine.add_tool_result(f"c{i}", f"files {i} " * 5)
        if open_job:
            engine.add_tool_result("bg", f"status: running, {i}% done", final=False)
        if reply:
            engine.add_assistant(f"so {i}")
        start = time.perf_counter()
        engine.request()
        times.append(time.perf_counter() - start)
    return times


@pytest.mark.parametrize("reply", [False, True], ids=["report-then-request", "reply-between"])
def test_an_open_background_job_costs_within_2x_of_a_closed_one_per_request(reply: bool) -> None:
    opened = _request_times(True, 400, reply)
    closed = _request_times(False, 400, reply)

    def medians(times: list[float]) -> tuple[float, float, float]:
        return tuple(statistics.median(times[a:b]) for a, b in ((10, 20), (50, 100), (300, 400)))  # type: ignore[return-value]

    o10, o50, o300 = medians(opened)
    c10, c50, c300 = medians(closed)
    print(
        f"\nper request, open job: {o10 * 1e3:.2f} / {o50 * 1e3:.2f} / {o300 * 1e3:.2f} ms "
        f"(turns 10-20 / 50-100 / 300-400); closed: {c10 * 1e3:.2f} / {c50 * 1e3:.2f} / "
        f"{c300 * 1e3:.2f} ms"
    )
    assert o300 / c300 <= 2.0
    assert o300 / o50 <= 1.5  # flat once the window compacts
    assert (o300 / o10) <= 1.5 * (c300 / c10)  # the job adds no growth with the session


def _window_with(entries: int) -> tuple[Any, Any]:
    engine = Engine.from_blueprint(
        BLUEPRINT.replace("budget: 60000", "budget: 150000").replace("60", str(entries * 2))
    )
    engine.add_user("start")
    engine.add_assistant("", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "running", final=False)
    for i in range(entries // 2):
        engine.add_assistant("", [ToolUse(f"c{i}", "ls", {})])
        engine.add_tool_result(f"c{i}", "ok")
    return engine.window, engine.window.conversation


def _drop_time(entries: int) -> float:
    window, conv = _window_with(entries)
    index = window.progress_index(conv)
    entry = window.make_entry(Message.tool([ToolResult("c0", "again")]).blocks, tokens=2)
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(200):
            drop_superseded_progress(conv, entry, None, index)
        runs.append((time.perf_counter() - start) / 200)
    return statistics.median(runs)


def test_superseding_nothing_costs_the_same_in_a_large_window() -> None:
    small, large = _drop_time(200), _drop_time(2000)
    print(f"\nsupersede check: {small * 1e6:.1f} us (200 entries), {large * 1e6:.1f} us (2,000)")
    assert large / small <= 1.5
