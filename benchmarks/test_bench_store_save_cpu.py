"""A session store save costs CPU for the turn, not for the session, under relief too.

A session whose window is full after a few turns (a system prompt and a 2,000-token
conversation that evicts its oldest turns) and whose every tool result the relief chain trims
on admission (``max_result_tokens``), so the session keeps one relief original per turn, is
saved to SQLite every turn; at turn 100 a copy of it is saved as a second session. At turn
4,000, ``Engine.load_from`` of both (the same window, 40x the originals) is timed (loaded in
turn, median of 7 each), with the stored relief records each load reads counted; then both,
as loaded, play on, saved every turn, and the encoding of each save
(:func:`regio.persistence.store.base.encode_save_memo`: the CPU a save spends before the store's
transaction) is timed (played in turn, median of 20 saves each).

Asserted as ratios within the run: encode time at turn 4,000 <= 1.5x the one at turn 100, and
load time at turn 4,000 <= 1.5x the one at turn 100 (the originals are read on demand, none at
load). Printed: both times, their ratios and the relief records a load reads. Run with
``pytest benchmarks/test_bench_store_save_cpu.py -s``. Measured on a shared 2-core machine
(beside the test suite): encode 1.65 and 1.54 ms (ratio 0.94), load 48.3 and 47.4 ms (ratio
0.98), no relief record read; before the originals were append-only records (regio main of
2026-12-01: every save scanned every stored key, originals included, and a load read and
decoded every original), in the same conditions, encode 9.85 and 15.0 ms (ratio 1.52), load
60.5 and 238.4 ms (ratio 3.9), 200 and 8,000 relief records read.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from regio.persistence.store.base import encode_save_memo
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import StubCounter, make_engine
from test_bench_store_load import _turn  # a user message, a tool call and its result, usage

TURNS = (100, 4_000)
SAVES = 20


def _engine() -> Engine:
    regions = [
        Pinned(name="system", budget=2_000),
        SlidingWindow(name="conversation", budget=2_000),
    ]
    relief = ReliefPolicy(tools={"read": ToolRelief(max_result_tokens=16)})
    return make_engine(regions, max_tokens=6_000, relief=relief)


class _Counting:
    """``SQLiteStore.load_window`` / ``entry_records`` wrapped to count the relief records
    (``@ro/``, ``@rn/``, ``@rl/``) they return."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store, self.read = store, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _count(self, entries: dict[str, bytes]) -> None:
        self.read += sum(k.startswith(("@ro/", "@rn/", "@rl/")) for k in entries)

    def load_window(self, session_id: str) -> Any:
        out = self.store.load_window(session_id)
        self._count(out[-1])
        return out

    def entry_records(self, session_id: str, keys: list[str]) -> dict[str, bytes]:
        out = self.store.entry_records(session_id, keys)
        self._count(out)
        return out


def _play(engine: Engine, db: SQLiteStore, sid: str, until: int) -> None:
    """Play and save turns until ``until`` turns were played."""
    for turn in range(engine.ledger.count + 1, until + 1):
        _turn(engine, turn)
        engine.save_to(db, sid)


def _encode_times(db: SQLiteStore, engines: dict[str, Engine]) -> dict[str, float]:
    """Per session: median seconds to encode a save over :data:`SAVES` turns, the sessions
    played in turn (so the machine's load weighs on each alike), each saved every turn."""
    times: dict[str, list[float]] = {sid: [] for sid in engines}
    for _ in range(SAVES):
        for sid, engine in engines.items():
            _turn(engine, engine.ledger.count + 1)
            t0 = time.perf_counter()
            encode_save_memo(engine, engine.store_mark)
            times[sid].append(time.perf_counter() - t0)
            engine.save_to(db, sid)
    return {sid: statistics.median(t) for sid, t in times.items()}


def _load_times(db: SQLiteStore, sessions: tuple[str, ...]) -> list[tuple[float, int]]:
    """Per session: median seconds of ``Engine.load_from`` (the sessions loaded in turn, 7
    rounds, so the machine's load weighs on each alike) and the relief records a load read."""
    counting = _Counting(db)
    times: dict[str, list[float]] = {sid: [] for sid in sessions}
    reads = dict.fromkeys(sessions, 0)
    for _ in range(7):
        for sid in sessions:
            before = counting.read
            t0 = time.perf_counter()
            Engine.load_from(counting, sid, token_counter=StubCounter())  # type: ignore[arg-type]
            times[sid].append(time.perf_counter() - t0)
            reads[sid] = counting.read - before
    return [(statistics.median(times[sid]), reads[sid]) for sid in sessions]


def test_save_encoding_and_load_are_flat_in_the_session_under_relief(tmp_path: Any) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    engine = _engine()
    _play(engine, db, "s", TURNS[0])
    # the session as it stood at turn 100, played on beside the one of turn 4,000
    early = Engine.load_from(db, "s", token_counter=StubCounter())
    early.save_to(db, "early")
    _play(engine, db, "s", TURNS[1])
    (l0, r0), (l1, r1) = _load_times(db, ("early", "s"))
    late = Engine.load_from(db, "s", token_counter=StubCounter())  # loaded alike
    encode = _encode_times(db, {"early": early, "s": late})
    db.close()
    e0, e1 = encode["early"], encode["s"]
    assert len(late.book.relief.originals) >= TURNS[1]
    print(
        f"\nSQLite store under relief (one original per turn): turn {TURNS[0]:,}: encode "
        f"{e0 * 1e3:.2f} ms, load {l0 * 1e3:.2f} ms ({r0} relief records read); turn "
        f"{TURNS[1]:,}: encode {e1 * 1e3:.2f} ms, load {l1 * 1e3:.2f} ms ({r1} relief records "
        f"read); ratios encode {e1 / e0:.2f}, load {l1 / l0:.2f}"
    )
    assert e1 / e0 <= 1.5
    assert l1 / l0 <= 1.5
    assert r0 == r1 == 0
