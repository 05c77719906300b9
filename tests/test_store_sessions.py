"""Session stores: incremental saves, versioned conflicts, many sessions, real Redis."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.errors import RegioError
from regio.persistence._statefile import engine_state
from regio.persistence.store import (
    SessionConflictError,
    SessionNotFoundError,
    SessionStore,
    SessionStoreError,
    SQLiteStore,
    encode_save,
    open_store,
    split_url,
)
from store_support import (
    HistorySession,
    load,
    play_turn,
    redis_url,
    sqlite_or_redis,
    store_engine,
)

__all__ = ["redis_url"]


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Any) -> Any:
    yield from sqlite_or_redis(request, tmp_path / "sessions.db", f"t:{request.node.name}:")


def test_stores_satisfy_the_protocol(store):
    assert isinstance(store, SessionStore)


def test_loaded_session_renders_the_same_bytes_as_the_saved_engine(store):
    engine = store_engine()
    for turn in range(1, 6):
        play_turn(engine, turn)
        engine.save_to(store)
    loaded = load(store)
    assert engine_state(loaded) == engine_state(engine)
    assert loaded.request()[1] == engine.request()[1]


def test_each_save_appends_only_the_new_turn(store):
    engine = store_engine()
    play_turn(engine, 1)
    engine.save_to(store)
    before = engine.store_mark
    play_turn(engine, 2)
    records = encode_save(engine, before)
    assert len(records.transcript) == len(engine.transcript()) - before.transcript == 3
    assert len(records.ledger) == 1


def test_record_bytes_per_save_do_not_grow_with_the_session(store):
    engine = store_engine()
    sizes = []
    for turn in range(1, 41):
        play_turn(engine, turn)
        records = encode_save(engine, engine.store_mark)
        sizes.append(records.size)  # every byte written: head, records, puts, drops
        engine.save_to(store)
    assert max(sizes[30:]) <= 1.2 * max(sizes[:10])


def _bytes_per_save(session: HistorySession, db: SQLiteStore, turns: range) -> float:
    """Mean bytes written per save (every byte: :attr:`SessionRecords.size`) over ``turns``,
    one save per turn."""
    sizes = []
    for turn in turns:
        session.advance_to(turn)
        sizes.append(encode_save(session.engine, session.engine.store_mark).size)
        session.engine.save_to(db, "h")
    return sum(sizes) / len(sizes)


@pytest.mark.parametrize("relief", [False, True])
def test_bytes_per_save_at_turn_2000_are_those_of_turn_1000(tmp_path, relief):
    # the summary history fills over the first ~1,000 turns (with durable items its merges
    # rewrite more summary blocks once it is full: 11.8 KB per save at turn 100, 14.2 KB at
    # turn 1,000); from then on a save writes only what changed, whatever the session's
    # length (14.19 KB at turn 1,000 and at turn 2,000). With relief, one more relief
    # original per turn (the session keeps them all, for context_restore), of which a save
    # writes the new one.
    db = SQLiteStore(tmp_path / "h.db")
    session = HistorySession(relief=relief)
    session.advance_to(999)
    session.engine.save_to(db, "h")
    early = _bytes_per_save(session, db, range(1_000, 1_020))  # one compaction cycle
    session.advance_to(1_999)
    session.engine.save_to(db, "h")
    late = _bytes_per_save(session, db, range(2_000, 2_020))
    db.close()
    assert late <= 1.1 * early, (early, late)


def test_a_stale_engine_gets_a_conflict_and_writes_nothing(store):
    engine = store_engine()
    play_turn(engine, 1)
    engine.save_to(store)
    a, b = load(store), load(store)
    play_turn(a, 2)
    a.save_to(store)
    play_turn(b, 2)
    with pytest.raises(SessionConflictError) as info:
        b.save_to(store)
    assert isinstance(info.value, RegioError)
    assert (info.value.expected, info.value.found) == (1, 2)
    assert "reload" in str(info.value).lower()
    assert engine_state(load(store)) == engine_state(a)


def test_saving_a_new_engine_over_an_existing_session_is_a_conflict(store):
    engine = store_engine()
    play_turn(engine, 1)
    engine.save_to(store)
    with pytest.raises(SessionConflictError, match="already exists"):
        store_engine().save_to(store)


def test_many_sessions_share_one_store(store):
    engines = {f"user-{i}": store_engine(f"user-{i}") for i in range(5)}
    for i, (sid, engine) in enumerate(engines.items()):
        for turn in range(1, i + 2):
            play_turn(engine, turn)
        engine.save_to(store, sid)
    assert store.sessions() == sorted(engines)
    for sid, engine in engines.items():
        assert engine_state(load(store, sid)) == engine_state(engine)
    assert store.delete("user-0") and not store.delete("user-0")
    with pytest.raises(SessionNotFoundError, match="user-0"):
        load(store, "user-0")


def _worker(store: Any, turns: int, tag: str, conflicts: list[int]) -> None:
    for turn in range(turns):
        while True:
            engine = load(store)
            engine.add_user(f"{tag}-{turn}")
            try:
                engine.save_to(store)
                break
            except SessionConflictError:
                conflicts.append(1)


def test_two_workers_racing_on_one_session_lose_no_write(store):
    seed = store_engine()
    play_turn(seed, 1)
    seed.save_to(store)
    conflicts: list[int] = []
    threads = [threading.Thread(target=_worker, args=(store, 15, tag, conflicts)) for tag in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    texts = [e.blocks[0].text for e in load(store).transcript_log.messages() if e.role == "user"]
    for tag in "ab":
        assert [t for t in texts if t.startswith(f"{tag}-")] == [f"{tag}-{i}" for i in range(15)]
    assert store.load("s")[3] == 1 + 30


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(saves=st.lists(st.booleans(), min_size=1, max_size=12))
def test_saving_at_any_turns_restores_the_whole_engine(tmp_path_factory, saves):
    db = SQLiteStore(tmp_path_factory.mktemp("prop") / "s.db")
    engine = store_engine()
    for turn, save in enumerate(saves, 1):
        play_turn(engine, turn)
        if save:
            engine.save_to(db)
    engine.save_to(db)
    assert engine_state(load(db)) == engine_state(engine)
    db.close()


def test_open_store_reads_sqlite_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    relative = open_store("sqlite:///rel.db")
    absolute = open_store(f"sqlite:///{tmp_path / 'abs.db'}")
    assert (tmp_path / "rel.db").exists() and (tmp_path / "abs.db").exists()
    assert isinstance(relative, SQLiteStore) and isinstance(absolute, SQLiteStore)


@pytest.mark.parametrize("url", ["postgres://x/y", "sessions.db", "sqlite://"])
def test_open_store_refuses_other_urls(url):
    with pytest.raises(SessionStoreError):
        open_store(url)


def test_split_url_needs_a_session():
    assert split_url("sqlite:///a.db#s1") == ("sqlite:///a.db", "s1")
    with pytest.raises(SessionStoreError, match="#"):
        split_url("sqlite:///a.db")


def test_a_file_that_is_no_database_is_refused(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(SessionStoreError, match=r"bad\.db"):
        SQLiteStore(bad)


def test_sqlite_store_is_in_wal_mode(tmp_path):
    db = SQLiteStore(tmp_path / "w.db")
    assert db._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_save_to_needs_a_session_id(tmp_path):
    engine = store_engine()
    engine = Engine(engine.window, options=engine.options.__class__(provider="anthropic"))
    with pytest.raises(ValueError, match="session_id"):
        engine.save_to(SQLiteStore(tmp_path / "n.db"))


def test_of_two_simultaneous_saves_one_wins_and_the_loser_reloads(store):
    seed = store_engine()
    play_turn(seed, 1)
    seed.save_to(store)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def worker(tag: str) -> None:
        engine = load(store)
        engine.add_user(f"{tag}-first")
        barrier.wait()
        try:
            engine.save_to(store)
            outcomes[tag] = "saved"
        except SessionConflictError:
            outcomes[tag] = "conflict"
            engine = load(store)
            engine.add_user(f"{tag}-first")
            engine.save_to(store)

    threads = [threading.Thread(target=worker, args=(tag,)) for tag in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes.values()) == ["conflict", "saved"]
    texts = {e.blocks[0].text for e in load(store).transcript_log.messages() if e.role == "user"}
    assert {"a-first", "b-first"} <= texts


_PROCESS_WORKER = """
import sys
from regio.engine import Engine
from regio.persistence.store import SQLiteStore, SessionConflictError
from runtime_stubs import StubCounter
db = SQLiteStore(sys.argv[1])
for turn in range(8):
    while True:
        engine = Engine.load_from(db, "s", token_counter=StubCounter())
        engine.add_user(f"{sys.argv[2]}-{turn}")
        try:
            engine.save_to(db)
            break
        except SessionConflictError:
            pass
"""


def test_processes_sharing_one_sqlite_file_lose_no_write(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "shared.db"
    db = SQLiteStore(path)
    seed = store_engine()
    play_turn(seed, 1)
    seed.save_to(db)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
    procs = [
        subprocess.Popen([sys.executable, "-c", _PROCESS_WORKER, str(path), tag], env=env)
        for tag in "ab"
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    texts = [e.blocks[0].text for e in load(db).transcript_log.messages() if e.role == "user"]
    for tag in "ab":
        assert [t for t in texts if t.startswith(f"{tag}-")] == [f"{tag}-{i}" for i in range(8)]
    db.close()


def test_regio_inspect_reads_a_session_from_a_store(tmp_path, capsys):
    from regio.cli import main

    db = SQLiteStore(tmp_path / "i.db")
    engine = store_engine("inspect-me")
    for turn in range(1, 4):
        play_turn(engine, turn)
    engine.save_to(db)
    db.close()
    assert main(["inspect", f"sqlite:///{tmp_path / 'i.db'}#inspect-me"]) == 0
    out = capsys.readouterr().out
    assert "conversation" in out


@pytest.mark.parametrize("suffix", ["#missing", ""])
def test_regio_inspect_names_a_missing_session(tmp_path, capsys, suffix):
    from regio.cli import main

    SQLiteStore(tmp_path / "e.db").close()
    assert main(["inspect", f"sqlite:///{tmp_path / 'e.db'}{suffix}"]) == 2
    err = capsys.readouterr().err
    assert "missing" in err if suffix else "#" in err


def test_regio_inspect_of_a_missing_database_creates_nothing(tmp_path, capsys):
    from regio.cli import main

    missing = tmp_path / "typo.db"
    assert main(["inspect", f"sqlite:///{missing}#s"]) == 2
    assert "no such session database" in capsys.readouterr().err
    assert not missing.exists()
