"""The embedded session store: SQLite (standard library ``sqlite3``).

Many sessions in one file. Tables: ``sessions`` (id, version, head, record counts, updated
time in seconds since the epoch), ``records`` (append-only: session, kind ``t`` transcript /
``l`` usage, sequence number, encoded record) and ``entries`` (keyed: session, ``<region>/<entry
id>``, encoded window entry). A save is one ``BEGIN IMMEDIATE`` transaction that checks the
version, appends the new records, puts the new or changed window entries, deletes the ones that
left the window and replaces the (small) head, so its cost follows the turn, not the session
(:mod:`regio.persistence.store.base`).

The file is opened in WAL mode (readers never block the writer; https://sqlite.org/wal.html)
with a busy timeout, so several processes on one machine can share it: writes are serialized
by SQLite's lock and a lost race raises :class:`SessionConflictError`. A store object may be
shared by threads (one connection guarded by a lock); within one process every write
transaction on the file first takes the file's one writer lock
(:func:`regio.persistence.store.sqlitedb.file_writer`), so connections of the process never
wait in SQLite's busy handler for each other. With ``process=True`` the write transactions
(:mod:`regio.persistence.store.sqlite_writes`) run in the file's writer process instead
(:mod:`regio.persistence.store.sqlite_writer`), reads here.

Leases (:mod:`regio.persistence.store.lease`) are rows of the table ``leases`` (session, holder
token, expiry in seconds since the epoch; :mod:`regio.persistence.store.sqlitedb`, with the
connection's setup, shared with the tables other parts keep in the same file); a save checks, inside
its transaction, that no other writer holds a live lease on the session. Every ``sqlite3`` error
(and text that is no UTF-8) becomes a :class:`SessionStoreError` naming the file, the session,
the cause and the fix (:func:`regio.persistence.store.failures.sqlite_failure`); a failed save is
rolled back whole, also when SQLite already rolled it back itself (a full disk).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from . import sqlite_writes as writes
from .base import SessionNotFoundError, SessionRecords, SessionStoreError
from .errors import SessionHistoryLostError
from .failures import sqlite_failure
from .lease import DEFAULT_TTL, DEFAULT_WAIT, SessionLease, acquire
from .originals import ORIGINALS_PREFIXES
from .sqlite_checks import HIGH, LOW, check_pairs, check_row
from .sqlite_writer import SharedWriter, writer_for
from .sqlitedb import LEASES_SCHEMA, WaitedLock, connect, file_writer, transaction
from .sqlitedb import begin as begin_transaction

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    head BLOB NOT NULL,
    transcript_count INTEGER NOT NULL,
    ledger_count INTEGER NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    session TEXT NOT NULL,
    kind TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session, kind, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries (
    session TEXT NOT NULL,
    key TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session, key)
) WITHOUT ROWID;
"""


class SQLiteStore:
    """Sessions in the SQLite file ``path`` (created with its directory when missing).
    ``timeout`` (seconds) is how long a writer waits for another process's lock; ``process``:
    run the write transactions in a child process (:mod:`regio.persistence.store.sqlite_writer`:
    the same results and errors, off the interpreter lock the caller's threads share). Raises
    :class:`SessionStoreError` naming the file when it is not a database or cannot be opened."""

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float = 30.0, process: bool = False
    ) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self._lock = WaitedLock()
        self._writer = file_writer(self.path)
        self._process: SharedWriter | None = None
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionStoreError(
                f"{self.path}: cannot create the folder of the session database ({exc}); "
                "check the path and its permissions"
            ) from exc
        with self._guard("open the session database", wrote=False):
            self._db = connect(self.path, timeout=timeout, schema=_SCHEMA + LEASES_SCHEMA)
            self._process = writer_for(self.path, timeout=timeout, process=process, db=self._db)

    @contextmanager
    def _guard(self, action: str, *, wrote: bool, session_id: str | None = None) -> Iterator[None]:
        """Turn a ``sqlite3`` error (or undecodable text) inside the block into the
        :class:`SessionStoreError` naming ``action`` (:func:`sqlite_failure`)."""
        try:
            yield
        except (sqlite3.Error, UnicodeDecodeError, TypeError, ValueError) as exc:
            raise sqlite_failure(self.url, action, exc, wrote=wrote, session_id=session_id) from exc

    @contextmanager
    def _reading(self, action: str, session_id: str) -> Iterator[sqlite3.Connection]:
        """One read transaction (``BEGIN``) on the connection, under the store's lock and
        :meth:`_guard`, ended when the block ends."""
        with self._lock, self._guard(action, wrote=False, session_id=session_id):
            db = self._db
            begin_transaction(db, "BEGIN")
            try:
                yield db
            finally:
                if db.in_transaction:
                    with suppress(sqlite3.Error):
                        db.execute("ROLLBACK")

    def _write(
        self,
        action: str,
        fn: Callable[..., _T],
        *args: Any,
        wrote: bool,
        session_id: str | None = None,
    ) -> _T:
        """``fn(db, *args)`` in one write transaction (``BEGIN IMMEDIATE``), under
        :meth:`_guard`: in the store's writer process when it has one
        (:mod:`regio.persistence.store.sqlite_writer`), else here after the file's one writer
        lock and the store's own (:mod:`regio.persistence.store.sqlitedb`); committed when it
        returns, rolled back when it raises."""
        with self._guard(action, wrote=wrote, session_id=session_id):
            if self._process is not None:
                return self._process.run(fn, *args)
            with self._writer, self._lock:
                return transaction(self._db, fn, args)

    def close(self) -> None:
        """Close the connection (and let go of the writer process)."""
        with self._lock:
            self._db.close()
            self._closed = True
        if self._process is not None:
            self._process.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def save(
        self,
        session_id: str,
        records: SessionRecords,
        *,
        expected: int,
        lease: SessionLease | str | None = None,
    ) -> int:
        """Append ``records`` and replace the head when the session is at version
        ``expected`` (0: new), in one transaction. ``lease``: the writer's lease on the session
        (or its token). Returns the new version; raises :class:`SessionConflictError` (another
        writer saved first), :class:`SessionLeasedError` (another writer holds the lease),
        :class:`SessionLostError` (the session this engine saved is gone) or
        :class:`SessionStoreError` (the file could not be written); nothing is written then."""
        token = lease.token if isinstance(lease, SessionLease) else lease
        action = f"save session {session_id!r}"
        args = (self.url, session_id, records, expected, token)
        return self._write(action, writes.save, *args, wrote=True, session_id=session_id)

    # ----- leases ------------------------------------------------------------------------
    def lease(
        self, session_id: str, *, ttl: float = DEFAULT_TTL, wait: float = DEFAULT_WAIT
    ) -> SessionLease:
        """Take the lease on ``session_id`` (:func:`regio.persistence.store.lease.acquire`): ``ttl``
        seconds, waiting up to ``wait`` seconds for another writer's. Raises
        :class:`SessionLeasedError`."""
        return acquire(self, session_id, ttl=ttl, wait=wait)

    def try_lease(self, session_id: str, token: str, ttl: float) -> float | None:
        """Take the lease for ``token`` when it is free or expired: ``None``; else the
        seconds until the holder's lease expires."""
        action = f"lease session {session_id!r}"
        return self._write(action, writes.try_lease, self.url, session_id, token, ttl, wrote=False)

    def renew_lease(self, session_id: str, token: str, ttl: float) -> bool:
        """Extend ``token``'s live lease to ``ttl`` seconds from now; ``False`` when it is not
        the holder's any more."""
        action = f"renew the lease on {session_id!r}"
        return self._write(action, writes.renew_lease, session_id, token, ttl, wrote=False)

    def release_lease(self, session_id: str, token: str) -> bool:
        """Drop ``token``'s lease on ``session_id``; ``False`` when it held none."""
        action = f"release the lease on {session_id!r}"
        return self._write(action, writes.release_lease, session_id, token, wrote=False)

    # ----- reads -------------------------------------------------------------------------
    def _read(self, session_id: str, *, window: bool) -> tuple[Any, list[Any], list[Any]]:
        """The session row (head, version, transcript count, usage count), its records
        (``kind``, ``data``: all of them, or with ``window`` only the newest usage record) and
        its window entries (with ``window``, without the relief originals:
        :meth:`entry_records` reads them on demand, :meth:`original_records` all at once), in
        one read transaction. Raises :class:`SessionNotFoundError`, and
        :class:`SessionStoreError` for a damaged file or row."""
        records = (
            "SELECT kind, data FROM records WHERE session = ? AND kind = 'l' "
            "ORDER BY seq DESC LIMIT 1"
            if window
            else "SELECT kind, data FROM records WHERE session = ? ORDER BY kind, seq"
        )
        each = "SELECT key, data FROM entries WHERE session = ?"
        action = f"load session {session_id!r}"
        with self._reading(action, session_id) as db:
            row = db.execute(
                "SELECT head, version, transcript_count, ledger_count FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
            rows = db.execute(records, (session_id,)).fetchall()
            if window:
                # the keys before and after the originals' range (two index ranges; a
                # load of an older head reads them with original_records)
                entries = db.execute(f"{each} AND key < ?", (session_id, LOW)).fetchall()
                entries += db.execute(f"{each} AND key >= ?", (session_id, HIGH)).fetchall()
            else:
                entries = db.execute(each, (session_id,)).fetchall()
        if row is None:
            raise SessionNotFoundError(f"{self.url}: no session {session_id!r}")
        check_row(self.url, session_id, row, rows, entries)
        return row, rows, entries

    def load(
        self, session_id: str
    ) -> tuple[bytes, list[bytes], list[bytes], int, dict[str, bytes]]:
        """The head, transcript records, usage records, version and window entries of
        ``session_id`` (one read transaction). Raises :class:`SessionNotFoundError`."""
        row, rows, entries = self._read(session_id, window=False)
        transcript = [bytes(d) for k, d in rows if k == "t"]
        ledger = [bytes(d) for k, d in rows if k == "l"]
        window = {str(k): bytes(d) for k, d in entries}
        return bytes(row[0]), transcript, ledger, int(row[1]), window

    def load_window(
        self, session_id: str
    ) -> tuple[bytes, int, int, bytes | None, int, dict[str, bytes]]:
        """What a load needs for the window, in one read transaction: ``(head, transcript
        record count, usage record count, newest usage record or None, version, window
        entries)``; read the records with :meth:`transcript_records` / :meth:`usage_records`
        when they are needed, so a load reads the window, not the session's history. Raises
        :class:`SessionNotFoundError`."""
        row, rows, entries = self._read(session_id, window=True)
        window = {str(k): bytes(d) for k, d in entries}
        newest = bytes(rows[0][1]) if rows else None
        return bytes(row[0]), int(row[2]), int(row[3]), newest, int(row[1]), window

    def transcript_records(self, session_id: str, count: int) -> list[bytes]:
        """The first ``count`` transcript records of ``session_id`` (append-only, so they are
        the ones a load counted, however many turns were saved since). Works after
        :meth:`close` (a read-only connection of its own). Raises
        :class:`SessionHistoryLostError` when fewer are stored (the session was deleted since)."""
        return self._records(session_id, "t", count, "transcript")

    def usage_records(self, session_id: str, count: int) -> list[bytes]:
        """The first ``count`` usage records of ``session_id``, as :meth:`transcript_records`."""
        return self._records(session_id, "l", count, "usage")

    def entry_records(self, session_id: str, keys: list[str]) -> dict[str, bytes]:
        """The stored records of ``session_id`` among ``keys`` (the relief originals read on
        demand, :class:`regio.persistence.store.originals.StoredOriginals`); works after
        :meth:`close`."""
        marks = ", ".join("?" * len(keys))
        query = f"SELECT key, data FROM entries WHERE session = ? AND key IN ({marks})"
        rows = self._query(query, (session_id, *keys), session_id)
        check_pairs(self.url, session_id, rows)
        return {str(k): bytes(d) for k, d in rows}

    def original_records(self, session_id: str) -> dict[str, bytes]:
        """Every relief original record of ``session_id`` (``@ro/`` and ``@rn/``); works
        after :meth:`close`."""
        query = "SELECT key, data FROM entries WHERE session = ? AND key >= ? AND key < ?"
        rows = self._query(query, (session_id, LOW, HIGH), session_id)
        check_pairs(self.url, session_id, rows)
        return {str(k): bytes(d) for k, d in rows if str(k).startswith(ORIGINALS_PREFIXES)}

    def _query(self, query: str, args: tuple[Any, ...], session_id: str) -> list[Any]:
        """The rows of a read ``query`` (on a read-only connection of its own once closed)."""
        with (
            self._lock,
            self._guard(f"read session {session_id!r}", wrote=False, session_id=session_id),
        ):
            if self._closed:
                with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True) as db:
                    return db.execute(query, args).fetchall()
            return self._db.execute(query, args).fetchall()

    def _records(self, session_id: str, kind: str, count: int, what: str) -> list[bytes]:
        query = "SELECT data FROM records WHERE session = ? AND kind = ? AND seq < ? ORDER BY seq"
        rows = self._query(query, (session_id, kind, count), session_id)
        if len(rows) != count:
            raise SessionHistoryLostError(
                f"{self.url}: session {session_id!r} holds {len(rows)} of the {count} {what} "
                "records it had when this engine loaded it: the session was deleted since (or "
                "the file replaced). The window and the turns since the load are in the "
                "engine: engine.save(path) or engine.save_to(store, id, create=True) saves "
                "them and says what is left out; the history before the load is gone from this "
                "store (restore it from a backup or a file save)",
                session_id=session_id,
                expected=-1,
            )
        if not all(isinstance(d, bytes) for (d,) in rows):
            raise sqlite_failure(
                self.url,
                f"read the {what} records of session {session_id!r}",
                TypeError("a record is not a blob"),
                wrote=False,
                session_id=session_id,
            )
        return [bytes(d) for (d,) in rows]

    def sessions(self) -> list[str]:
        """The stored session ids, sorted."""
        with self._lock, self._guard("list the sessions", wrote=False):
            rows = self._db.execute("SELECT id FROM sessions ORDER BY id").fetchall()
        return [str(r[0]) for r in rows]

    def delete(self, session_id: str) -> bool:
        """Remove ``session_id``, its records and its lease; ``False`` when there was none."""
        action = f"delete session {session_id!r}"
        return self._write(action, writes.delete, session_id, wrote=True, session_id=session_id)
