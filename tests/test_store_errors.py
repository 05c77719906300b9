"""Every failure of a session store is a SessionStoreError naming the store, the session, the
cause and the fix, with the driver's error as ``__cause__``: a full disk, damaged SQLite files,
Redis keys of another type or counters that are no integers, and a session the store lost.

Fuzz example counts: ``REGIO_FUZZ_STORE_EXAMPLES`` (default 60 damaged SQLite files and 40
damaged Redis values in CI; ``REGIO_FUZZ_STORE_EXAMPLES=3000`` runs a long campaign, see
docs/security.md)."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from regio.errors import RegioError
from regio.persistence._statefile import engine_state
from regio.persistence.store import (
    RedisStore,
    SessionConflictError,
    SessionDamagedError,
    SessionLostError,
    SessionStoreError,
    SQLiteStore,
    StoreUnavailableError,
)
from store_support import _free_port, load, play_turn, redis_url, store_engine

__all__ = ["redis_url"]

EXAMPLES = int(os.environ.get("REGIO_FUZZ_STORE_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _saved(store: Any, turns: int = 3, sid: str = "s") -> Any:
    engine = store_engine(sid)
    for turn in range(1, turns + 1):
        play_turn(engine, turn)
        engine.save_to(store, sid)
    return engine


# ----- SQLite on a full disk ---------------------------------------------------------------
def test_a_save_on_a_full_disk_says_the_disk_is_full_and_writes_nothing(tmp_path: Path) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    engine = _saved(db, 1)
    before = engine_state(load(db))
    db._db.execute("PRAGMA max_page_count = 12")  # the file may not grow: a full disk
    error = None
    for turn in range(2, 40):
        play_turn(engine, turn, words=400)
        try:
            engine.save_to(db, "s")
        except SessionStoreError as exc:
            error = exc
            break
    assert isinstance(error, StoreUnavailableError), error
    text = str(error)
    assert "disk is full" in text and "'s'" in text and "free space" in text
    assert "no transaction" not in text
    assert isinstance(error.__cause__, sqlite3.OperationalError)
    assert "database or disk is full" in str(error.__cause__)
    assert engine_state(load(db)) == before  # nothing was written
    db._db.execute("PRAGMA max_page_count = 1073741823")  # space freed: the same save works
    engine.save_to(db, "s")
    assert engine_state(load(db)) == engine_state(engine)


# ----- damaged SQLite files ----------------------------------------------------------------
_BASE: dict[str, bytes] = {}


def _base_file(tmp: Path) -> bytes:
    """A session database of two sessions, checkpointed into the main file."""
    if "db" not in _BASE:
        path = tmp / "base.db"
        db = SQLiteStore(path)
        _saved(db, 4, "s")
        _saved(db, 2, "t")
        db._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        _BASE["db"] = path.read_bytes()
    return _BASE["db"]


def _damage(data: bytes, edits: list[tuple[float, int, bool]]) -> bytes:
    out = bytearray(data)
    for where, value, flip in edits:
        i = int(where * (len(out) - 1))
        out[i] = out[i] ^ (1 << (value % 8)) if flip else value
    return bytes(out)


def _open_load_save(path: Path) -> None:
    """Open the store, load each session, add a message and save it, load it again: the store
    raises only SessionStoreError. (A message the damaged session refuses is the engine's
    RegioError, a damaged budget say; nothing is saved then.)"""
    db = SQLiteStore(path)
    try:
        for sid in db.sessions():
            engine = load(db, sid)
            try:
                engine.add_user("after the damage")
            except RegioError as exc:
                assert not isinstance(exc, SessionStoreError) or "damaged" in str(exc)
            engine.save_to(db, sid)
            load(db, sid).transcript()
    finally:
        db.close()


edits = st.lists(
    st.tuples(st.floats(0.0, 1.0), st.integers(0, 255), st.booleans()), min_size=1, max_size=16
)


@FUZZ
@given(edits=edits)
def test_fuzz_damaged_sqlite_files_give_only_session_store_errors(
    tmp_path: Path, edits: list[tuple[float, int, bool]]
) -> None:
    path = tmp_path / "damaged.db"
    for extra in ("-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)
    path.write_bytes(_damage(_base_file(tmp_path), edits))
    try:
        _open_load_save(path)
    except SessionStoreError as exc:
        assert str(path) in str(exc) or "damaged" in str(exc)


@pytest.mark.parametrize(
    ("table", "column", "value"),
    [
        ("sessions", "version", "'three'"),
        ("sessions", "transcript_count", "2.5"),
        ("sessions", "head", "'not bytes'"),
        ("records", "data", "42"),
        ("entries", "data", "'text, not a record'"),
        ("entries", "key", "CAST(x'ff40' AS TEXT) || key"),
    ],
)
def test_a_row_of_the_wrong_type_is_a_damaged_session_naming_the_file(
    tmp_path: Path, table: str, column: str, value: str
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    _saved(db, 2)
    with sqlite3.connect(db.path) as raw:
        raw.execute(f"UPDATE {table} SET {column} = {value}")
    with pytest.raises(SessionDamagedError, match=r"s\.db") as info:
        load(db).transcript()
    assert "'s'" in str(info.value) and "backup" in str(info.value)


def test_a_file_that_is_not_a_database_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database" * 200)
    with pytest.raises(SessionDamagedError, match=r"notes\.db") as info:
        SQLiteStore(path)
    assert isinstance(info.value.__cause__, sqlite3.DatabaseError)


# ----- a session the store lost ------------------------------------------------------------
def test_a_save_after_the_session_was_deleted_offers_the_save_that_keeps_it(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    engine = _saved(db, 2)
    SQLiteStore(tmp_path / "s.db").delete("s")  # another process deletes it
    play_turn(engine, 3)
    with pytest.raises(SessionLostError) as info:
        engine.save_to(db, "s")
    assert not isinstance(info.value, SessionConflictError)  # a reload would lose it
    assert "create=True" in str(info.value) and "Reload" not in str(info.value)
    assert engine.save_to(db, "s", create=True) == 1
    assert engine_state(load(db)) == engine_state(engine)


def test_a_session_replaced_by_another_under_its_id_is_lost_not_a_conflict_to_reload(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    engine = _saved(db, 3)  # version 3
    db.delete("s")
    _saved(db, 1)  # another engine's new session "s", version 1
    play_turn(engine, 4)
    with pytest.raises(SessionLostError, match="another one saved under its id") as info:
        engine.save_to(db, "s")
    assert "create=True" in str(info.value)
    assert engine.save_to(db, "s-kept", create=True) == 1


def _start_redis(port: int) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    assert binary is not None
    return subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_up(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    for _ in range(200):
        try:
            client.ping()
            return
        except redis.ConnectionError:
            time.sleep(0.02)
    pytest.skip(f"redis-server did not answer on {url}")


def test_a_save_after_a_redis_restart_without_persistence_keeps_the_session(
    redis_url: str,
) -> None:
    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = _start_redis(port)
    try:
        _wait_up(url)
        store = RedisStore.from_url(url)
        engine = _saved(store, 3)
        server.terminate()
        server.wait(timeout=10)
        play_turn(engine, 4)
        with pytest.raises(StoreUnavailableError, match="reachable") as down:
            engine.save_to(store, "s")  # the server is down: nothing written, try again
        assert "still holds the session" in str(down.value)
        server = _start_redis(port)  # back, empty: no persistence
        _wait_up(url)
        with pytest.raises(SessionLostError) as info:
            engine.save_to(store, "s")
        text = str(info.value)
        assert "no longer in the store" in text and "create=True" in text
        assert "Reload it" not in text and "Do not reload" in text
        assert engine.save_to(store, "s", create=True) == 1
        assert engine_state(load(store)) == engine_state(engine)
    finally:
        server.terminate()
        server.wait(timeout=10)


# ----- Redis keys another program wrote ----------------------------------------------------
@pytest.fixture
def redis_store(redis_url: str, request: Any) -> Any:
    store = RedisStore.from_url(redis_url, prefix=f"err:{request.node.name}:")
    for sid in store.sessions():
        store.delete(sid)
    return store


@pytest.mark.parametrize("suffix", [":e", ":t", ":head", ":meta", ":o", ":lease"])
def test_a_redis_key_of_another_type_names_the_key_on_load_and_save(
    redis_store: Any, suffix: str
) -> None:
    engine = _saved(redis_store, 2)
    keys = redis_store._keys("s")
    key = next(k for k in keys if k.endswith(suffix))
    client = redis_store.client
    client.delete(key)
    if suffix in (":head", ":lease"):
        client.rpush(key, b"a list where regio keeps a string")
    else:
        client.set(key, b"a string where regio keeps a list or a hash")
    before = {k: client.dump(k) for k in keys}
    play_turn(engine, 3)
    with pytest.raises(SessionDamagedError, match=re.escape(key)) as saving:
        engine.save_to(redis_store, "s")
    assert "nothing was written" in str(saving.value) and saving.value.key == key
    assert {k: client.dump(k) for k in keys} == before  # no command of the save ran
    if suffix == ":lease":
        return  # a load never reads the lease
    if suffix == ":o":  # read on demand only (context_restore): that read names it
        with pytest.raises(SessionDamagedError, match=re.escape(key)):
            redis_store.original_records("s")
        return
    with pytest.raises(SessionDamagedError, match=re.escape(key)) as loading:
        load(redis_store).transcript()
    assert "WRONGTYPE" in str(loading.value.__cause__) or suffix == ":head"


@pytest.mark.parametrize("field", ["version", "transcript", "ledger"])
def test_a_counter_that_is_no_integer_names_the_field_on_load_and_save(
    redis_store: Any, field: str
) -> None:
    engine = _saved(redis_store, 2)
    meta = redis_store._keys("s")[0]
    redis_store.client.hset(meta, field, "two")
    before = redis_store.client.llen(redis_store._keys("s")[2])
    play_turn(engine, 3)
    with pytest.raises(SessionDamagedError, match=field) as saving:
        engine.save_to(redis_store, "s")
    assert meta in str(saving.value)
    assert redis_store.client.llen(redis_store._keys("s")[2]) == before  # nothing written
    with pytest.raises(SessionDamagedError, match=field):
        load(redis_store)


redis_edits = st.tuples(
    st.sampled_from([":head", ":e", ":t", ":l"]),
    st.floats(0.0, 1.0),
    st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 255), st.booleans()), max_size=8),
)


@FUZZ
@given(edit=redis_edits)
@example(edit=(":head", 0.0, [(0.6494143439282104, 6, True)]))  # a clamp decoded as {}
def test_fuzz_damaged_redis_values_give_only_session_store_errors(
    redis_store: Any, edit: tuple[str, float, list[tuple[float, int, bool]]]
) -> None:
    suffix, which, flips = edit
    if not redis_store.sessions():
        _saved(redis_store, 3)
    client = redis_store.client
    key = next(k for k in redis_store._keys("s") if k.endswith(suffix))
    kind = client.type(key)
    if kind == b"string":
        client.set(key, _damage(client.get(key), flips or [(which, 0, True)]))
    elif kind == b"hash":
        fields = sorted(client.hkeys(key))
        name = fields[int(which * (len(fields) - 1))]
        client.hset(key, name, _damage(client.hget(key, name), flips or [(which, 0, True)]))
    else:
        n = client.llen(key)
        i = int(which * (n - 1))
        client.lset(key, i, _damage(client.lindex(key, i), flips or [(which, 0, True)]))
    try:
        engine = load(redis_store)
        engine.transcript()
        try:
            engine.add_user("after the damage")
        except RegioError as exc:  # the engine refusing what a damaged budget cannot take
            assert not isinstance(exc, SessionStoreError) or "damaged" in str(exc)
        engine.save_to(redis_store, "s")
    except SessionStoreError:
        pass
    finally:
        redis_store.delete("s")
