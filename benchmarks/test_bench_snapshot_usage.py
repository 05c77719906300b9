"""A snapshot after a lazy load costs what the window needs, not the session's usage records.

``Engine.snapshot`` reports ``UsageLedger.totals()``. A session of a few turns (a system prompt
and a conversation; each turn a user message, a tool call and its result, a request and its
usage) followed by calls observed up to 100 and to 4,000 usage records is saved to SQLite;
each round loads it (``Engine.load_from``, untimed setup) and times the first
``Engine.snapshot`` (pytest-benchmark, 15 rounds each). The store saves the usage totals with
the session's head, so the snapshot reads no stored usage record; before, its first
``totals()`` read all of them (one SQLite query) and decoded each.

Asserted: the snapshot reads no usage record (the store's ``usage_records`` is never called),
and its time with 4,000 records <= 3x its time with 100 (within the run). Printed: both
times and the ratio. Run with ``pytest benchmarks/test_bench_snapshot_usage.py
--benchmark-enable -s``. Measured on a shared 2-core machine (2026-12-01, medians of 15
rounds, three runs): 0.24-0.40 ms with 100 usage records and 0.21-0.31 ms with 4,000 (ratio
0.74-0.89); before (regio main of 2026-12-01, two runs) 0.45 and 0.55 ms with 100, 27.0 and
36.2 ms with 4,000 (ratio 61 and 66).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regio.content import ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import StubCounter, make_engine

RECORDS = (100, 4_000)
_TURNS = 20
_TIMES: dict[int, float] = {}


def _session(db: SQLiteStore, records: int) -> None:
    regions = [
        Pinned(name="system", budget=2_000),
        SlidingWindow(name="conversation", budget=8_000),
    ]
    engine = make_engine(regions, max_tokens=12_000, session_id=f"usage-{records}")
    for turn in range(_TURNS):
        engine.add_user(f"turn {turn} " + " ".join(f"u{turn}w{i}" for i in range(40)))
        engine.add_assistant("ok", [ToolUse(id=f"c{turn}", name="read", input={"n": turn})])
        engine.add_tool_result(f"c{turn}", " ".join(f"r{turn}w{i}" for i in range(80)))
        engine.request()
        engine.observe({"input_tokens": engine.state.last_estimate, "output_tokens": 5})
        engine.save_to(db)
    for n in range(records - _TURNS):  # the rest of a long session's calls
        engine.observe(
            {"input_tokens": 1_000 + n, "cache_read_input_tokens": n, "output_tokens": 9}
        )
    engine.save_to(db)


@pytest.fixture(scope="module")
def store(tmp_path_factory: Any) -> Any:
    db = SQLiteStore(tmp_path_factory.mktemp("snapshot") / "sessions.db")
    for records in RECORDS:
        _session(db, records)
    yield db
    db.close()


@pytest.mark.parametrize("records", RECORDS)
def test_bench_snapshot_after_a_lazy_load(benchmark: Any, store: Any, records: int) -> None:
    reads: list[int] = []
    usage_records = store.usage_records
    store.usage_records = lambda sid, count: reads.append(count) or usage_records(sid, count)

    def loaded() -> tuple[tuple[Engine], dict[str, Any]]:
        engine = Engine.load_from(store, f"usage-{records}", token_counter=StubCounter())
        return (engine,), {}

    try:
        snap = benchmark.pedantic(Engine.snapshot, setup=loaded, rounds=15, warmup_rounds=2)
    finally:
        del store.usage_records
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        _TIMES[records] = statistics.median(stats.stats.data)
    assert snap.usage.calls == records
    assert reads == []  # the totals came with the head


def test_bench_snapshot_time_does_not_grow_with_the_usage_records() -> None:
    if len(_TIMES) < len(RECORDS):
        pytest.skip("benchmarks disabled")
    short, long = (_TIMES[n] for n in RECORDS)
    print(
        f"\nsnapshot after a load: {short * 1e3:.2f} ms with {RECORDS[0]} usage records, "
        f"{long * 1e3:.2f} ms with {RECORDS[1]} (ratio {long / short:.2f})"
    )
    assert long <= 3 * short
