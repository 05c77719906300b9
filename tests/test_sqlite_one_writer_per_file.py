"""Connections of one process to one SQLite file write one at a time, queued in Python:
a write never meets SQLite's busy handler (whose sleeps of 1-100 ms outlast the write it
waits for) because another connection of the same process is writing.

Each connection here is opened with a busy timeout of 0, so a ``BEGIN IMMEDIATE`` that found
the file's write lock taken would fail at once with "database is locked" instead of sleeping:
a pass means no write of the process ever met another.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.persistence.store import SQLiteStore
from regio.persistence.store.sqlitedb import file_writer
from regio.proxy.records import RequestStat, SessionMeta
from regio.proxy.records.sqlite import SQLiteRecords


def _meta(n: int) -> SessionMeta:
    return SessionMeta(id=f"s{n}", key="fp:x", api="anthropic", created=0.0, updated=float(n))


def test_a_write_waits_for_another_connections_write_and_then_lands(tmp_path: Path) -> None:
    path = tmp_path / "one.db"
    store = SQLiteStore(path, timeout=0)
    records = SQLiteRecords(path, timeout=0)
    opened, release, done = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []
    committed: list[bool] = []
    assert store.try_lease("s1", "tok", 30.0) is None  # the records write is fenced by it

    def hold_a_store_write() -> None:
        def hold(_db: object) -> None:
            opened.set()
            release.wait(5)

        store._write("hold", hold, wrote=True)

    def write_records() -> None:
        try:
            committed.append(records.commit("s1", "tok", _meta(1), RequestStat(0, 0.0, 10, 10)))
        except BaseException as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)
        finally:
            done.set()

    holder = threading.Thread(target=hold_a_store_write)
    holder.start()
    assert opened.wait(5)
    writer = threading.Thread(target=write_records)
    writer.start()
    time.sleep(0.2)
    assert not done.is_set(), "the records write ran while the store's write was open"
    release.set()
    holder.join(5)
    writer.join(5)
    assert done.is_set() and errors == []
    assert committed == [True]
    assert [stat.client_tokens for stat in records.stats("s1", 10)] == [10]
    store.close()
    records.close()


def test_connections_to_one_file_share_its_writer_lock_and_other_files_do_not(
    tmp_path: Path,
) -> None:
    a = file_writer(tmp_path / "a.db")
    assert file_writer(tmp_path / "." / "a.db") is a
    assert file_writer(tmp_path / "b.db") is not a


def test_a_read_of_a_connection_does_not_wait_for_a_queued_writer(tmp_path: Path) -> None:
    path = tmp_path / "one.db"
    store = SQLiteStore(path, timeout=0)
    records = SQLiteRecords(path, timeout=0)
    opened, release = threading.Event(), threading.Event()

    def hold_a_records_write() -> None:
        def write(db: object) -> None:
            opened.set()
            release.wait(5)

        records._write(write)  # type: ignore[arg-type]

    holder = threading.Thread(target=hold_a_records_write)
    holder.start()
    assert opened.wait(5)
    leased: list[float | None] = []
    queued = threading.Thread(target=lambda: leased.append(store.try_lease("s2", "tok", 30.0)))
    queued.start()  # waits for the file's writer lock, not for the store's connection
    time.sleep(0.1)
    started = time.perf_counter()
    assert store.sessions() == []
    assert time.perf_counter() - started < 1.0
    release.set()
    holder.join(5)
    queued.join(5)
    assert len(leased) == 1, "the queued lease write failed instead of waiting its turn"
    store.close()
    records.close()


@settings(max_examples=15, deadline=None)
@given(plan=st.lists(st.tuples(st.booleans(), st.integers(0, 5)), min_size=2, max_size=24))
def test_writes_from_many_threads_on_two_connections_all_land(
    tmp_path_factory: pytest.TempPathFactory, plan: list[tuple[bool, int]]
) -> None:
    path = tmp_path_factory.mktemp("w") / "one.db"
    store = SQLiteStore(path, timeout=0)
    records = SQLiteRecords(path, timeout=0)
    errors: list[BaseException] = []
    start = threading.Barrier(len(plan))
    for i, (on_store, _) in enumerate(plan):
        if not on_store:  # each records write is fenced by a lease of its own session
            assert store.try_lease(f"r{i}", "tok", 30.0) is None

    def run(i: int, on_store: bool, session: int) -> None:
        try:
            start.wait(5)
            if on_store:
                store.try_lease(f"s{session}", f"t{i}", 30.0)
            else:
                assert records.commit(f"r{i}", "tok", _meta(i), RequestStat(0, 0.0, 1, 1))
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, s, n)) for i, (s, n) in enumerate(plan)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == []
    with store._reading("count", "") as db:
        leases = db.execute("SELECT COUNT(*) FROM leases").fetchone()[0]
        stats = db.execute("SELECT COUNT(*) FROM proxy_stats").fetchone()[0]
    fenced = sum(1 for on_store, _ in plan if not on_store)
    assert leases == fenced + len({n for on_store, n in plan if on_store})
    assert stats == fenced
    store.close()
    records.close()
