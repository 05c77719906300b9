"""A lazily read relief originals mapping is bounded by its load, like the transcript (which
reads only the records it counted): a record another writer saved after the load is never
handed to this session as its own (an error says to reload), and an original that vanished
from the store (its records, or the whole session, deleted) is an error, never a silent loss
in a later save."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence._lostparts import StoredPartsLostWarning
from regio.persistence.store import SessionConflictError, SessionStoreError, SQLiteStore
from store_support import redis_url
from test_store_originals_append_only import (
    COUNTER,
    _engine,
    _load,
    _result,
    _saved_session,
    _turn,
    store,
)

__all__ = ["redis_url", "store"]

_FOREIGN = "saved by another writer after this load"


def _restore(engine: Engine, call_id: str) -> tuple[bool, str]:
    out = engine.handle_tool_call("context_restore", {"call_id": call_id})
    return out.ok, out.text


def test_another_writers_original_is_never_this_sessions_and_the_agent_reads_why(
    store: Any, tmp_path: Path
) -> None:
    _saved_session(store, 10)
    a, b = _load(store), _load(store)
    _turn(a, 10, "c3")  # reuses a call id: replaces its original
    _turn(a, 11, "c40")  # a call b never saw
    a.save_to(store, "r")
    ok, text = _restore(b, "c3")
    assert not ok and _FOREIGN in text and "'@ro/c3'" in text  # never a's turn-10 text
    assert _result(10, "c3") not in text
    with pytest.raises(SessionStoreError, match=_FOREIGN):
        b.book.relief.originals.get("c40")
    assert _restore(b, "c5") == (True, _result(5, "c5"))  # what b loaded is b's
    with pytest.raises(SessionStoreError, match=_FOREIGN):
        b.save(tmp_path / "b.json")  # a file save would mix the two sessions
    with pytest.raises(SessionConflictError):
        b.save_to(store, "r")


def test_this_sessions_own_saved_originals_are_not_another_writers(
    store: Any, tmp_path: Path
) -> None:
    twin = _saved_session(store, 10)
    loaded = _load(store)
    for e in (twin, loaded):
        _turn(e, 10, "c3")
        _turn(e, 11, "c40")
    loaded.save_to(store, "r")
    _turn(loaded, 12, "c41")
    _turn(twin, 12, "c41")
    loaded.save_to(store, "r")
    for call in ("c3", "c40", "c41", "c2"):
        assert _restore(loaded, call) == _restore(twin, call)
    path = loaded.save(tmp_path / "s.json")
    again = Engine.load(path, token_counter=COUNTER)
    assert list(again.book.relief.originals) == list(twin.book.relief.originals)


_CALLS = st.integers(0, 14)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    mine=st.lists(_CALLS, max_size=3),
    theirs=st.lists(_CALLS, min_size=1, max_size=3),
    asked=st.lists(_CALLS, min_size=1, max_size=6),
)
def test_a_session_never_reads_an_original_another_writer_saved_after_its_load(
    tmp_path_factory: Any, mine: list[int], theirs: list[int], asked: list[int]
) -> None:
    db = SQLiteStore(Path(tmp_path_factory.mktemp("two")) / "s.db")
    try:
        twin = _saved_session(db, 8)  # b's history, never saved after the load
        a, b = _load(db), _load(db)
        for n, call in enumerate(theirs):
            _turn(a, 20 + n, f"c{call}")
        a.save_to(db, "r")
        for n, call in enumerate(mine):
            _turn(twin, 30 + n, f"c{call}")
            try:
                _turn(b, 30 + n, f"c{call}")
            except SessionStoreError as exc:  # a stage read an original a saved since
                assert _FOREIGN in str(exc)
                return
        for call in asked:
            ok, text = _restore(b, f"c{call}")
            want = _restore(twin, f"c{call}")
            assert (ok, text) == want or (not ok and _FOREIGN in text), (call, text)
            assert all(text != _result(20 + n, f"c{t}") for n, t in enumerate(theirs))
    finally:
        db.close()


def test_a_save_after_the_session_was_deleted_keeps_what_the_engine_holds_and_names_the_rest(
    tmp_path: Path,
) -> None:
    db, other = SQLiteStore(tmp_path / "s.db"), SQLiteStore(tmp_path / "t.db")
    try:
        _saved_session(db, 10)
        loaded = _load(db)
        db.delete("r")
        with pytest.warns(StoredPartsLostWarning, match="10 relief originals"):
            loaded.save_to(other, "r")
        assert other.sessions() == ["r"]  # the window and the engine's own state
        loaded.save(tmp_path / "s.json")  # nothing left to lose: saved as the engine is
        assert (tmp_path / "s.json").exists()
    finally:
        db.close()
        other.close()


def _drop_pair(db: SQLiteStore, call: str) -> None:
    with db._lock:
        db._db.execute(
            "DELETE FROM entries WHERE session = 'r' AND key IN (?, ?)",
            (f"@ro/{call}", f"@rn/{call}"),
        )


def test_a_deleted_original_is_found_by_any_read_of_them_all(tmp_path: Path) -> None:
    from regio.persistence.store import load_state

    db = SQLiteStore(tmp_path / "s.db")
    try:
        _saved_session(db, 12)
        _drop_pair(db, "c2")
        loaded = _load(db)
        with pytest.raises(SessionStoreError, match="holds 11 of the 12"):
            loaded.book.relief.originals.load_all()  # a read of them all names the loss
        with pytest.warns(StoredPartsLostWarning, match="1 of the 12 relief originals"):
            loaded.save(tmp_path / "x.msgpack")  # a save keeps the 11 it can read
        assert len(loaded.book.relief.originals) == 11
        with pytest.raises(SessionStoreError, match="holds 11 of the session's 12"):
            load_state(db, "r")  # the whole-session load reads them all at once
    finally:
        db.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_CALLS, st.booleans()), min_size=1, max_size=16))
def test_the_head_counts_the_sessions_originals_across_lazy_saves_and_reloads(
    turns: list[tuple[int, bool]],
) -> None:
    import tempfile

    from regio.persistence.store.base import read_head

    with tempfile.TemporaryDirectory() as folder:
        db = SQLiteStore(Path(folder) / "s.db")
        try:
            twin, engine = _engine(), _engine()
            for n, (call, reload) in enumerate(turns):
                for e in (twin, engine):
                    _turn(e, n, f"c{call}")
                engine.save_to(db, "r")
                head = db.load_window("r")[0]
                stored = read_head(head)
                assert stored is not None
                assert stored.originals_count == len(twin.book.relief.originals)
                if reload:
                    engine = _load(db)
                    assert engine.book.relief.originals.count == len(twin.book.relief.originals)
        finally:
            db.close()


def test_a_head_saved_before_the_count_was_stored_still_loads(tmp_path: Path) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        twin = _saved_session(db, 10)
        with db._lock:
            (head,) = db._db.execute("SELECT head FROM sessions WHERE id = 'r'").fetchone()
            fields = msgspec.msgpack.decode(head)
            del fields["originals_count"]
            db._db.execute(
                "UPDATE sessions SET head = ? WHERE id = 'r'", (msgspec.msgpack.encode(fields),)
            )
        loaded = _load(db)
        assert loaded.book.relief.originals.count is None
        path = loaded.save(tmp_path / "s.json")
        again = Engine.load(path, token_counter=COUNTER)
        assert list(again.book.relief.originals) == list(twin.book.relief.originals)
    finally:
        db.close()
