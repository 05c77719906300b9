"""The embedded session store: SQLite (standard library ``sqlite3``).

Many sessions in one file. Tables: ``sessions`` (id, version, head, record counts, updated
time in seconds since the epoch), ``records`` (append-only: session, kind ``t`` transcript /
``l`` usage, sequence number, encoded record) and ``entries`` (keyed: session, ``<region>/<entry
id>``, encoded window entry). A save is one ``BEGIN IMMEDIATE`` transaction that checks the
version, appends the new records, puts the new or changed window entries, deletes the ones that
left the window and replaces the (small) head, so its cost follows the turn, not the session
(:mod:`regio.store.base`).

The file is opened in WAL mode (readers never block the writer; https://sqlite.org/wal.html)
with a busy timeout, so several processes on one machine can share it: writes are serialized
by SQLite's lock and a lost race raises :class:`SessionConflictError`. A store object may be
shared by threads (one connection guarded by a lock).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from .base import SessionNotFoundError, SessionRecords, SessionStoreError, conflict
from .originals import ORIGINALS_PREFIXES

__all__ = ["SQLiteStore"]

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


#: The key range of the relief originals' records (``@rn/...`` and ``@ro/...``, adjacent in
#: key order; no other record key falls between): a load of a ``regio.session-head/6`` head
#: reads the entries below ``_LOW`` and from ``_HIGH`` on.
_LOW, _HIGH = "@rn/", "@ro0"


class SQLiteStore:
    """Sessions in the SQLite file ``path`` (created with its directory when missing).
    ``timeout`` (seconds) is how long a writer waits for another process's lock. Raises
    :class:`SessionStoreError` naming the file when it is not a database."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._closed = False
        try:
            self._db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise SessionStoreError(f"{self.path}: not a regio session database ({exc})") from exc

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
            self._closed = True

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def save(self, session_id: str, records: SessionRecords, *, expected: int) -> int:
        """Append ``records`` and replace the head when the session is at version
        ``expected`` (0: new). Returns the new version; raises :class:`SessionConflictError`
        (nothing written) otherwise."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT version, transcript_count, ledger_count FROM sessions WHERE id = ?",
                    (session_id,),
                ).fetchone()
                found = row[0] if row else 0
                if found != expected:
                    raise conflict(self.url, session_id, expected, found)
                t_start = records.transcript_count - len(records.transcript)
                l_start = records.ledger_count - len(records.ledger)
                stored = (row[1], row[2]) if row else (0, 0)
                if stored != (t_start, l_start):
                    raise conflict(self.url, session_id, expected, found)
                db.executemany(
                    "INSERT INTO records VALUES (?, ?, ?, ?)",
                    [(session_id, "t", t_start + i, d) for i, d in enumerate(records.transcript)]
                    + [(session_id, "l", l_start + i, d) for i, d in enumerate(records.ledger)],
                )
                self._write_entries(session_id, records, new=row is None)
                db.execute(
                    "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        session_id,
                        expected + 1,
                        records.head,
                        records.transcript_count,
                        records.ledger_count,
                        time.time(),
                    ),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return expected + 1

    def _write_entries(self, session_id: str, records: SessionRecords, *, new: bool) -> None:
        """Put and drop window entries inside the open save transaction (a new session starts
        from no entries)."""
        db = self._db
        if new:
            db.execute("DELETE FROM entries WHERE session = ?", (session_id,))
        db.executemany(
            "DELETE FROM entries WHERE session = ? AND key = ?",
            [(session_id, k) for k in records.drop],
        )
        db.executemany(
            "INSERT OR REPLACE INTO entries VALUES (?, ?, ?)",
            [(session_id, k, d) for k, d in records.put.items()],
        )

    def _read(self, session_id: str, *, window: bool) -> tuple[Any, list[Any], list[Any]]:
        """The session row (head, version, transcript count, usage count), its records
        (``kind``, ``data``: all of them, or with ``window`` only the newest usage record) and
        its window entries (with ``window``, without the relief originals:
        :meth:`entry_records` reads them on demand, :meth:`original_records` all at once), in
        one read transaction. Raises :class:`SessionNotFoundError`."""
        records = (
            "SELECT kind, data FROM records WHERE session = ? AND kind = 'l' "
            "ORDER BY seq DESC LIMIT 1"
            if window
            else "SELECT kind, data FROM records WHERE session = ? ORDER BY kind, seq"
        )
        each = "SELECT key, data FROM entries WHERE session = ?"
        with self._lock:
            db = self._db
            db.execute("BEGIN")
            try:
                row = db.execute(
                    "SELECT head, version, transcript_count, ledger_count FROM sessions "
                    "WHERE id = ?",
                    (session_id,),
                ).fetchone()
                rows = db.execute(records, (session_id,)).fetchall()
                if window:
                    # the keys before and after the originals' range (two index ranges; a
                    # load of an older head reads them with original_records)
                    entries = db.execute(f"{each} AND key < ?", (session_id, _LOW)).fetchall()
                    entries += db.execute(f"{each} AND key >= ?", (session_id, _HIGH)).fetchall()
                else:
                    entries = db.execute(each, (session_id,)).fetchall()
            finally:
                db.execute("COMMIT")
        if row is None:
            raise SessionNotFoundError(f"{self.url}: no session {session_id!r}")
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
        :meth:`close` (a read-only connection of its own). Raises :class:`SessionStoreError`
        when fewer are stored (the session was deleted since)."""
        return self._records(session_id, "t", count, "transcript")

    def usage_records(self, session_id: str, count: int) -> list[bytes]:
        """The first ``count`` usage records of ``session_id``, as :meth:`transcript_records`."""
        return self._records(session_id, "l", count, "usage")

    def entry_records(self, session_id: str, keys: list[str]) -> dict[str, bytes]:
        """The stored records of ``session_id`` among ``keys`` (the relief originals read on
        demand, :class:`regio.store.originals.StoredOriginals`); works after :meth:`close`."""
        marks = ", ".join("?" * len(keys))
        query = f"SELECT key, data FROM entries WHERE session = ? AND key IN ({marks})"
        return {str(k): bytes(d) for k, d in self._query(query, (session_id, *keys))}

    def original_records(self, session_id: str) -> dict[str, bytes]:
        """Every relief original record of ``session_id`` (``@ro/`` and ``@rn/``); works
        after :meth:`close`."""
        query = "SELECT key, data FROM entries WHERE session = ? AND key >= ? AND key < ?"
        rows = self._query(query, (session_id, _LOW, _HIGH))
        return {str(k): bytes(d) for k, d in rows if str(k).startswith(ORIGINALS_PREFIXES)}

    def _query(self, query: str, args: tuple[Any, ...]) -> list[Any]:
        """The rows of a read ``query`` (on a read-only connection of its own once closed)."""
        with self._lock:
            if self._closed:
                with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True) as db:
                    return db.execute(query, args).fetchall()
            return self._db.execute(query, args).fetchall()

    def _records(self, session_id: str, kind: str, count: int, what: str) -> list[bytes]:
        query = "SELECT data FROM records WHERE session = ? AND kind = ? AND seq < ? ORDER BY seq"
        rows = self._query(query, (session_id, kind, count))
        if len(rows) != count:
            raise SessionStoreError(
                f"{self.url}: session {session_id!r} holds {len(rows)} of the {count} "
                f"{what} records it had when it was loaded (it was deleted since); reload it"
            )
        return [bytes(d) for (d,) in rows]

    def sessions(self) -> list[str]:
        """The stored session ids, sorted."""
        with self._lock:
            rows = self._db.execute("SELECT id FROM sessions ORDER BY id").fetchall()
        return [r[0] for r in rows]

    def delete(self, session_id: str) -> bool:
        """Remove ``session_id`` and its records; ``False`` when there was none."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                gone = db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
                db.execute("DELETE FROM records WHERE session = ?", (session_id,))
                db.execute("DELETE FROM entries WHERE session = ?", (session_id,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return bool(gone)
