"""A write transaction runs few SQLite statements, however many rows it writes: each statement
step releases the interpreter's lock and waits to take it back while another thread runs
(``regio.persistence.store.sqlbatch``), and the transaction holds the file's lock meanwhile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import regio
from regio.persistence.store import SQLiteStore
from regio.persistence.store.sqlbatch import CHUNK_ROWS, chunks, delete_keys, insert_rows
from store_turns import read_turn

BLUEPRINT = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"


@given(st.integers(0, 5 * CHUNK_ROWS + 3))
def test_chunks_cover_every_row_once_in_order(count: int) -> None:
    spans = list(chunks(count))
    assert all(1 <= size <= CHUNK_ROWS for _, size in spans)
    covered = [i for start, size in spans for i in range(start, start + size)]
    assert covered == list(range(count))
    assert len(spans) == -(-count // CHUNK_ROWS)


def _twin() -> tuple[sqlite3.Connection, sqlite3.Connection]:
    schema = "CREATE TABLE e (session TEXT, key TEXT, data BLOB, PRIMARY KEY (session, key))"
    a, b = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    a.execute(schema)
    b.execute(schema)
    return a, b


@settings(max_examples=60, deadline=None)
@given(
    puts=st.lists(
        st.tuples(st.sampled_from(["s1", "s2"]), st.text(min_size=1, max_size=4), st.binary()),
        max_size=3 * CHUNK_ROWS,
    ),
    drops=st.lists(st.text(min_size=1, max_size=4), max_size=2 * CHUNK_ROWS),
)
def test_batched_writes_leave_what_one_row_at_a_time_leaves(
    puts: list[tuple[str, str, bytes]], drops: list[str]
) -> None:
    a, b = _twin()
    insert_rows(a, "INSERT OR REPLACE INTO e", puts)
    b.executemany("INSERT OR REPLACE INTO e VALUES (?, ?, ?)", puts)
    delete_keys(a, "e", "s1", drops)
    b.executemany("DELETE FROM e WHERE session = ? AND key = ?", [("s1", k) for k in drops])
    query = "SELECT session, key, data FROM e ORDER BY session, key"
    assert a.execute(query).fetchall() == b.execute(query).fetchall()


def test_a_failed_batch_raises_like_one_row_at_a_time() -> None:
    a, _ = _twin()
    rows = [("s1", "k", b"1"), ("s1", "k", b"2")]
    with pytest.raises(sqlite3.IntegrityError):
        insert_rows(a, "INSERT INTO e", rows)  # the same key twice: no OR REPLACE


def test_a_save_runs_at_most_twelve_statements_for_a_turn_of_one_or_forty_results(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    engine = regio.Engine.from_blueprint(BLUEPRINT)
    engine.add_user("Read the files")
    engine.save_to(store, "u")

    def turn(first: int, results: int) -> int:
        read_turn(engine, first, results)
        statements.clear()
        engine.save_to(store, "u")
        return len(statements)

    small = turn(0, 1)
    large = turn(1, 40)  # 40 results: over 100 records and window entries
    # BEGIN, the lease and version reads, the two checks, the records, the entries (at most
    # 64 rows a statement), the dropped entries, the head, COMMIT; one at a time it was 26-27
    # for one result and grew by one a row
    assert small <= 12 and large <= 12, (small, large)
    assert regio.Engine.load_from(store, "u").snapshot() == engine.snapshot()


def test_the_save_after_a_compaction_runs_few_statements(tmp_path: Path) -> None:
    # 60 turns of three ~600-token results: the coding example compacts on the way, and the
    # save after it drops and puts hundreds of window entries (1,223 statements one row at a
    # time; benchmarks/test_bench_store_contention.py has the wall times)
    store = SQLiteStore(tmp_path / "s.db")
    steps: list[int] = []
    store._db.set_trace_callback(lambda _sql: steps.append(1))
    engine = regio.Engine.from_blueprint(BLUEPRINT)
    engine.add_user("Read the files and fix the failing test")
    engine.save_to(store, "u")
    compactions: list[object] = []
    engine.subscribe(
        lambda e: compactions.append(e) if type(e).__name__ == "CompactionCompleted" else None
    )
    largest = 0
    for turn in range(60):
        read_turn(engine, turn, 3)
        steps.clear()
        engine.save_to(store, "u")
        largest = max(largest, len(steps))
    assert compactions, "the session never compacted: the test measures nothing"
    assert largest <= 40, largest
    assert regio.Engine.load_from(store, "u").snapshot() == engine.snapshot()
