"""Each engine restored from one loaded state owns its compaction book and relief originals:
what one engine does (a turn's originals, stage tallies, compactions) never shows in another
restored from the same state, nor in the state itself."""

from __future__ import annotations

from pathlib import Path

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence._load import restore_engine
from regio.persistence.store import SQLiteStore, load_state
from test_store_originals_append_only import COUNTER, _saved_session, _turn


def _book(engine: Engine) -> bytes:
    engine.book.relief.originals.load_all()
    return msgspec.msgpack.encode(engine.book)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 20), min_size=1, max_size=8))
def test_engines_restored_from_one_state_share_no_bookkeeping(calls: list[int]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        db = SQLiteStore(Path(folder) / "s.db")
        try:
            _saved_session(db, 12)
            state, _mark = load_state(db, "r")
            before = msgspec.msgpack.encode(state.book)
            first = restore_engine(Engine, state, token_counter=COUNTER)
            second = restore_engine(Engine, state, token_counter=COUNTER)
            untouched = _book(second)
            for n, call in enumerate(calls):
                _turn(first, 40 + n, f"c{call}")  # new and reused call ids, compactions
            assert _book(first) != untouched
            assert _book(second) == untouched
            assert msgspec.msgpack.encode(state.book) == before
        finally:
            db.close()


def test_a_lazy_load_saves_incrementally_with_its_own_copy_of_the_originals(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        _saved_session(db, 12)
        loaded = Engine.load_from(db, "r", token_counter=COUNTER, clock=lambda: 0.0)
        _turn(loaded, 12, "c12")
        from regio.persistence.store import encode_save

        put = encode_save(loaded, loaded.store_mark).put
        assert sorted(k for k in put if k.startswith(("@ro/", "@rn/"))) == ["@rn/c12", "@ro/c12"]
        assert loaded.book.relief.originals.lazy  # the save read no stored original
    finally:
        db.close()
