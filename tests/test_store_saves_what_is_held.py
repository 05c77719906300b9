"""A save never loses what the engine holds and never reports success over a session no load
can read.

* An engine loaded from a store (its transcript, usage records and relief originals read on
  first use) whose session is deleted after the load can still be saved: ``save_to(...,
  create=True)``, a save under another id and ``Engine.save`` to a file keep the window and
  every turn since the load, leave out only what the store lost and say which (a warning and
  a ``stored_parts_lost`` event).
* A save over a stored session whose records or window entries were dropped (a dropped table
  or key, deleted rows) is refused with :class:`SessionDamagedError` naming the fix, never
  reported as done; the fix it names works.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from regio.engine import Engine
from regio.persistence._lostparts import StoredPartsLost, StoredPartsLostWarning
from regio.persistence.store import (
    SessionDamagedError,
    SessionHistoryLostError,
    SessionLostError,
    SQLiteStore,
)
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from store_support import HistorySession, redis_url, sqlite_or_redis

__all__ = ["redis_url"]


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Path) -> Any:
    yield from sqlite_or_redis(request, tmp_path / "sessions.db", f"held:{request.node.name}:")


def _load(store: Any, sid: str) -> Engine:
    counter = get_counter("heuristic")
    return Engine.load_from(
        store,
        sid,
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter, max_summary_tokens=200),
        clock=lambda: 0.0,
    )


def _users(engine: Engine) -> list[str]:
    return [
        r.entry.text
        for r in engine.transcript()
        if r.kind == "message" and r.entry is not None and r.entry.role == "user"
    ]


def _lost_session(store: Any) -> tuple[Engine, int]:
    """An engine loaded from ``store`` (4 turns with relief originals and usage), one turn
    played after the load, then the session deleted from the store; and how many transcript
    records the store held."""
    session = HistorySession(relief=True)
    session.advance_to(4)
    session.engine.observe({"input_tokens": 100, "output_tokens": 10})
    session.engine.save_to(store, "s")
    held = len(session.engine.transcript())
    lazy = _load(store, "s")
    lazy.add_user("after the load: please check item 9")
    lazy.observe({"input_tokens": 200, "output_tokens": 20})
    store.delete("s")
    return lazy, held


def _saved_without_the_lost_parts(engine: Engine, events: list[Any], held: int) -> None:
    (lost,) = [e for e in events if isinstance(e, StoredPartsLost)]
    assert any(f"{held} transcript records stored before the load" in p for p in lost.parts)
    assert any("usage records" in p for p in lost.parts)
    assert any("relief originals" in p for p in lost.parts)
    assert _users(engine) == ["after the load: please check item 9"]


def test_a_create_save_of_an_engine_whose_session_vanished_keeps_what_it_holds(
    store: Any,
) -> None:
    lazy, held = _lost_session(store)
    window = lazy.window.snapshot_state()
    with pytest.raises(SessionLostError, match="create=True"):
        lazy.save_to(store, "s")  # the advice the error gives is the one that works now
    events: list[Any] = []
    lazy.subscribe(events.append)
    with pytest.warns(
        StoredPartsLostWarning, match=f"{held} transcript records stored before the load"
    ):
        lazy.save_to(store, "s", create=True)
    _saved_without_the_lost_parts(lazy, events, held)
    back = _load(store, "s")
    assert back.window.snapshot_state() == window  # the whole window, as held
    assert _users(back) == ["after the load: please check item 9"]
    assert back.ledger.count == 1
    back.add_user("and the next turn")
    back.save_to(store, "s")  # an ordinary session again
    assert _users(_load(store, "s"))[-1] == "and the next turn"


def test_a_file_save_and_a_save_under_another_id_keep_what_the_engine_holds(
    store: Any, tmp_path: Path
) -> None:
    lazy, held = _lost_session(store)
    events: list[Any] = []
    lazy.subscribe(events.append)
    with pytest.warns(StoredPartsLostWarning):
        path = lazy.save(tmp_path / "kept.json")
    _saved_without_the_lost_parts(lazy, events, held)
    assert _users(Engine.load(path)) == ["after the load: please check item 9"]
    lazy.save_to(store, "elsewhere", create=True)  # nothing left to lose: no second warning
    assert _users(_load(store, "elsewhere")) == ["after the load: please check item 9"]


def test_reading_the_lost_history_says_how_to_save_the_rest(store: Any) -> None:
    lazy, _ = _lost_session(store)
    with pytest.raises(SessionHistoryLostError, match=r"save_to\(store, id, create=True\)"):
        lazy.transcript()


# ----- a save over a damaged session -------------------------------------------------------------
def _damage(store: Any, part: str) -> Any:
    """Drop part of stored session ``s``: its window records or its transcript records (SQLite:
    their rows deleted, or the whole table dropped and the file opened again, which recreates
    the table empty); returns the store to save to."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as db:
            table = "entries" if part.startswith("window") else "records"
            if not part.endswith("table"):
                db.execute(f"DELETE FROM {table} WHERE session = 's'")
                return store
            db.execute(f"DROP TABLE {table}")
        store.close()
        return SQLiteStore(store.path)
    keys = store._keys("s")
    store.client.delete(keys[4] if part.startswith("window") else keys[2])
    return store


@pytest.mark.parametrize("part", ["window", "records", "window table", "records table"])
def test_a_save_over_a_session_missing_what_its_last_save_left_is_refused_with_the_fix(
    store: Any, part: str
) -> None:
    if part.endswith("table") and not isinstance(store, SQLiteStore):
        pytest.skip("a Redis session has no tables: its keys are deleted in the other cases")
    session = HistorySession()
    session.advance_to(3)
    engine = session.engine
    engine.save_to(store, "s")
    store = _damage(store, part)
    engine.add_user("one more turn: please check item 7")
    with pytest.raises(SessionDamagedError, match="no longer holds") as caught:
        engine.save_to(store, "s")
    assert "create=True" in str(caught.value)
    # the fix it names: the whole engine under a new id loads back with everything
    engine.save_to(store, "s2", create=True)
    back = _load(store, "s2")
    assert back.window.snapshot_state() == engine.window.snapshot_state()
    assert _users(back) == _users(engine)
    if part.endswith("table"):
        store.close()
