"""The proxy's records in SQLite (:class:`regio.proxy.records.Records`), beside the engine
sessions of :class:`regio.persistence.store.SQLiteStore` in the same file.

Tables: ``proxy_meta`` (session -> key, updated time, msgpack meta), ``proxy_positions``
(session, position -> digest, tokens), ``proxy_stats`` (session, sequence -> msgpack stat) and
``proxy_index`` (key, session -> updated time). Its own connection, set up as the store's
(:func:`regio.persistence.store.sqlitedb.connect`: WAL mode, readers never block the writer), one
lock per object, so a worker's threads share it; a write takes the file's one writer lock first
(:func:`regio.persistence.store.sqlitedb.file_writer`), as the store's writes do. A fenced
write is one ``BEGIN IMMEDIATE`` transaction that first checks that the writer holds the
session's live lease in the store's ``leases`` table
(:func:`regio.persistence.store.sqlitedb.holds_lease`), so several processes on one machine
can share the file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from regio.persistence.store.sqlbatch import insert_rows
from regio.persistence.store.sqlite_writer import SharedWriter, writer_for
from regio.persistence.store.sqlitedb import (
    LEASES_SCHEMA,
    WaitedLock,
    connect,
    file_writer,
    holds_lease,
    transaction,
)

from ..errors import ProxyError
from . import RequestStat, SessionMeta, decode_meta, decode_stat, encode

__all__ = ["SQLiteRecords"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS proxy_meta (
    session TEXT PRIMARY KEY, key TEXT NOT NULL, updated REAL NOT NULL, data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS proxy_positions (
    session TEXT NOT NULL, pos INTEGER NOT NULL, digest BLOB NOT NULL, tokens INTEGER NOT NULL,
    PRIMARY KEY (session, pos)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS proxy_stats (
    session TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS proxy_index (
    key TEXT NOT NULL, session TEXT NOT NULL, updated REAL NOT NULL, PRIMARY KEY (key, session)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS proxy_index_recent ON proxy_index (key, updated);
CREATE INDEX IF NOT EXISTS proxy_meta_recent ON proxy_meta (updated);
"""


class SQLiteRecords:
    """The proxy's records in the SQLite file ``path`` (module doc). Raises
    :class:`regio.proxy.errors.ProxyError` naming the file when it is not a database."""

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float = 30.0, process: bool = False
    ) -> None:
        self.path = Path(path)
        self.url = f"sqlite:{self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = WaitedLock()
        self._writer = file_writer(self.path)
        self._process: SharedWriter | None = None
        try:
            self._db = connect(self.path, timeout=timeout, schema=_SCHEMA + LEASES_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ProxyError(f"{self.path}: not a regio session database ({exc})") from exc
        self._process = writer_for(self.path, timeout=timeout, process=process, db=self._db)

    def close(self) -> None:
        """Close the connection (and let go of the writer process)."""
        with self._lock:
            self._db.close()
        if self._process is not None:
            self._process.close()

    def _read(self, query: str, args: tuple[Any, ...]) -> list[Any]:
        with self._lock:
            return self._db.execute(query, args).fetchall()

    def _write(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(db, *args)`` in one write transaction: in the store's writer process when it
        has one (:mod:`regio.persistence.store.sqlite_writer`), else here after the file's one
        writer lock (sqlitedb module doc) and this object's own."""
        if self._process is not None:
            return self._process.run(fn, *args)
        with self._writer, self._lock:
            return transaction(self._db, fn, args)

    def meta(self, session: str) -> SessionMeta | None:
        rows = self._read("SELECT data FROM proxy_meta WHERE session = ?", (session,))
        return decode_meta(rows[0][0]) if rows else None

    def positions(self, session: str, start: int, stop: int) -> list[tuple[bytes, int]]:
        rows = self._read(
            "SELECT digest, tokens FROM proxy_positions WHERE session = ? AND pos >= ? "
            "AND pos < ? ORDER BY pos",
            (session, start, stop),
        )
        return [(bytes(d), int(t)) for d, t in rows]

    def candidates(self, key: str, limit: int) -> list[str]:
        rows = self._read(
            "SELECT session FROM proxy_index WHERE key = ? ORDER BY updated DESC LIMIT ?",
            (key, limit),
        )
        return [r[0] for r in rows]

    def prepare(
        self, session: str, token: str, meta: SessionMeta, rows: list[tuple[int, bytes, int]]
    ) -> bool:
        return self._write(_prepare, session, token, meta, rows)

    def commit(self, session: str, token: str, meta: SessionMeta, stat: RequestStat) -> bool:
        return self._write(_commit, session, token, meta, stat)

    def stats(self, session: str, limit: int) -> list[RequestStat]:
        rows = self._read(
            "SELECT data FROM proxy_stats WHERE session = ? ORDER BY seq DESC LIMIT ?",
            (session, limit),
        )
        return [decode_stat(r[0]) for r in reversed(rows)]

    def sessions(self, limit: int) -> list[SessionMeta]:
        rows = self._read("SELECT data FROM proxy_meta ORDER BY updated DESC LIMIT ?", (limit,))
        return [decode_meta(r[0]) for r in rows]


# The fenced writes, as functions of a connection (run here or in the writer process).


def _put_meta(db: sqlite3.Connection, meta: SessionMeta) -> None:
    db.execute(
        "INSERT OR REPLACE INTO proxy_meta VALUES (?, ?, ?, ?)",
        (meta.id, meta.key, meta.updated, encode(meta)),
    )


def _prepare(
    db: sqlite3.Connection,
    session: str,
    token: str,
    meta: SessionMeta,
    rows: list[tuple[int, bytes, int]],
) -> bool:
    if not holds_lease(db, session, token):
        return False
    insert_rows(  # few statements (regio.persistence.store.sqlbatch)
        db,
        "INSERT OR REPLACE INTO proxy_positions",
        [(session, pos, digest, tokens) for pos, digest, tokens in rows],
    )
    _put_meta(db, meta)
    return True


def _commit(
    db: sqlite3.Connection, session: str, token: str, meta: SessionMeta, stat: RequestStat
) -> bool:
    if not holds_lease(db, session, token):
        return False
    _put_meta(db, meta)
    db.execute(
        "INSERT OR REPLACE INTO proxy_stats VALUES (?, ?, ?)",
        (session, stat.index, encode(stat)),
    )
    db.execute(
        "INSERT OR REPLACE INTO proxy_index VALUES (?, ?, ?)",
        (meta.key, session, meta.updated),
    )
    return True
