"""A SQLite store save's wall time, alone and with threads running Python beside it.

Python's ``sqlite3`` releases the interpreter lock around every statement step (each row of an
``executemany`` is one) and must take it back; while another thread runs Python code that waits
up to the switch interval (5 ms by default, ``sys.getswitchinterval``). A save holds the file's
writer lock (``regio.persistence.store.sqlitedb``) through all its steps, so every writer queued
behind it waits as long: the proxy's slowest requests under a steady load are those queued
behind a commit of 100-600 ms wall on a few ms of CPU (docs/proxy.md, "Measured";
docs/results/2026-12.md, "Where a slow commit's wall time goes"). This benchmark isolates that
part in seconds instead of the proxy benchmark's 13 minutes, so a change to the save (fewer
statement steps) or to the worker (a shorter switch interval) can be judged on it first.

Run ``pytest benchmarks/test_bench_store_contention.py -s``. Printed, for a session of the
coding example saved every turn (each turn an assistant message with ``RESULTS`` tool calls and
their results, one request), with 0, 1 and 2 threads spinning in Python beside the saver: the
save's wall time p50 / p99 and its thread CPU p50 (ms), and the SQL statements a save runs
(statement steps: ``sqlite3``'s trace callback, one per statement execution). Asserted: every
save landed (the stored session loads back to the saver's snapshot) and the statement count
of a save does not grow with the session (turn 60 against turn 10, at most 1.2x).
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from regio.engine import Engine
from regio.persistence.store import SQLiteStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from store_turns import read_turn

BLUEPRINT = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"
TURNS = 60
RESULTS = 3


def _spin(stop: threading.Event) -> None:
    x = 0
    while not stop.is_set():
        for i in range(2_000):
            x += i * i


def _run(
    path: Path, spinners: int, process: bool = False
) -> tuple[list[float], list[float], list[int]]:
    store = SQLiteStore(path, process=process)
    steps: list[int] = [0]
    store._db.set_trace_callback(lambda _sql: steps.__setitem__(0, steps[0] + 1))
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("Read the files and fix the failing test")
    engine.save_to(store, "s")
    stop = threading.Event()
    threads = [threading.Thread(target=_spin, args=(stop,)) for _ in range(spinners)]
    for t in threads:
        t.start()
    walls: list[float] = []
    cpus: list[float] = []
    counts: list[int] = []
    try:
        for turn in range(TURNS):
            read_turn(engine, turn, RESULTS)
            steps[0] = 0
            wall, cpu = time.perf_counter(), time.thread_time()
            engine.save_to(store, "s")
            walls.append(1000 * (time.perf_counter() - wall))
            cpus.append(1000 * (time.thread_time() - cpu))
            counts.append(steps[0])
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert Engine.load_from(store, "s").snapshot() == engine.snapshot()
    store.close()
    return walls, cpus, counts


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def test_a_saves_wall_time_with_threads_running_beside_it(tmp_path: Any) -> None:
    rows = []
    for spinners in (0, 1, 2):
        walls, cpus, counts = _run(tmp_path / f"s{spinners}.db", spinners)
        rows.append((f"{spinners} (thread)", walls, cpus, counts))
        # an ordinary save's statements do not grow with the session
        assert statistics.median(counts[40:]) <= 1.2 * statistics.median(counts[:20]), counts
    for spinners in (0, 1, 2):  # the writer process: the statements run in the child
        walls, cpus, _ = _run(tmp_path / f"p{spinners}.db", spinners, process=True)
        rows.append((f"{spinners} (process)", walls, cpus, []))
    print(f"\nsaves of a {TURNS}-turn session, {RESULTS} tool results a turn")
    print(
        "spinning threads (writer)   wall p50 ms   wall max ms   thread CPU p50 ms"
        "   statements p50   the largest save: statements, wall ms, CPU ms"
    )
    for name, walls, cpus, counts in rows:
        if counts:
            big = max(range(len(counts)), key=counts.__getitem__)
            steps = f"{statistics.median(counts):16.0f}   {counts[big]}, {walls[big]:.1f}, "
            steps += f"{cpus[big]:.1f}"
        else:
            steps = f"{'(in the child)':>16}"
        print(
            f"{name:>25} {_p(walls, 0.5):13.2f} {max(walls):13.2f} "
            f"{statistics.median(cpus):19.2f} {steps}"
        )
