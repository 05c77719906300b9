"""Many rows in few SQLite statements: a write transaction that holds a lock releases the
interpreter's lock as few times as it can.

Python's ``sqlite3`` releases the GIL around every step of every statement (each row of an
``executemany`` is a step) and must take it back after. While another thread runs Python code,
taking it back waits for that thread's switch interval (5 ms by default,
:func:`sys.getswitchinterval`), and a save holds the SQLite file's writer lock
(:mod:`regio.persistence.store.sqlitedb`) through all its steps, so every writer queued behind
it waits as long. ``benchmarks/test_bench_store_contention.py`` measures it on a session of the
coding example: with one thread spinning beside the saver, a save of 36 single-row steps took
352 ms at the median (a few ms of CPU) and the save after a compaction, 1,223 steps, 11.9 s.

:func:`insert_rows` writes rows with multi-row ``VALUES`` and :func:`delete_keys` deletes keys
with ``IN (...)``, up to :data:`CHUNK_ROWS` rows a statement: one statement for the rows of a
turn. A table's statements then have up to 64 shapes, so the connections keep
:data:`STATEMENT_CACHE` prepared statements (``sqlite3.connect(cached_statements=...)``; the
default, 128, would prepare some of them again, and a prepare releases the GIL too).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["CHUNK_ROWS", "STATEMENT_CACHE", "chunks", "delete_keys", "insert_rows"]

#: Most rows of one statement (64 rows of 4 columns bind 256 variables, far under SQLite's
#: limit of 32,766).
CHUNK_ROWS = 64
#: Prepared statements a connection keeps (module doc).
STATEMENT_CACHE = 512


def chunks(count: int) -> Iterator[tuple[int, int]]:
    """``(start, size)`` spans covering ``count`` rows, each of at most :data:`CHUNK_ROWS`
    (``150`` -> ``(0, 64), (64, 64), (128, 22)``)."""
    for start in range(0, count, CHUNK_ROWS):
        yield start, min(CHUNK_ROWS, count - start)


def insert_rows(db: sqlite3.Connection, head: str, rows: Sequence[Sequence[Any]]) -> None:
    """Run ``head`` (``"INSERT INTO t"``, ``"INSERT OR REPLACE INTO t"``) with ``VALUES`` for
    every row of ``rows`` (all of one width), a chunk per statement. Raises ``sqlite3.Error``
    as ``executemany`` would (the caller's transaction rolls back)."""
    if not rows:
        return
    width = len(rows[0])
    one = "(" + ", ".join("?" * width) + ")"
    for start, size in chunks(len(rows)):
        args = [value for row in rows[start : start + size] for value in row]
        db.execute(f"{head} VALUES {', '.join([one] * size)}", args)


def delete_keys(db: sqlite3.Connection, table: str, session_id: str, keys: Sequence[str]) -> None:
    """``DELETE FROM table WHERE session = ? AND key IN (...)`` for ``keys``, a chunk per
    statement."""
    for start, size in chunks(len(keys)):
        marks = ", ".join("?" * size)
        db.execute(
            f"DELETE FROM {table} WHERE session = ? AND key IN ({marks})",
            [session_id, *keys[start : start + size]],
        )
