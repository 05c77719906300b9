"""What a cleared result's salient extract costs (:func:`regio.compaction.relief._extract.
salient_extract`), against reading every line for error patterns.

A relief step clears a batch of old tool results at once (about 20 in the proxy benchmark's
sessions, once in about 20 requests), and each placeholder's extract reads its result: the
error patterns (:data:`regio.summarizers.kinds.ERROR`, case-insensitive, and ``TOOL_ERROR``)
searched in every line were most of that cost. Now the text is checked once for what every
error match contains, and lines are searched only when it holds it.

Target (ratio within one run, medians of 7 runs of 50 extracts each): on tool output without
an error word (the proxy benchmark's tool results, 3 kB, and a source file), the extract costs
at most 0.75x the line-by-line reading; on output with one, at most 1.1x (the check is extra
work there). Measured 2026-12-05 on the shared 2-core machine (another benchmark running):
the 3 kB benchmark result 0.74 -> 0.41 ms (0.55x), the source file 1.17 -> 0.86 ms (0.73x),
the failing output 1.62 -> 1.32 ms (0.81x).

Run with ``pytest benchmarks/test_bench_placeholder_extract.py -s``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regio.compaction.relief import _extract
from regio.tokens import TiktokenCounter
from test_relief_extract_error_words import _items_line_by_line

_BENCH_RESULT = "\n".join(
    f"s3 step 30 line {j}: value = compute({j})  # {'x' * 60}" for j in range(37)
)
_SOURCE = "\n".join(
    f"def handler_{j}(request, config_{j % 7}):\n    return render(request, 'page_{j}.html')"
    for j in range(40)
)
_FAILING = _SOURCE + "\nE   AssertionError: expected 3, got 4\nFAILED tests/test_app.py::test_x"


def _median_ms(fn: Callable[[], object], runs: int = 7, n: int = 50) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - start) / n * 1000)
    return statistics.median(times)


def test_the_extract_skips_the_line_by_line_error_search_on_ordinary_output(monkeypatch):
    count = TiktokenCounter("o200k_base").count
    figures = {}
    for name, text in (("bench", _BENCH_RESULT), ("source", _SOURCE), ("failing", _FAILING)):
        now = _median_ms(lambda t=text: _extract.salient_extract(t, 200, count))
        with monkeypatch.context() as m:  # the line-by-line reading, for the same extract
            m.setattr(_extract, "_items", _items_line_by_line)
            before = _median_ms(lambda t=text: _extract.salient_extract(t, 200, count))
        figures[name] = (before, now, now / before)
        print(f"{name:8} line by line {before:.3f} ms, now {now:.3f} ms ({now / before:.2f}x)")
    assert figures["bench"][2] <= 0.75 and figures["source"][2] <= 0.75, figures
    assert figures["failing"][2] <= 1.1, figures
    assert _extract._items(_FAILING)[0] == "E   AssertionError: expected 3, got 4"  # error path
