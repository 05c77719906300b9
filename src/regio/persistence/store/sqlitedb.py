"""The SQLite connection every regio table in one file shares: the session store's
(:class:`regio.persistence.store.SQLiteStore`) and the proxy's records beside it
(:mod:`regio.proxy.records.sqlite`).

:func:`connect` opens the file as both need it: autocommit (``isolation_level=None``: each
writer opens its own ``BEGIN IMMEDIATE`` transaction), shareable by a process's threads under
the caller's lock, WAL mode (readers never block the writer; https://sqlite.org/wal.html) with
``synchronous=NORMAL`` (durable at checkpoints, never corrupt), a busy timeout so several
processes on one machine wait for each other's writes, and the caller's schema.

The sessions' leases (:mod:`regio.persistence.store.lease`) are rows of the ``leases`` table
(:data:`LEASES_SCHEMA`); :func:`lease_row` reads one inside the caller's transaction and
:func:`holds_lease` says whether a token holds a live one, so a write in another table of the
file can be fenced by the session's lease in the same transaction.

**Lock waits.** Both callers take their store's lock (a :class:`WaitedLock`) and open their write
transactions with :func:`begin`; the seconds a thread spent waiting for the lock (another
thread holding it) and running ``BEGIN`` statements (which wait, SQLite's busy handler
sleeping, while another process writes the file) add up in :func:`lock_waited`, per
thread (the proxy's ``store_lock_ms``,
:mod:`regio.proxy.requestlog`).

**One writer per file.** The session store and the proxy's records are two connections to one
file. A ``BEGIN IMMEDIATE`` that finds the other connection writing fails with
``SQLITE_BUSY``, and SQLite's busy handler then sleeps 1, 2, 5, 10, 15, 20, 25, ... ms between
retries (https://sqlite.org/c3ref/busy_timeout.html), however soon the other write ends,
while the waiting connection's own lock holds back every thread behind it. So every write
transaction of the process on a file first takes the file's :func:`file_writer` lock (before
its connection's own lock, so readers of that connection do not wait behind a queued
writer; nothing takes them the other way round, so they cannot deadlock; a read takes its
connection's lock only): writers of one process queue in Python and wake as soon as the write
before them ends; the busy handler is left to writers of other processes. The price: a writer
that holds the file's lock while its connection serves a read (milliseconds) holds back the
writers of the other connection meanwhile. :func:`connect` writes a new file's schema under
the same lock. In the proxy's steady-load benchmark (``docs/proxy.md``) the slowest 1% of
requests spent most of their added time waiting for these locks and ``BEGIN`` statements
with 3-4 ms of CPU; the runs vary more than this change moves them (the slowest 1% added 231
ms on average in one run without it, 116 and 239 ms in two with it), so the reason for it
is the mechanism, pinned by ``tests/test_sqlite_one_writer_per_file.py``.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

from .sqlbatch import STATEMENT_CACHE

__all__ = [
    "LEASES_SCHEMA",
    "WaitedLock",
    "begin",
    "connect",
    "file_writer",
    "holds_lease",
    "lease_row",
    "lock_waited",
    "transaction",
]

_T = TypeVar("_T")

_waited = threading.local()


def lock_waited() -> float:
    """Seconds this thread has waited so far, in all, for the SQLite stores' locks (module
    doc); a counter: the difference of two readings is the wait between them."""
    return float(getattr(_waited, "s", 0.0))


def _add_wait(seconds: float) -> None:
    _waited.s = getattr(_waited, "s", 0.0) + seconds


class WaitedLock:
    """A ``threading.Lock`` (a ``with`` block only) whose waits add to :func:`lock_waited`; an
    uncontended acquisition costs one extra non-blocking try, no clock reading."""

    __slots__ = ("__weakref__", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> WaitedLock:
        if not self._lock.acquire(blocking=False):
            started = time.perf_counter()
            self._lock.acquire()
            _add_wait(time.perf_counter() - started)
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


_writers: weakref.WeakValueDictionary[str, WaitedLock] = weakref.WeakValueDictionary()
_writers_guard = threading.Lock()


def file_writer(path: str | os.PathLike[str]) -> WaitedLock:
    """The one write lock of the SQLite file ``path`` in this process (module doc, "One
    writer per file"): every connection of the process to the file takes it around its
    write transactions, kept alive while any holder keeps it."""
    key = os.path.realpath(path)
    with _writers_guard:
        lock = _writers.get(key)
        if lock is None:
            lock = _writers[key] = WaitedLock()
        return lock


def begin(db: sqlite3.Connection, statement: str = "BEGIN IMMEDIATE") -> None:
    """Open a transaction on ``db`` with ``statement``; its time (in SQLite's busy handler
    while another process writes the file) adds to :func:`lock_waited`."""
    started = time.perf_counter()
    try:
        db.execute(statement)
    finally:
        _add_wait(time.perf_counter() - started)


def transaction(db: sqlite3.Connection, fn: Callable[..., _T], args: tuple[Any, ...]) -> _T:
    """``fn(db, *args)`` in one ``BEGIN IMMEDIATE`` transaction on ``db``: committed when it
    returns, rolled back when it (or the ``COMMIT``) raises; a rollback that finds no
    transaction (SQLite rolled it back itself, as on a full disk) or fails does not hide the
    error. The caller holds whatever locks share ``db``."""
    begin(db, "BEGIN IMMEDIATE")
    try:
        out = fn(db, *args)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            with suppress(sqlite3.Error):  # the block's error is the one to report
                db.execute("ROLLBACK")
        raise
    return out


#: The leases table: session id -> the holder's token and when its lease expires (seconds
#: since the epoch, the processes' wall clocks: one machine).
LEASES_SCHEMA = """
CREATE TABLE IF NOT EXISTS leases (
    session TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    expires REAL NOT NULL
);
"""


def connect(path: str | os.PathLike[str], *, timeout: float, schema: str) -> sqlite3.Connection:
    """The connection to the SQLite file ``path`` (module doc), with ``schema`` (``CREATE ...
    IF NOT EXISTS`` statements) applied. ``timeout``: seconds a write waits for another
    process's lock. Raises ``sqlite3.Error`` (the callers name the file and the fix)."""
    db = sqlite3.connect(
        path,
        timeout=timeout,
        isolation_level=None,
        check_same_thread=False,
        cached_statements=STATEMENT_CACHE,
    )
    try:
        with file_writer(path):  # the schema of a new file is a write
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(schema)
    except BaseException:
        db.close()
        raise
    return db


def lease_row(db: sqlite3.Connection, session_id: str) -> tuple[str, Any] | None:
    """``(token, expires)`` of ``session_id``'s lease row, or ``None`` (expired rows included).
    ``expires`` is the stored value, unchecked: a damaged file can hold any SQLite value, and
    :func:`regio.persistence.store.sqlite_checks.lease_expiry` turns it into seconds or raises
    :class:`regio.persistence.store.SessionDamagedError` (a lease that never expires)."""
    query = "SELECT token, expires FROM leases WHERE session = ?"
    row = db.execute(query, (session_id,)).fetchone()
    return None if row is None else (str(row[0]), row[1])


def holds_lease(db: sqlite3.Connection, session_id: str, token: str) -> bool:
    """Whether ``token`` holds a live lease on ``session_id``: its row expires at a finite time
    still ahead (a lease is written with a finite expiry:
    :func:`regio.persistence.store.lease.check_ttl`)."""
    row = lease_row(db, session_id)
    if row is None or row[0] != token:
        return False
    expires = row[1]
    return isinstance(expires, int | float) and math.isfinite(expires) and expires > time.time()
