"""``context_restore`` costs the same in a large conversation as in a small one: the original
comes from the transcript's index, whether the result is still live from the window's call
index and the entries back to the result's turn, never a scan of the whole conversation.

The case is the agent asking for the newest result (in the conversation unchanged: the answer
says so) while the conversation holds 400 or 4,000 entries.

Target (a ratio within one run, each the fastest of 9 runs of 1,000 calls): restore at 4,000
entries <= 1.5x at 400. Run with
``pytest benchmarks/test_bench_relief_restore.py -s`` (the figures are printed). Measured on a
shared 2-core machine (other runs busy beside it): 3.2 us (400 entries) and 3.1 us (4,000),
ratio 0.97; before (regio main of 2026-12-01: the conversation scanned per call, every tool
schema built to know whether ``context_restore`` is offered) 133 us and 1,802 us, ratio 13.6.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from regio.content import ToolUse
from regio.policies.relief import ReliefPolicy
from regio.regions import Pinned, SlidingWindow
from regio.runtime import relief

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from runtime_stubs import make_engine


def _engine_with(entries: int) -> Any:
    engine = make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            SlidingWindow(name="conversation", budget=10**8),
        ],
        max_tokens=2 * 10**8,
        relief=ReliefPolicy(),
    )
    engine.add_user("go")
    for i in range((entries - 1) // 2):
        engine.add_assistant("x", [ToolUse(f"c{i}", "ls", {})])
        engine.add_tool_result(f"c{i}", f"ok {i}")
    return engine, f"c{(entries - 1) // 2 - 1}"


def _restore_time(entries: int) -> float:
    engine, newest = _engine_with(entries)
    text, ok = relief.restore(engine.compactor, newest)
    assert not ok and "unchanged" in text
    runs = []
    for _ in range(9):
        start = time.perf_counter()
        for _ in range(1000):
            relief.restore(engine.compactor, newest)
        runs.append((time.perf_counter() - start) / 1000)
    return min(runs)  # the least disturbed run: the machine is shared


def test_restore_costs_the_same_in_a_large_conversation() -> None:
    small, large = _restore_time(400), _restore_time(4000)
    print(f"\nrestore: {small * 1e6:.1f} us (400 entries), {large * 1e6:.1f} us (4,000)")
    assert large / small <= 1.5
