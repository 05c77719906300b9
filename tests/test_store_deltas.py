"""Window deltas in the session stores: a save writes the window entries that are new or
changed and drops the ones that left, so its bytes follow the turn; loads stay exact."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence._statefile import engine_state
from regio.persistence.store import (
    SessionConflictError,
    SessionRecords,
    SessionStoreError,
    SQLiteStore,
    encode_save,
)
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import make_engine
from store_support import load, play_turn, redis_url, sqlite_or_redis

__all__ = ["redis_url"]


def small_engine(session_id: str = "s") -> Engine:
    """An engine whose conversation is full after a few turns (then it evicts)."""
    return make_engine(
        [Pinned(name="system", budget=2_000), SlidingWindow(name="conversation", budget=600)],
        max_tokens=6_000,
        session_id=session_id,
    )


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Any) -> Any:
    yield from sqlite_or_redis(request, tmp_path / "sessions.db", f"d:{request.node.name}:")


def _keys(engine: Engine) -> set[str]:
    return {f"{r.name}/{e.id}" for r in engine.window.regions for e in r.entries}


def window_keys(keys: Any) -> set[str]:
    """The window-entry keys among record keys (the last request's blocks are ``@lb/...``)."""
    return {k for k in keys if not k.startswith("@")}


def test_a_save_puts_only_the_new_turn_and_drops_what_left_the_window(store):
    engine = small_engine()
    for turn in range(1, 20):
        play_turn(engine, turn)
        engine.save_to(store)
    before = _keys(engine)
    stored_blocks = {k for k in engine.store_mark.entries if k.startswith("@lb/")}
    play_turn(engine, 20)
    records = encode_save(engine, engine.store_mark)
    after = _keys(engine)
    assert window_keys(records.put) == after - before
    assert window_keys(records.drop) == before - after
    assert records.drop, "the window is full, so the turn evicted something"
    assert len(window_keys(records.put)) == 3  # user, assistant tool_use, tool_result
    # the request's blocks put are exactly the new turn's (from its user message to the end:
    # its three messages' blocks); the unchanged blocks stay
    new_ids = {k.split("/", 1)[1] for k in after - before}
    request = engine.state.last_request.blocks
    first = next(i for i, b in enumerate(request) if b.source in new_ids)
    blocks = {k for k in records.digests if k.startswith("@lb/")}
    assert {k for k in records.put if k.startswith("@lb/")} == blocks - stored_blocks
    assert len(blocks - stored_blocks) == len(request) - first == 4  # tool_use: 2 blocks
    assert {k for k in records.drop if k.startswith("@lb/")} == stored_blocks - blocks


def test_bytes_per_save_follow_the_turn_once_the_window_is_full(store):
    engine = small_engine()
    sizes = []
    for turn in range(1, 61):
        play_turn(engine, turn)
        sizes.append(encode_save(engine, engine.store_mark).size)
        engine.save_to(store)
    assert max(sizes[40:]) <= 1.3 * sizes[9]
    delta = encode_save(engine, engine.store_mark)  # nothing changed since the last save
    assert not delta.put and not delta.drop
    full = encode_save(engine, None)  # a first save puts the whole window, entry by entry
    assert window_keys(full.put) == _keys(engine)
    for region in engine.window.regions:
        for entry in region.entries:
            assert full.put[f"{region.name}/{entry.id}"] == msgspec.msgpack.encode(entry)


def test_an_engine_loaded_from_the_store_saves_deltas_against_what_is_stored(store):
    engine = small_engine()
    for turn in range(1, 12):
        play_turn(engine, turn)
        engine.save_to(store)
    loaded = load(store)
    play_turn(loaded, 12)
    records = encode_save(loaded, loaded.store_mark)
    assert len(window_keys(records.put)) == 3
    loaded.save_to(store)
    play_turn(engine, 12)  # the same turn on the original engine
    assert engine_state(load(store)).window == engine_state(engine).window


def test_a_conflicting_save_leaves_the_stored_window_untouched(store):
    engine = small_engine()
    for turn in range(1, 8):
        play_turn(engine, turn)
    engine.save_to(store)
    stale = load(store)
    play_turn(engine, 8)
    engine.save_to(store)
    play_turn(stale, 8)
    play_turn(stale, 9)
    with pytest.raises(SessionConflictError):
        stale.save_to(store)
    assert engine_state(load(store)) == engine_state(engine)


def test_a_stored_window_missing_an_entry_is_reported_as_damaged(tmp_path):
    db = SQLiteStore(tmp_path / "s.db")
    engine = small_engine()
    play_turn(engine, 1)
    engine.save_to(db)
    key = next(iter(engine.store_mark.entries))
    db._db.execute("DELETE FROM entries WHERE key = ?", (key,))
    with pytest.raises(SessionStoreError, match="lacks entries"):
        load(db)
    db.close()


def test_a_session_with_a_whole_window_head_still_loads(tmp_path):
    # heads written before window entries were keyed records hold the whole EngineState
    db = SQLiteStore(tmp_path / "s.db")
    engine = small_engine()
    for turn in range(1, 4):
        play_turn(engine, turn)
    state = engine_state(engine)
    head = msgspec.msgpack.encode(msgspec.structs.replace(state, transcript=[], ledger=[]))
    new = encode_save(engine, None)
    db.save(
        "s",
        SessionRecords(head, new.transcript, new.ledger, new.transcript_count, new.ledger_count),
        expected=0,
    )
    assert engine_state(load(db)) == state
    db.close()


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=st.lists(st.sampled_from(["turn", "save", "reload"]), min_size=1, max_size=25))
def test_any_mix_of_turns_saves_and_reloads_restores_the_window(tmp_path_factory, plan):
    db = SQLiteStore(tmp_path_factory.mktemp("deltas") / "s.db")
    engine = small_engine()
    turn = 0
    for step in plan:
        if step == "turn":
            turn += 1
            play_turn(engine, turn)
        elif step == "save":
            engine.save_to(db)
        elif engine.store_mark is not None:
            engine.save_to(db)
            engine = load(db)
    engine.save_to(db)
    assert engine_state(load(db)) == engine_state(engine)
    db.close()


def _relief_engine(session_id: str = "s") -> Engine:
    """An engine whose relief chain trims every ``cat`` result on admission (so it keeps the
    original for ``context_restore``)."""
    from regio.policies.relief import ReliefPolicy, ToolRelief

    return make_engine(
        [Pinned(name="system", budget=2_000), SlidingWindow(name="conversation", budget=60_000)],
        max_tokens=80_000,
        session_id=session_id,
        relief=ReliefPolicy(tools={"cat": ToolRelief(max_result_tokens=30)}),
    )


def _cat(engine: Engine, i: int) -> str:
    from regio.content import ToolUse

    text = "\n".join(f"line {j} of file {i} " + "x" * 40 for j in range(60))
    engine.add_assistant("", [ToolUse(f"c{i}", "cat", {"path": f"f{i}.py"})])
    engine.add_tool_result(f"c{i}", text)
    return text


def test_relief_originals_are_written_once_not_with_every_head(store: Any) -> None:
    engine = _relief_engine()
    engine.add_user("read the files")
    heads = []
    for i in range(12):
        _cat(engine, i)
        records = encode_save(engine, engine.store_mark)
        heads.append(len(records.head))
        assert sum(k.startswith("@ro/") for k in records.put) == 1  # only the new original
        engine.save_to(store, "s")
    assert len(engine.session.book.relief.originals) == 12
    # each original is ~3 kB: a head that carried them would grow by that per turn
    assert heads[-1] - heads[0] < 1_000


def test_relief_originals_survive_a_store_round_trip_byte_for_byte(store: Any) -> None:
    engine = _relief_engine()
    engine.add_user("read the files")
    texts = [_cat(engine, i) for i in range(3)]
    engine.save_to(store, "s")
    loaded = load(store)
    for i, text in enumerate(texts):
        assert loaded.handle_tool_call("context_restore", {"call_id": f"c{i}"}).text == text
    texts.append(_cat(loaded, 3))
    loaded.save_to(store, "s")
    again = load(store)
    assert again.handle_tool_call("context_restore", {"call_id": "c3"}).text == texts[3]
    assert engine_state(again).book == engine_state(loaded).book


@pytest.mark.parametrize("prefix", ["@o/conversation/", "@i/", "@s/L/s/", "@lr/"])
def test_a_stored_list_missing_a_node_is_reported_as_damaged(tmp_path, prefix):
    from store_support import HistorySession

    db = SQLiteStore(tmp_path / "s.db")
    session = HistorySession(notes=True)
    session.advance_to(30)
    session.engine.save_to(db, "h")
    keys = [k for (k,) in db._db.execute("SELECT key FROM entries WHERE session = 'h'")]
    victim = next(k for k in keys if k.startswith(prefix))
    db._db.execute("DELETE FROM entries WHERE key = ?", (victim,))
    with pytest.raises(SessionStoreError, match="damaged"):
        Engine.load_from(db, "h", token_counter=session.engine.counter)
    db.close()
