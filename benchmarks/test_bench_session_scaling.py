"""Per-turn time and retained memory of long sessions, and of many sessions in one process.

A turn is what an agent does per model call, through :class:`regio.engine.Engine` (``regio``
layout, Anthropic payload): a user message, a state write, an assistant tool call and its
result, ``Engine.request`` and the assistant's answer. The conversation compacts (``compact``
eviction past 60 messages), so the window stays bounded while the session goes on.

Targets (ratios within one run, medians of many turns):

* per-turn time at turn 10,000 / at turn 100 <= 1.5 (one session);
* per-turn time with 100 engines interleaved in one process <= 1.5x one engine's;
* memory retained per session at 10,000 turns <= 1.2x at 1,000 turns (tracemalloc), not
  counting the transcript kept for persistence (which grows with the turns by design); both
  figures are printed. The window's index of tool calls (``Window.call_groups``) keeps only
  the calls whose entries are still in the window, and the token counter's LRU of counts is
  sized by the window (``regio.tokens.DEFAULT_CACHE_SIZE``), so neither grows with the turns.

Run with ``pytest benchmarks/test_bench_session_scaling.py -s`` (minutes: it plays 10,000
turns twice).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regio.session._transcript import Transcript
from store_support import HistorySession


class Session(HistorySession):
    """One synthetic agent session (see the module docstring; the turn is
    :meth:`store_support.HistorySession.advance_to`'s, shared with the store tests)."""

    def turn(self) -> None:
        self.advance_to(self.turns + 1)


def _median_turn(sessions: list[Session], rounds: int) -> float:
    """Median seconds per turn over ``rounds`` rounds of one turn per session (interleaved)."""
    times = []
    for _ in range(rounds):
        for s in sessions:
            start = time.perf_counter()
            s.turn()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def test_per_turn_time_at_turn_10000_is_within_1_5x_of_turn_100() -> None:
    early, late = Session(), Session()
    early.advance_to(100)
    t100 = _median_turn([early], 200)
    late.advance_to(10_000)
    t10k = _median_turn([late], 200)
    print(
        f"\nper-turn time: turn 100 {t100 * 1e3:.3f} ms, turn 10,000 {t10k * 1e3:.3f} ms, "
        f"ratio {t10k / t100:.2f}"
    )
    assert t10k / t100 <= 1.5


def test_100_interleaved_engines_cost_within_1_5x_of_one_per_turn() -> None:
    one = Session()
    one.advance_to(300)
    many = [Session() for _ in range(100)]
    for n in range(1, 301):  # advance them interleaved, as an agent server does
        for s in many:
            s.advance_to(n)
    # five back-to-back pairs of measurements; the median pair ratio is robust to a pair
    # disturbed by other processes on a shared machine
    pairs = [(_median_turn([one], 100), _median_turn(many, 1)) for _ in range(5)]
    ratios = sorted(m / o for o, m in pairs)
    t_one, t_many = statistics.median(o for o, _ in pairs), statistics.median(m for _, m in pairs)
    print(
        f"\nper-turn time at turn 300: one engine {t_one * 1e3:.3f} ms, 100 interleaved "
        f"{t_many * 1e3:.3f} ms; pair ratios {', '.join(f'{r:.2f}' for r in ratios)}"
    )
    assert ratios[2] <= 1.5


def _retained(turns: int) -> tuple[int, int]:
    """Bytes retained by one session after ``turns`` turns: in total and without its
    transcript (kept for persistence, it grows with the turns by design); each measured by
    dropping the part and collecting."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    s = Session()
    s.advance_to(turns)
    gc.collect()
    total = tracemalloc.get_traced_memory()[0] - base
    s.engine.session.transcript = Transcript()
    gc.collect()
    without = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return total, without


def test_memory_retained_at_10000_turns_is_within_1_2x_of_1000_turns() -> None:
    total_1k, window_1k = _retained(1_000)
    total_10k, window_10k = _retained(10_000)
    mib = 2**20
    print(
        f"\nretained per session: 1,000 turns {total_1k / mib:.2f} MiB "
        f"({window_1k / mib:.2f} without the transcript), 10,000 turns "
        f"{total_10k / mib:.2f} MiB ({window_10k / mib:.2f}); ratios: with the transcript "
        f"{total_10k / total_1k:.2f}, without {window_10k / window_1k:.2f}"
    )
    assert window_10k / window_1k <= 1.2
