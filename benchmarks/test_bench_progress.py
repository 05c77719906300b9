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

Two more shapes (``_shape_times``; the render log reset only when the window compacts, as
often as with the job closed, and the growth target): the report in the same tool message as
the turn's call's final result, and a report between two user texts (every other turn).
Measured over 400 turns (resets open / closed; ms per request at turns 300-400, open /
closed), before the fix (the log reset at every superseded report): 399 / 38 and 2.16 / 0.69
ms beside a result, 234 / 68 and 3.63 / 1.30 ms between user texts; after: 38 / 38 and 0.78 /
0.69 ms, 68 / 68 and 1.04 / 0.88 ms.

Run with ``pytest benchmarks/test_bench_progress.py -s`` (the figures are printed).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from progress_support import conversation_blueprint
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.regions.superseded import drop_superseded_progress

BLUEPRINT = conversation_blueprint("background", 60000, items=60, compact_count=40)


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


def _shape_times(shape: str, open_job: bool, turns: int) -> tuple[int, list[float]]:
    """The render log's resets and the time per request (the mean of a turn's requests) of a
    session in ``shape``, an assistant answer after the last request of every turn:

    * ``beside-a-result``: a request after the user's message (the model calls a tool), the
      call's final result and the job's report in one tool message
      (``[tool_result(c_i), tool_result(bg, final=False)]``, the parallel-results shape of a
      loop polling a job) and a request; the window rewrites that entry without the report
      when the next one arrives, after the log took it in;
    * ``between-user-texts``: a call answered, an assistant text, a user text, the job's
      report (every other turn) and another user text, then one request; the report's
      removal makes the two user texts one message."""
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("start the build in the background")
    engine.add_assistant("starting", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    if not open_job:
        engine.add_tool_result("bg", "build finished")

    def timed() -> float:
        start = time.perf_counter()
        engine.request()
        return time.perf_counter() - start

    times = []
    for i in range(1, turns + 1):
        engine.add_user(f"question {i} " + "word " * 10)
        spent = [timed()] if shape == "beside-a-result" else []
        engine.add_assistant(f"look {i}", [ToolUse(f"c{i}", "ls", {"i": i})])
        report = ToolResult("bg", f"status: running, {i}% done", final=False)
        if shape == "beside-a-result":
            results = (ToolResult(f"c{i}", f"files {i} " * 5), *((report,) if open_job else ()))
            engine.add_message(Message("user", results))
        else:
            engine.add_tool_result(f"c{i}", f"files {i} " * 5)
            engine.add_assistant(f"so {i}")
            engine.add_user(f"and then {i}")
            if open_job and i % 2:
                engine.add_message(Message.tool([report]))
            engine.add_user(f"also {i}")
        spent.append(timed())
        times.append(sum(spent) / len(spent))
        engine.add_assistant(f"noted {i}")
    return engine.render_log.resets, times


@pytest.mark.parametrize("shape", ["beside-a-result", "between-user-texts"])
def test_a_report_beside_a_result_or_between_user_texts_keeps_the_request_cost_flat(
    shape: str,
) -> None:
    """The render log is reset only when the window compacts (as often as with the job
    closed), and the per-request time grows from turns 10-20 to 300-400 as it does with the
    job closed (within 1.5x)."""
    rounds = [(_shape_times(shape, True, 400), _shape_times(shape, False, 400)) for _ in range(3)]
    (opened, _), (closed, _) = rounds[0]

    def fastest(k: int, a: int, b: int) -> float:  # of 3 runs, interleaved (a shared machine)
        return min(statistics.median(r[k][1][a:b]) for r in rounds)

    o10, o300, c10, c300 = (fastest(k, a, b) for k in (0, 1) for a, b in ((10, 50), (300, 400)))
    print(
        f"\n{shape}: resets {opened} open / {closed} closed; per request, open job: "
        f"{o10 * 1e3:.2f} / {o300 * 1e3:.2f} ms (turns 10-50 / 300-400), closed: "
        f"{c10 * 1e3:.2f} / {c300 * 1e3:.2f} ms"
    )
    assert opened == closed  # no reset for the reports
    assert o300 / c300 <= 2.0
    assert o300 / o10 <= 1.5 * (c300 / c10)


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
