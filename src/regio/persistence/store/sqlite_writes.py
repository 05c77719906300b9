"""The write transactions of :class:`regio.persistence.store.SQLiteStore`, as functions of an
open connection, so that they run the same in the caller's thread and in the store's writer
process (:mod:`regio.persistence.store.sqlite_writer`, which pickles them by name).

Each runs inside the ``BEGIN IMMEDIATE`` transaction its caller opened
(:func:`regio.persistence.store.sqlitedb.transaction`) and raises to roll it back; ``url``
is the store's, for the messages. The rules (versions, lease fencing, the checks of what is
stored) are the store's: :mod:`regio.persistence.store.sqlite`.
"""

from __future__ import annotations

import sqlite3
import time

from .base import SessionRecords
from .errors import SessionLeasedError, conflict
from .sqlbatch import delete_keys, insert_rows
from .sqlite_checks import check_entries, check_records, lease_expiry
from .sqlitedb import lease_row

__all__ = ["delete", "release_lease", "renew_lease", "save", "try_lease"]


def save(
    db: sqlite3.Connection,
    url: str,
    session_id: str,
    records: SessionRecords,
    expected: int,
    token: str | None,
) -> int:
    """:meth:`regio.persistence.store.SQLiteStore.save`'s transaction: the new version, or
    :class:`SessionConflictError` / :class:`SessionLeasedError` / :class:`SessionLostError` /
    :class:`SessionDamagedError` (rolled back)."""
    _check_lease(db, url, session_id, token)
    row = db.execute(
        "SELECT version, transcript_count, ledger_count FROM sessions WHERE id = ?",
        (session_id,),
    ).fetchone()
    if row is not None and not all(type(v) is int for v in row):
        raise TypeError("the session row's version or counts are not integers")
    found = row[0] if row else 0
    if found != expected:
        raise conflict(url, session_id, expected, found)
    t_start = records.transcript_count - len(records.transcript)
    l_start = records.ledger_count - len(records.ledger)
    stored = (row[1], row[2]) if row else (0, 0)
    if stored != (t_start, l_start):
        raise conflict(url, session_id, expected, found)
    insert_rows(  # few statements, many rows each (sqlbatch)
        db,
        "INSERT INTO records",
        [(session_id, "t", t_start + i, d) for i, d in enumerate(records.transcript)]
        + [(session_id, "l", l_start + i, d) for i, d in enumerate(records.ledger)],
    )
    if row is not None:
        check_records(url, db, session_id, stored)
    _write_entries(db, session_id, records, new=row is None)
    check_entries(url, db, session_id, records)
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
    return expected + 1


def _check_lease(db: sqlite3.Connection, url: str, session_id: str, token: str | None) -> None:
    """Raise :class:`SessionLeasedError` when another writer holds a live lease on
    ``session_id`` (inside the save's transaction)."""
    row = lease_row(db, session_id)
    if row is None or row[0] == token:
        return
    left = lease_expiry(url, session_id, row[1]) - time.time()
    if left > 0:
        raise SessionLeasedError(
            f"{url}: session {session_id!r} is leased by another writer for "
            f"{left:.1f} s more; nothing was written. "
            + (
                "This writer's lease expired and was taken over: take a new lease, reload "
                "the session and redo the turn"
                if token
                else "Save under the session's lease (store.lease), or wait for it"
            ),
            session_id=session_id,
            expires_in=left,
        )


def _write_entries(
    db: sqlite3.Connection, session_id: str, records: SessionRecords, *, new: bool
) -> None:
    """Put and drop window entries inside the open save transaction (a new session starts
    from no entries)."""
    if new:
        db.execute("DELETE FROM entries WHERE session = ?", (session_id,))
    # few statements, many rows each: the transaction holds the file's lock (sqlbatch)
    delete_keys(db, "entries", session_id, list(records.drop))
    insert_rows(
        db,
        "INSERT OR REPLACE INTO entries",
        [(session_id, k, d) for k, d in records.put.items()],
    )


def try_lease(
    db: sqlite3.Connection, url: str, session_id: str, token: str, ttl: float
) -> float | None:
    """:meth:`regio.persistence.store.SQLiteStore.try_lease`'s transaction."""
    now = time.time()
    row = lease_row(db, session_id)
    if row is not None and row[0] != token:
        expires = lease_expiry(url, session_id, row[1])
        if expires > now:
            return expires - now
    db.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (session_id, token, now + ttl))
    return None


def renew_lease(db: sqlite3.Connection, session_id: str, token: str, ttl: float) -> bool:
    """:meth:`regio.persistence.store.SQLiteStore.renew_lease`'s transaction."""
    now = time.time()
    done = db.execute(
        "UPDATE leases SET expires = ? WHERE session = ? AND token = ? AND expires > ?",
        (now + ttl, session_id, token, now),
    ).rowcount
    return bool(done)


def release_lease(db: sqlite3.Connection, session_id: str, token: str) -> bool:
    """:meth:`regio.persistence.store.SQLiteStore.release_lease`'s transaction."""
    done = db.execute(
        "DELETE FROM leases WHERE session = ? AND token = ?", (session_id, token)
    ).rowcount
    return bool(done)


def delete(db: sqlite3.Connection, session_id: str) -> bool:
    """:meth:`regio.persistence.store.SQLiteStore.delete`'s transaction."""
    gone = db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
    db.execute("DELETE FROM records WHERE session = ?", (session_id,))
    db.execute("DELETE FROM entries WHERE session = ?", (session_id,))
    db.execute("DELETE FROM leases WHERE session = ?", (session_id,))
    return bool(gone)
