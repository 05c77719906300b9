"""What the SQLite store checks (:mod:`regio.persistence.store.sqlite`): the rows a load reads have
the column types a save writes (a damaged file can hold any SQLite value), a lease row's expiry is
a finite time, and, inside a save's transaction, the stored session still holds what its last
save left (the first and last of its records, and exactly the window records the save
describes), so a save over a dropped table or deleted rows raises
:class:`regio.persistence.store.SessionDamagedError` instead of reporting success over a session no
load can read. Each check costs key lookups or one count bounded by the window.
"""

from __future__ import annotations

import itertools
import math
import sqlite3
from collections.abc import Sequence
from typing import Any

from .base import SessionRecords
from .errors import SessionDamagedError
from .failures import incomplete_session, sqlite_failure
from .originals import ORIGINALS_PREFIXES

__all__ = [
    "HIGH",
    "LOW",
    "check_entries",
    "check_pairs",
    "check_records",
    "check_row",
    "lease_expiry",
]

#: The key range of the relief originals' records (``@rn/...`` and ``@ro/...``, adjacent in
#: key order; no other record key falls between): a load of a ``regio.session-head/6`` head
#: reads the entries below ``LOW`` and from ``HIGH`` on.
LOW, HIGH = "@rn/", "@ro0"


def check_records(
    url: str, db: sqlite3.Connection, session_id: str, counts: tuple[int, int]
) -> None:
    """Raise :class:`SessionDamagedError` (inside the save's transaction) when the first or
    the last of the records the session row counts is not stored (a dropped or emptied
    ``records`` table): key lookups, one statement per kind."""
    for kind, count, what in (("t", counts[0], "transcript"), ("l", counts[1], "usage")):
        wanted = sorted({0, count - 1}) if count else []
        if not wanted:
            continue
        marks = ", ".join("?" * len(wanted))
        (found,) = db.execute(
            f"SELECT COUNT(*) FROM records WHERE session = ? AND kind = ? AND seq IN ({marks})",
            (session_id, kind, *wanted),
        ).fetchone()
        if found != len(wanted):
            raise incomplete_session(url, session_id, f"the {count} {what} records")


def check_entries(
    url: str, db: sqlite3.Connection, session_id: str, records: SessionRecords
) -> None:
    """Raise :class:`SessionDamagedError` (inside the save's transaction, after its puts
    and drops) when the session's keyed records are not the ones the save describes
    (``records.digests``, the relief originals aside): one count over the session's keys,
    bounded by the window."""
    (found,) = db.execute(
        "SELECT COUNT(*) FROM entries WHERE session = ? AND (key < ? OR key >= ?)",
        (session_id, LOW, HIGH),
    ).fetchone()
    keys = records.digests.keys()
    want = len(keys) - sum(map(str.startswith, keys, itertools.repeat(ORIGINALS_PREFIXES)))
    if found != want:
        raise incomplete_session(url, session_id, f"the window records ({found} of {want} stored)")


def lease_expiry(url: str, session_id: str, value: object) -> float:
    """A lease row's expiry (seconds since the epoch); raises :class:`SessionDamagedError`
    for one that is no finite number (such a lease would hold the session forever)."""
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    raise SessionDamagedError(
        f"{url}: the lease of session {session_id!r} expires at {value!r}, never, so it would "
        "hold the session forever (regio of before 2026-12 took a lease with ttl=inf); nothing "
        f"was done: delete it (DELETE FROM leases WHERE session = '{session_id}') once no "
        "writer works on the session",
        session_id=session_id,
    )


def check_row(
    url: str, session_id: str, row: Sequence[object], rows: list[Any], entries: list[Any]
) -> None:
    """Raise :class:`SessionStoreError` (damaged) when the rows read for a load do not have
    the column types a save writes (a damaged file can hold any SQLite value)."""
    ok = (
        isinstance(row[0], bytes)
        and all(type(v) is int for v in row[1:4])
        and all(isinstance(d, bytes) for _, d in rows)
    )
    if not ok:
        raise sqlite_failure(
            url,
            f"load session {session_id!r}",
            TypeError("the session row or a record has a value of the wrong type"),
            wrote=False,
            session_id=session_id,
        )
    check_pairs(url, session_id, entries)


def check_pairs(url: str, session_id: str, rows: list[Any]) -> None:
    """Raise :class:`SessionStoreError` (damaged) when a keyed record is not (text, blob)."""
    if not all(isinstance(k, str) and isinstance(d, bytes) for k, d in rows):
        raise sqlite_failure(
            url,
            f"load session {session_id!r}",
            TypeError("a keyed record has a value of the wrong type"),
            wrote=False,
            session_id=session_id,
        )
