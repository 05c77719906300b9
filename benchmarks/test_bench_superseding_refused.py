"""What a refused superseding progress report costs.

A running job's newer report that does not fit is planned again as if the earlier report it
supersedes were dropped (``regio.regions.superseded.admit_superseding``). The case: the
job's call and first report are the oldest entries of a conversation of 200 or 2,000
entries, and the newer report is too large for the window even in place of the old one (the
window is full: ``window_full``), so it is refused, again and again, on an unchanged window.

Targets (ratios within one run, medians of many refused reports):

* a refused report at 2,000 entries costs <= 1.5x one at 200 (the dry run looks up the
  earlier report and plans on a copy of the one region's entry list; it copies no window);
* a refused superseding report costs <= 4x a refused plain write of the same size into the
  same window (a result for a call with no earlier report).

Measured (``-s``, medians; one shared 2-core machine), before (the drop played on a copy of
the whole window, ``Window.from_state``, and every refusal analysing the region's units):
4.7 ms (200 entries) and 77 ms (2,000) per refused report (x16), 42-98 ms for the plain
refused write at 2,000. After: 0.057 ms and 0.069 ms (x1.2), 0.025-0.049 ms for the plain
one (the unit analysis is reused while the entries are unchanged; the first refusal after a
change still analyses the region once, O(entries), to list what can be released).

Not flat, and not a target here: a report refused because the conversation itself is full
(``region_full``: only protected units left) costs a unit analysis of the region
(O(entries)) for the plain write and one more for the dry run: measured before, 9.1 / 102 ms
(200 / 2,000 entries); after, 8.2 / 101 ms, against 4.3 / 49 ms for a plain refused write.

Run with ``pytest benchmarks/test_bench_superseding_refused.py -s --benchmark-enable`` (the
figures are printed; pytest-benchmark adds its table).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from regio.content import Message, ToolResult, ToolUse
from regio.regions import Refusal, SlidingWindow, Window

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from regions_support import StubCounter


def _window(entries: int) -> Window:
    """A window of 10,000 tokens whose conversation (budget 10**7, so the window is what is
    full) holds a running job (its call and a 500-token report, the oldest entries) and
    ``entries`` entries in all (StubCounter: ``[N]`` declares N tokens)."""
    w = Window(
        regions=[SlidingWindow(name="conv", budget=10**7)], max_tokens=10_000, counter=StubCounter()
    )
    w.add_message(Message.user("go [1]"))
    w.add_message(Message.assistant("", (ToolUse("job", "build", {}),)))
    w.add_message(Message.tool((ToolResult("job", "running [500]", final=False),)))
    for i in range((entries - 3) // 2):
        w.add_message(Message.user(f"question {i} [1]"))
        w.add_message(Message.assistant(f"answer {i} [1]"))
    return w


def _report(call: str) -> Message:
    return Message.tool((ToolResult(call, "running later [10000]", final=False),))


def _refused_time(entries: int, call: str = "job") -> float:
    w = _window(entries)
    message = _report(call)
    assert isinstance(w.add_message(message), Refusal)  # the first also analyses the region
    runs = []
    for _ in range(300):
        start = time.perf_counter()
        result = w.add_message(message)
        runs.append(time.perf_counter() - start)
        assert isinstance(result, Refusal) and result.reason == "window_full"
    return statistics.median(runs)


def test_a_refused_superseding_report_costs_the_same_in_a_large_window() -> None:
    small, large = _refused_time(200), _refused_time(2000)
    plain = _refused_time(2000, call="other")
    print(
        f"\nrefused superseding report: {small * 1e6:.1f} us (200 entries), "
        f"{large * 1e6:.1f} us (2,000); plain refused write {plain * 1e6:.1f} us (2,000)"
    )
    assert large / small <= 1.5
    assert large / plain <= 4


@pytest.mark.parametrize("entries", [200, 2000])
def test_bench_refused_superseding_report(benchmark: Any, entries: int) -> None:
    w = _window(entries)
    message = _report("job")
    w.add_message(message)
    result = benchmark(w.add_message, message)
    assert isinstance(result, Refusal)
