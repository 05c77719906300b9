"""Admitting a tool result under per-tool relief rules (``relief.tools``) costs the same in a
large window as in a small one: the result's call is found through the window's call index
(``Window.tool_call``), not by scanning the conversation backwards for it.

The case is a background job's progress report (its call is the oldest in the window, the
worst case for a backwards scan) arriving while the conversation holds 400 or 4,000 entries.

Targets (ratios within one run): admission at 4,000 entries <= 1.5x at 400.

Run with ``pytest benchmarks/test_bench_relief_admit.py -s --benchmark-enable`` (the figures
are printed; pytest-benchmark adds its table).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from regio.compaction.relief import _admit as reliefadmit
from regio.content import Message, ToolResult, ToolUse
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.regions import Pinned, SlidingWindow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from runtime_stubs import make_engine


def _engine_with(entries: int) -> Any:
    engine = make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            SlidingWindow(name="conversation", budget=10**8),
        ],
        max_tokens=2 * 10**8,
        relief=ReliefPolicy(tools={"cat": ToolRelief(max_result_tokens=500)}),
    )
    engine.add_user("go")
    engine.add_assistant("", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "running", final=False)
    for i in range((entries - 3) // 2):
        engine.add_assistant("x", [ToolUse(f"c{i}", "ls", {})])
        engine.add_tool_result(f"c{i}", "ok")
    return engine


REPORT = Message.tool([ToolResult("bg", "running, 50% done", final=False)])


def _admit_time(entries: int) -> float:
    engine = _engine_with(entries)
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(200):
            reliefadmit.admit(engine.session, REPORT, None)
        runs.append((time.perf_counter() - start) / 200)
    return statistics.median(runs)


def test_admitting_a_progress_report_costs_the_same_in_a_large_window() -> None:
    small, large = _admit_time(400), _admit_time(4000)
    print(f"\nadmit a report: {small * 1e6:.1f} us (400 entries), {large * 1e6:.1f} us (4,000)")
    assert large / small <= 1.5


@pytest.mark.parametrize("entries", [400, 4000])
def test_bench_admit_progress_report(benchmark: Any, entries: int) -> None:
    engine = _engine_with(entries)
    admission = benchmark(reliefadmit.admit, engine.session, REPORT, None)
    assert admission.message == REPORT  # no rule for the job's tool: admitted as is
