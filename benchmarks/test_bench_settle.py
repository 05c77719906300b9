"""What settling a queued compaction costs per write.

While a ``compact`` item is queued, ``settle_marks`` runs after every write of the
conversation region. A write without a tool result cannot change the queued units, so it
skips the unit analysis. Measured: before, 18.6 ms (200 entries) and 99 ms (2,000) per
settle, a full ``analyze()``; after, 2.9 us and 2.7 us.

Target (ratio within one run, medians): settling after a plain write costs the same with
2,000 entries as with 200: ratio <= 1.5.

Run with ``pytest benchmarks/test_bench_settle.py -s`` (the figures are printed).
"""

from __future__ import annotations

import statistics
import time

from regio.content import Entry, Message, Text, ToolUse
from regio.regions import CompactHistory, SlidingWindow, Window
from regio.regions.settle import settle_marks
from regio.tokens import get_counter


def _settle_time(entries: int) -> float:
    w = Window(
        regions=[
            SlidingWindow(
                name="conv",
                budget=10**7,
                max_items=entries - 10,
                eviction={"compact": {"compact_count": 5}},
            ),
            CompactHistory(name="hist", budget=2000, source="conv"),
        ],
        max_tokens=2 * 10**7,
        counter=get_counter("heuristic"),
    )
    w.add_message(Message.assistant("start", [ToolUse("bg", "build", {})]))
    for i in range(entries):
        w.add_message(Message.user(f"question {i}"))
    assert w.pending_compactions()
    conv = w.region("conv")
    assert len(conv.entries) > entries  # nothing rolled off yet
    settle_marks(conv)
    runs = []
    for k in range(300):
        conv.entries.append(Entry(id=f"x{k}", blocks=(Text(f"more {k}"),), role="user", tokens=3))
        start = time.perf_counter()
        settle_marks(conv)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def test_settling_after_a_plain_write_costs_the_same_in_a_large_window() -> None:
    small, large = _settle_time(200), _settle_time(2000)
    print(f"\nsettle after a plain write: {small * 1e6:.1f} us (200), {large * 1e6:.1f} us (2,000)")
    assert large / small <= 1.5
