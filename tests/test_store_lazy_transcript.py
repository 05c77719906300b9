"""A session loaded from a store reads its transcript on first use: counting, appending and
saving never read or decode the stored records; reading them gives the whole history, in
order, as the engine that saved it had it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence.store import SessionNotFoundError, SessionStoreError, SQLiteStore
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import StubCounter, make_engine
from store_support import play_turn, redis_url, sqlite_or_redis

__all__ = ["redis_url"]


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Path) -> Any:
    yield from sqlite_or_redis(request, tmp_path / "sessions.db", f"lz:{request.node.name}:")


def _clock() -> float:
    return 1_764_547_200.0


def store_engine() -> Engine:
    regions = [Pinned(name="system", budget=2_000), SlidingWindow(name="conversation", budget=900)]
    return make_engine(regions, max_tokens=4_000, session_id="s", clock=_clock)


def _load(store: Any, sid: str = "s") -> Engine:
    return Engine.load_from(store, sid, token_counter=StubCounter(), clock=_clock)


def _saved(store: Any, turns: int) -> Engine:
    engine = store_engine()
    for turn in range(1, turns + 1):
        play_turn(engine, turn)
        engine.save_to(store)
    return engine


def test_a_loaded_session_reads_no_transcript_until_it_is_used(store: Any) -> None:
    engine = _saved(store, 6)
    loaded = _load(store)
    assert not loaded.transcript_log.decoded
    assert len(loaded.transcript_log) == len(engine.transcript_log)
    assert loaded.snapshot().transcript_records == len(engine.transcript_log)
    for e in (engine, loaded):
        play_turn(e, 7)
    loaded.save_to(store)
    assert not loaded.transcript_log.decoded  # a turn and an incremental save read nothing
    assert loaded.transcript() == engine.transcript()
    assert loaded.transcript_log.decoded
    assert [r.seq for r in loaded.transcript()] == list(range(len(engine.transcript_log)))
    assert _load(store).transcript() == engine.transcript()


def test_a_loaded_session_gives_the_messages_of_an_earlier_turn(store: Any) -> None:
    engine = _saved(store, 4)
    loaded = _load(store)
    assert loaded.new_items(2) == engine.new_items(2)
    assert loaded.transcript_log.export() == engine.transcript_log.export()


def test_the_transcript_is_read_after_the_sqlite_store_is_closed(tmp_path: Path) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    engine = _saved(db, 3)
    loaded = _load(db)
    db.close()
    assert loaded.transcript() == engine.transcript()


def test_a_transcript_of_a_session_deleted_since_the_load_is_a_clear_error(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    _saved(db, 3)
    loaded = _load(db)
    db.delete("s")
    with pytest.raises(SessionStoreError, match=r"'s'.*deleted since"):
        loaded.transcript()
    assert len(loaded.window.conversation.entries) > 0  # the window is intact
    db.close()


ACTIONS = st.lists(st.sampled_from(["turn", "save", "reload", "read"]), min_size=1, max_size=14)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=ACTIONS)
def test_any_turns_saves_loads_and_reads_keep_the_whole_history_in_order(
    tmp_path_factory: Any, actions: list[str]
) -> None:
    db = SQLiteStore(Path(tmp_path_factory.mktemp("lazy")) / "s.db")
    reference, engine = store_engine(), store_engine()
    turn = 0
    engine.save_to(db)
    for action in actions:
        if action == "turn":
            turn += 1
            play_turn(reference, turn)
            play_turn(engine, turn)
        elif action == "save":
            engine.save_to(db)
        elif action == "reload":
            engine.save_to(db)
            engine = _load(db)
        else:
            assert engine.transcript() == reference.transcript()
        assert len(engine.transcript_log) == len(reference.transcript_log)
    engine.save_to(db)
    assert _load(db).transcript() == reference.transcript()
    assert engine.transcript() == reference.transcript()
    db.close()


def test_load_window_returns_what_load_does_with_the_transcript_counted(store: Any) -> None:
    _saved(store, 5)
    head, transcript, ledger, version, entries = store.load("s")
    window = (head, len(transcript), len(ledger), ledger[-1], version, entries)
    assert store.load_window("s") == window
    assert store.transcript_records("s", len(transcript)) == transcript
    assert store.transcript_records("s", 2) == transcript[:2]
    assert store.transcript_records("s", 0) == []
    assert store.usage_records("s", len(ledger)) == ledger
    assert store.usage_records("s", 1) == ledger[:1]


def test_a_loaded_session_reads_no_usage_record_but_the_newest_until_it_is_used(
    store: Any,
) -> None:
    engine = _saved(store, 5)
    loaded = _load(store)
    store.delete("s")  # only the newest usage record was read by the load
    assert loaded.ledger.count == engine.ledger.count == 5
    assert loaded.ledger.last == engine.ledger.last
    assert loaded.ledger.totals() == engine.ledger.totals()  # the head's totals: no read
    with pytest.raises(SessionStoreError, match=r"'s'.*usage records.*deleted since"):
        loaded.ledger.records  # noqa: B018


def test_usage_observed_after_a_load_continues_the_stored_ledger(store: Any) -> None:
    engine = _saved(store, 4)
    loaded = _load(store)
    for e in (engine, loaded):
        play_turn(e, 5)
    assert loaded.ledger.last == engine.ledger.last  # index 4, after the 4 stored ones
    loaded.save_to(store)
    assert loaded.ledger.records == engine.ledger.records
    assert _load(store).ledger.records == engine.ledger.records
    assert _load(store).ledger.totals() == engine.ledger.totals()


def test_load_window_of_a_missing_session_is_not_found(store: Any) -> None:
    with pytest.raises(SessionNotFoundError, match="nobody"):
        store.load_window("nobody")


def test_a_store_load_reads_the_transcript_from_the_store_on_first_use(store: Any) -> None:
    _saved(store, 3)
    loaded = _load(store)
    store.delete("s")  # the records were not read by the load
    with pytest.raises(SessionStoreError, match=r"'s'.*deleted since"):
        loaded.transcript()
    assert len(loaded.window.conversation.entries) > 0  # the window is intact


def test_new_items_after_a_store_load_read_only_the_new_turn(store: Any) -> None:
    engine = _saved(store, 4)
    loaded = _load(store)
    for e in (engine, loaded):
        play_turn(e, 5)
    assert loaded.new_items() == engine.new_items()
    assert len(loaded.new_items()) == 3  # user, assistant tool_use, tool_result
    assert not loaded.transcript_log.decoded  # the stored turns were not decoded
    assert loaded.new_items(4) == engine.new_items(4)  # an earlier turn reads them
    assert loaded.transcript_log.decoded


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.integers(1, 6), extra=st.integers(0, 2), ask=st.integers(0, 9))
def test_property_new_items_after_a_store_load_are_the_saved_engines(
    tmp_path_factory: Any, turns: int, extra: int, ask: int
) -> None:
    db = SQLiteStore(Path(tmp_path_factory.mktemp("new")) / "s.db")
    engine = _saved(db, turns)
    loaded = _load(db)
    for turn in range(turns + 1, turns + 1 + extra):
        for e in (engine, loaded):
            play_turn(e, turn)
    assert loaded.new_items(ask) == engine.new_items(ask)
    db.close()
