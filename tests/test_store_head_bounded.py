"""A stored session's head does not grow with the session: what is sized by the window (each
region's entry order, the last request's block index, the layout states with their settled
entry ids) is kept in records written when they change, so the head holds only what every
session has (options, counters, calibration, bookkeeping)."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence.store import SQLiteStore, encode_save
from regio.persistence.store.base import _Head
from regio.persistence.store.parts import PARTS_PREFIXES, StateRef
from runtime_stubs import StubCounter
from store_support import HistorySession, play_turn, store_engine

#: Bytes a head may gain over a session: counters and version numbers gain digits.
SLACK = 512


def _head(engine: Engine) -> int:
    return len(encode_save(engine, engine.store_mark).head)


def test_the_head_at_turn_1500_is_the_size_of_the_head_at_turn_100() -> None:
    session = HistorySession()  # a summary history that fills over the first ~1,000 turns
    session.advance_to(100)
    early = _head(session.engine)
    session.advance_to(1_500)
    late = _head(session.engine)
    assert late <= early + SLACK, (early, late)


def test_the_head_holds_no_entry_order_request_index_or_layout_state() -> None:
    session = HistorySession(notes=True)  # a grows region whose notes settle
    session.advance_to(120)
    head = msgspec.msgpack.decode(encode_save(session.engine, None).head, type=_Head)
    assert head.order == {} and head.request is None and head.parts is None
    assert head.lists and all(k.startswith(PARTS_PREFIXES) for k in head.lists)
    assert {"@o/conversation", "@i", "@s/L/s/notes", "@s/C/s/notes"} <= set(head.lists)
    state = msgspec.msgpack.decode(bytes(head.state))
    assert state["last_request"]["state"].get("settled", {}) == {}
    assert state.get("layout_input", [None, None])[1] is None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.integers(1, 120), words=st.integers(1, 60))
def test_property_the_head_size_does_not_follow_the_window_or_the_turns(
    turns: int, words: int
) -> None:
    engine = store_engine()  # a window that is never full: every turn adds to it
    play_turn(engine, 1, words)
    first = _head(engine)
    for turn in range(2, turns + 1):
        play_turn(engine, turn, words)
    assert _head(engine) <= first + SLACK


def test_a_session_with_its_head_parts_loads_and_renders_the_same(tmp_path: Any) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    engine = store_engine()
    for turn in range(1, 30):
        play_turn(engine, turn)
        if turn % 7 == 0:
            engine.save_to(db)
    engine.save_to(db)
    loaded = Engine.load_from(db, "s", token_counter=StubCounter())
    assert loaded.state.layout_state == engine.state.layout_state
    assert loaded.state.layout_input == engine.state.layout_input
    assert loaded.state.last_request == msgspec.structs.replace(
        engine.state.last_request, events=()
    )
    assert loaded.request()[1] == engine.request()[1]
    db.close()


def _saved_then_encoded(session: HistorySession, db: SQLiteStore, turn: int) -> Any:
    """Save ``session`` at ``turn - 1`` into ``db``, play ``turn``, and encode the next save."""
    session.advance_to(turn - 1)
    session.engine.save_to(db, "h")
    session.advance_to(turn)
    return encode_save(session.engine, session.engine.store_mark)


def _layouts(records: Any) -> tuple[StateRef | None, StateRef | None]:
    head = msgspec.msgpack.decode(records.head, type=_Head)
    assert head.states is not None
    return head.states


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn=st.integers(2, 60))
def test_property_a_layout_state_carried_over_from_the_last_save_is_never_written_again(
    tmp_path_factory: Any, turn: int
) -> None:
    db = SQLiteStore(tmp_path_factory.mktemp("ls") / "s.db")
    try:
        session = HistorySession()
        session.advance_to(turn - 1)
        before = encode_save(session.engine, session.engine.store_mark)
        records = _saved_then_encoded(session, db, turn)
        last, carried = _layouts(records)
        previous = _layouts(before)[0]
        assert carried is not None and previous is not None
        assert carried.rest == previous.rest  # the remainder the last save wrote for slot L
        assert carried.rest in records.digests and carried.rest not in records.put
        assert last is not None and last.rest in records.put  # the new request's state is new
        # the carried slot's settled ids are the last save's: none of its nodes is new, except
        # where the list changed by the one request between the two saves
        carried_nodes = [k for k in records.put if k.startswith("@s/C/")]
        assert len(carried_nodes) <= 8, carried_nodes
    finally:
        db.close()


def test_a_session_saved_every_turn_loads_its_layout_states(tmp_path: Any) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        session = HistorySession()
        for turn in range(1, 25):
            session.advance_to(turn)
            session.engine.save_to(db, "h")
        loaded = Engine.load_from(db, "h", token_counter=session.engine.counter)
        engine = session.engine
        assert loaded.state.layout_input == engine.state.layout_input
        assert loaded.state.last_request == msgspec.structs.replace(
            engine.state.last_request, events=()
        )
        assert (
            loaded.request("anthropic", "claude-sonnet-4-6")[1]
            == engine.request("anthropic", "claude-sonnet-4-6")[1]
        )
    finally:
        db.close()
