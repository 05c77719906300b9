"""The SQLite session store at scale: 1,000 sessions x 100 turns in one file.

Measured and printed (run ``pytest benchmarks/test_bench_store.py -s``; ``REGIO_BENCH_SESSIONS``
overrides the session count):

* bytes written per save at turn 10 and turn 100, split into the appended records (the new
  turn: user message, assistant tool_use, tool_result, one usage record), the window entries
  put and dropped (keyed records: the new turn's entries in, the evicted ones out, and the
  last request's new blocks) and the head (the state without its window entries and request
  blocks: a few kB);
* load time per session (mean over all sessions, seconds) and the file size.

Asserted as ratios within the run: the total bytes of a save at turn 100 (window full, 10x the
transcript of turn 10) are within 1.5x of those at turn 10 (a save's cost follows the turn,
not the window or the session), and so are the appended records; the head (it indexes the
window's blocks) at turn 100 is within 1.5x of the head at turn 50, when the window is
already full.

And one long session (``store_support.HistorySession``: a summary history that fills over the
first ~1,000 turns) saved every turn around turns 100, 1,000 and 10,000: the bytes per save
(every byte) at turns 1,000 and 10,000 are asserted within 1.15x of turn 100; the time per
save (encoding and the SQLite transaction, median of 20) is printed at the three turns.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regio.content import ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore, encode_save
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import StubCounter, make_engine
from store_support import HistorySession

SESSIONS = int(os.environ.get("REGIO_BENCH_SESSIONS", "1000"))
TURNS = 100


def _engine(sid: str) -> Engine:
    return make_engine(
        [
            Pinned(name="system", budget=2_000),
            SlidingWindow(name="conversation", budget=8_000),
        ],
        max_tokens=12_000,
        session_id=sid,
    )


def _turn(engine: Engine, turn: int) -> None:
    engine.add_user(f"turn {turn} " + " ".join(f"u{turn}w{i}" for i in range(60)))
    engine.add_assistant("ok", [ToolUse(id=f"c{turn}", name="read", input={"path": f"f{turn}"})])
    engine.add_tool_result(f"c{turn}", " ".join(f"r{turn}w{i}" for i in range(150)))
    engine.request()  # the last request is part of the saved state too
    engine.observe({"input_tokens": 100 * turn, "output_tokens": 5})


def test_sqlite_store_saves_follow_the_turn_not_the_session(tmp_path: Any) -> None:
    db = SQLiteStore(tmp_path / "bench.db")
    sizes: dict[int, list[tuple[int, int, int]]] = {10: [], 50: [], 100: []}
    start = time.perf_counter()
    for s in range(SESSIONS):
        engine = _engine(f"session-{s:04d}")
        for turn in range(1, TURNS + 1):
            _turn(engine, turn)
            if turn in sizes:
                rec = encode_save(engine, engine.store_mark)
                appended = sum(map(len, rec.transcript)) + sum(map(len, rec.ledger))
                sizes[turn].append((appended, rec.size - appended - len(rec.head), len(rec.head)))
            engine.save_to(db)
    save_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for s in range(SESSIONS):
        Engine.load_from(db, f"session-{s:04d}", token_counter=StubCounter())
    load_seconds = (time.perf_counter() - start) / SESSIONS
    db.close()
    mean = {t: tuple(statistics.mean(x[i] for x in v) for i in range(3)) for t, v in sizes.items()}
    file_bytes = sum(p.stat().st_size for p in tmp_path.iterdir())
    print(
        f"\nSQLite store, {SESSIONS} sessions x {TURNS} turns "
        f"({SESSIONS * TURNS} saves in {save_seconds:.1f} s, "
        f"{1000 * save_seconds / (SESSIONS * TURNS):.2f} ms per turn incl. the engine)"
    )
    for turn, (records, entries, head) in mean.items():
        print(
            f"  save at turn {turn:3d}: {records + entries + head:7.0f} B = {records:6.0f} B "
            f"appended records + {entries:6.0f} B window entries + {head:6.0f} B head"
        )
    print(f"  load: {1000 * load_seconds:.2f} ms per session; file {file_bytes / 1e6:.1f} MB")
    total = {t: sum(m) for t, m in mean.items()}
    assert total[100] <= 1.5 * total[10]
    assert mean[100][0] <= 1.5 * mean[10][0]
    assert mean[100][2] <= 1.5 * mean[50][2]


def _saves(session: HistorySession, db: SQLiteStore, start: int) -> tuple[float, float]:
    """Mean bytes written per save (every byte of :class:`regio.persistence.store.SessionRecords`)
    and median seconds per save (encoding and the SQLite transaction) over 20 saves, one per turn
    from ``start`` (20 turns: one compaction cycle of the conversation)."""
    session.advance_to(start - 1)
    session.engine.save_to(db, "h")
    sizes, times = [], []
    for turn in range(start, start + 20):
        session.advance_to(turn)
        sizes.append(encode_save(session.engine, session.engine.store_mark).size)
        t0 = time.perf_counter()
        session.engine.save_to(db, "h")
        times.append(time.perf_counter() - t0)
    return statistics.mean(sizes), statistics.median(times)


def test_bytes_per_save_are_flat_in_the_session_length(tmp_path: Any) -> None:
    """One long session (the summary history fills over the first ~1,000 turns, then the
    window stays the same size), saved every turn around turns 100, 1,000 and 10,000: bytes
    per save at turn 1,000 and 10,000 within 1.15x of turn 100; time per save printed."""
    db = SQLiteStore(tmp_path / "long.db")
    session = HistorySession()
    at = {turn: _saves(session, db, turn) for turn in (100, 1_000, 10_000)}
    db.close()
    print("\nSQLite store, one session saved every turn (mean of 20 saves):")
    for turn, (size, seconds) in at.items():
        print(f"  turn {turn:6,d}: {size:7.0f} B per save, {1e3 * seconds:.2f} ms per save")
    print(
        f"  bytes ratio turn 1,000 / 100: {at[1_000][0] / at[100][0]:.2f}, "
        f"10,000 / 1,000: {at[10_000][0] / at[1_000][0]:.2f}; time ratio 1,000 / 100: "
        f"{at[1_000][1] / at[100][1]:.2f}, 10,000 / 1,000: {at[10_000][1] / at[1_000][1]:.2f}"
    )
    assert at[1_000][0] <= 1.15 * at[100][0]
    assert at[10_000][0] <= 1.15 * at[100][0]
