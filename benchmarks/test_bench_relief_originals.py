"""The first summary after a load costs what its batch needs, not the session's history.

A session under relief (``clear`` then summarization of the conversation; each step an
assistant call and a 150-word result, then a request) is saved to a JSON state file after 100
and after 2,000 steps and loaded; the loaded session then plays steps until its first summary.
That summary covers results the chain cleared, so the summarizer's input gives them back their
originals (:func:`regio.compaction.relief._originals.with_originals`). The request that runs it is
timed
(median of 7 loads).

Asserted as a ratio within the run: first summary after a load at 2,000 steps <= 2x the one at
100 steps (the history is 20x longer). Printed: both times and the ratio. Run with
``pytest benchmarks/test_bench_relief_originals.py -s``. Measured on a shared 2-core machine
(other runs busy beside it): 27.8 ms at 100 steps and 23.3 ms at 2,000 (ratio 0.84); before the
originals were read by entry and turn (regio main of 2026-12-01: the first lookup decoded the
whole stored transcript) 31.3 ms and 93.9 ms (ratio 3.0) in the same conditions.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regio.content import ToolUse
from regio.engine import Engine
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words

STEPS = (100, 2_000)
ROUNDS = 7


def _engine() -> Engine:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=4000,
                eviction=Compact(compact_count=500, trigger=1000, target=400),
            ),
        ],
        max_tokens=6000,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=ReliefPolicy(clear_at_least=10, trim_at_least=10, keep_last=1),
    )


def _step(engine: Engine, i: int) -> float:
    """One step; returns the seconds of its request."""
    call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
    engine.add_assistant(f"step {i}", [call])
    engine.add_tool_result(call.id, words(150, f"t{i}x"))
    start = time.perf_counter()
    engine.request()
    return time.perf_counter() - start


def _first_summary_after_load(path: Path, steps: int) -> float:
    """Load ``path`` and play steps until the first summary; the seconds of that request."""
    summarizer = StubSummarizer(size=8, distinct=True)
    loaded = Engine.load(path, token_counter=StubCounter(), summarizer=summarizer)
    for i in range(steps, steps + 200):
        took = _step(loaded, i)
        if summarizer.inputs:
            assert not loaded.transcript_log.decoded
            return took
    raise AssertionError("the loaded session never summarized")


def _median_time(folder: Path, steps: int) -> float:
    engine = _engine()
    engine.add_user("fix the bug")
    for i in range(steps):
        _step(engine, i)
    path = engine.save(folder / f"s{steps}.json")
    _first_summary_after_load(path, steps)  # warm-up
    return statistics.median(_first_summary_after_load(path, steps) for _ in range(ROUNDS))


def test_the_first_summary_after_a_load_follows_its_batch_not_the_history(tmp_path: Any) -> None:
    short, long = (_median_time(tmp_path, n) for n in STEPS)
    print(
        f"\nfirst summary after a load: {STEPS[0]} steps {short * 1e3:.2f} ms, "
        f"{STEPS[1]} steps {long * 1e3:.2f} ms, ratio {long / short:.2f}"
    )
    assert long / short <= 2.0
