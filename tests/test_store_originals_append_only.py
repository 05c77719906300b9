"""The relief originals are append-only, like the transcript: a save writes the ones set since
the last save and never reads the others, a load from a store reads none of them (each is read
when ``context_restore`` or the summarizer asks for it), and whatever the backend (a JSON or
msgpack state file, the SQLite or Redis store) and however the saves, loads, restores and
compactions interleave, every original comes back byte-identical."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolResult, ToolUse
from regio.engine import Engine
from regio.persistence.store import RedisStore, SessionStoreError, SQLiteStore, encode_save
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.session._reliefbook import Originals
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from store_support import redis_url, sqlite_or_redis

__all__ = ["redis_url"]

COUNTER = get_counter("heuristic")

#: A conversation compacted 6 messages at a time once it holds 12 (a compaction every few
#: turns), into a summary history.
BLUEPRINT = """
version: 1
name: originals
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000,
        max_output_tokens: 8000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 4000, seed: "You are careful."}
  - {name: history, kind: compact_history, source: conversation, volatility: grows,
     budget: 3000}
  - name: conversation
    kind: sliding_window
    budget: 40000
    max_items: 12
    eviction: {strategy: compact, compact_count: 6}
"""


def _engine() -> Engine:
    return Engine.from_blueprint(
        BLUEPRINT,
        token_counter=COUNTER,
        summarizer=ExtractiveSummarizer(counter=COUNTER, max_summary_tokens=200),
        clock=lambda: 0.0,
        relief=ReliefPolicy(tools={"read": ToolRelief(max_result_tokens=16)}),
    )


def _result(n: int, call: str) -> str:
    return " ".join(f"turn {n} {call} line {k} ok" for k in range(20))


def _turn(engine: Engine, n: int, call: str) -> None:
    engine.add_user(f"turn {n}: check {call}")
    engine.add_assistant(f"checking {n}", [ToolUse(call, "read", {"n": n})])
    engine.add_tool_result(call, _result(n, call))  # trimmed on admission: an original
    engine.request("anthropic", "claude-sonnet-4-6")


class _Backend:
    """Saves and loads one session through a state file or a store."""

    def __init__(self, how: str, folder: Path, redis: str | None) -> None:
        self.how, self.folder = how, folder
        self.store: Any = None
        if how == "sqlite":
            self.store = SQLiteStore(folder / "s.db")
        elif how == "redis":
            assert redis is not None
            self.store = RedisStore.from_url(redis, prefix=f"ao:{folder.name}:")
            for sid in self.store.sessions():
                self.store.delete(sid)

    def save(self, engine: Engine) -> None:
        if self.store is None:
            engine.save(self.folder / f"s.{self.how}")
        else:
            engine.save_to(self.store, "r")

    def load(self) -> Engine:
        if self.store is None:
            return Engine.load(self.folder / f"s.{self.how}", token_counter=COUNTER)
        return Engine.load_from(self.store, "r", token_counter=COUNTER, clock=lambda: 0.0)

    def close(self) -> None:
        if isinstance(self.store, SQLiteStore):
            self.store.close()


def _encoded(originals: Any) -> dict[str, bytes]:
    return {c: msgspec.msgpack.encode(r) for c, r in originals.items()}


#: per turn: (call id number: a repeat replaces that call's original, save after it, reload
#: after it, restore a call after it)
_TURNS = st.lists(
    st.tuples(st.integers(0, 12), st.booleans(), st.booleans(), st.integers(-1, 12)),
    min_size=1,
    max_size=24,
)


@pytest.mark.parametrize("how", ["json", "msgpack", "sqlite", "redis"])
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(turns=_TURNS)
def test_originals_round_trip_byte_identical_across_saves_loads_restores_and_compactions(
    request: Any, tmp_path_factory: Any, how: str, turns: list[tuple[int, bool, bool, int]]
) -> None:
    redis = request.getfixturevalue("redis_url") if how == "redis" else None
    backend = _Backend(how, Path(tmp_path_factory.mktemp(how)), redis)
    twin, engine = _engine(), _engine()  # the twin is never saved
    try:
        for n, (call, save, reload, restore) in enumerate(turns):
            for e in (twin, engine):
                _turn(e, n, f"c{call}")
            if save or reload:
                backend.save(engine)
            if reload:
                engine = backend.load()
                assert not engine.book.relief.originals.lazy or how in ("sqlite", "redis")
            if restore >= 0:
                args = {"call_id": f"c{restore}"}
                got = engine.handle_tool_call("context_restore", args)
                assert (got.ok, got.text) == (
                    (want := twin.handle_tool_call("context_restore", args)).ok,
                    want.text,
                )
        backend.save(engine)
        loaded = backend.load()
        for c, r in twin.book.relief.originals.items():
            assert msgspec.msgpack.encode(loaded.book.relief.originals[c]) == (
                msgspec.msgpack.encode(r)
            )
        assert _encoded(loaded.book.relief.originals) == _encoded(twin.book.relief.originals)
        assert list(loaded.book.relief.originals) == list(twin.book.relief.originals)
        assert loaded.book.last == twin.book.last  # the same compactions ran
    finally:
        backend.close()


def _saved_session(store: Any, turns: int = 30) -> Engine:
    engine = _engine()
    for n in range(turns):
        _turn(engine, n, f"c{n}")
        engine.save_to(store, "r")
    assert engine.book.last is not None  # compactions ran
    return engine


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Path) -> Any:
    yield from sqlite_or_redis(request, tmp_path / "s.db", f"ao:{tmp_path.name}:")


def _load(store: Any) -> Engine:
    return Engine.load_from(store, "r", token_counter=COUNTER, clock=lambda: 0.0)


def test_a_store_load_reads_no_original_and_a_restore_reads_only_its_own(store: Any) -> None:
    engine = _saved_session(store)
    reads: list[list[str]] = []
    read = store.entry_records
    store.entry_records = lambda sid, keys: reads.append(keys) or read(sid, keys)
    loaded = _load(store)
    originals = loaded.book.relief.originals
    assert isinstance(originals, Originals) and originals.lazy and not reads
    assert loaded.window.call_group("c0") is None  # its group left the window long ago
    out = loaded.handle_tool_call("context_restore", {"call_id": "c0"})
    assert out.ok and out.text == _result(0, "c0")
    assert reads == [["@ro/c0", "@rn/c0"]] and originals.lazy
    assert msgspec.msgpack.encode(originals["c0"]) == msgspec.msgpack.encode(
        engine.book.relief.originals["c0"]
    )


def test_a_save_after_a_lazy_load_writes_the_new_originals_and_reads_no_stored_one(
    store: Any,
) -> None:
    _saved_session(store)
    loaded = _load(store)
    _turn(loaded, 30, "c30")
    records = encode_save(loaded, loaded.store_mark)
    assert sorted(k for k in records.put if k.startswith(("@ro/", "@rn/"))) == [
        "@rn/c30",
        "@ro/c30",
    ]
    assert not any(k.startswith(("@ro/", "@rn/", "@rl/")) for k in records.drop)
    loaded.save_to(store, "r")
    assert loaded.book.relief.originals.lazy  # the save read none of the stored ones
    again = _load(store)
    assert list(again.book.relief.originals)[-2:] == ["c29", "c30"]
    assert again.book.relief.originals["c30"].content == _result(30, "c30")


def test_a_call_id_used_again_replaces_its_original_after_a_lazy_load(store: Any) -> None:
    twin = _saved_session(store)
    loaded = _load(store)
    for e in (twin, loaded):
        _turn(e, 31, "c3")  # the call id again: its original is replaced, moved last
    loaded.save_to(store, "r")
    again = _load(store)
    assert again.book.relief.originals.get("c3").content == _result(31, "c3")
    assert _encoded(again.book.relief.originals) == _encoded(twin.book.relief.originals)
    assert list(again.book.relief.originals) == list(twin.book.relief.originals)
    assert list(again.book.relief.originals)[-1] == "c3"


def test_a_file_save_after_a_lazy_load_holds_every_original(store: Any, tmp_path: Path) -> None:
    engine = _saved_session(store)
    loaded = _load(store)
    path = loaded.save(tmp_path / "s.json")
    assert not loaded.book.relief.originals.lazy  # the file save read them all
    from_file = Engine.load(path, token_counter=COUNTER)
    assert _encoded(from_file.book.relief.originals) == _encoded(engine.book.relief.originals)


def _damage(store: SQLiteStore, key: str, data: bytes | None) -> None:
    with store._lock:
        if data is None:
            store._db.execute("DELETE FROM entries WHERE session = 'r' AND key = ?", (key,))
        else:
            store._db.execute(
                "UPDATE entries SET data = ? WHERE session = 'r' AND key = ?", (data, key)
            )


@pytest.mark.parametrize(
    ("data", "says"), [(None, "is missing"), (b"\xc1 not msgpack", "is damaged")]
)
def test_a_missing_or_damaged_original_is_an_error_naming_its_record_and_the_agent_reads_it(
    tmp_path: Path, data: bytes | None, says: str
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        _saved_session(db)
        _damage(db, "@ro/c2", data)
        loaded = _load(db)  # the load reads no original: it loads
        assert loaded.handle_tool_call("context_restore", {"call_id": "c5"}).ok
        out = loaded.handle_tool_call("context_restore", {"call_id": "c2"})
        assert not out.ok  # the agent gets the error as text, nothing raises into its loop
        assert f"{db.url}#r: the stored relief original '@ro/c2' {says}" in out.text
        with pytest.raises(SessionStoreError, match=rf"'@ro/c2' {says}"):
            Engine.save(loaded, tmp_path / "s.json")  # reading them all names it too
    finally:
        db.close()


def test_a_result_that_was_never_an_original_is_not_reported_as_missing(store: Any) -> None:
    _saved_session(store)
    loaded = _load(store)
    assert loaded.book.relief.originals.get("no-such-call") is None
    assert "no-such-call" not in loaded.book.relief.originals
    out = loaded.handle_tool_call("context_restore", {"call_id": "no-such-call"})
    assert not out.ok and "no tool result" in out.text


def test_originals_are_never_removed_and_a_set_moves_a_call_last() -> None:
    originals = Originals({"a": ToolResult("a", "1"), "b": ToolResult("b", "2")})
    originals["a"] = ToolResult("a", "3")
    assert list(originals) == ["b", "a"] and originals.changes == ["a"]
    for remove in (
        lambda: originals.pop("a"),
        lambda: originals.__delitem__("a"),
        originals.popitem,
        originals.clear,
    ):
        with pytest.raises(TypeError, match="append-only"):
            remove()
    assert list(originals) == ["b", "a"]


def test_the_sqlite_load_of_a_head_6_session_reads_none_of_its_original_records(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        _saved_session(db, 20)
        window = db.load_window("r")[-1]
        assert window and not any(k.startswith(("@ro/", "@rn/")) for k in window)
        with sqlite3.connect(db.path) as raw:
            stored = {k for (k,) in raw.execute("select key from entries where session = 'r'")}
        assert set(window) == {k for k in stored if not k.startswith(("@ro/", "@rn/"))}
        assert len(db.original_records("r")) == 2 * 20
    finally:
        db.close()


class _Source:
    """Stored originals for :class:`Originals` (``reads`` logs each call id read alone)."""

    def __init__(self, stored: dict[str, ToolResult]) -> None:
        self.stored = stored
        self.count = len(stored)
        self.reads: list[str] = []

    def get(self, call_id: str) -> ToolResult | None:
        self.reads.append(call_id)
        return self.stored.get(call_id)

    def exists(self, call_id: str) -> bool:
        return call_id in self.stored

    def all(self, own: Any = (), replaced: Any = ()) -> dict[str, ToolResult]:
        assert set(replaced) == set(own) & set(self.stored)
        return {c: r for c, r in self.stored.items() if c not in own}


_IDS = st.sampled_from([f"c{i}" for i in range(6)])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_IDS, unique=True, max_size=6),
    st.lists(st.tuples(st.booleans(), _IDS, st.integers(0, 99)), max_size=20),
    st.booleans(),
)
def test_an_originals_mapping_is_a_dict_whose_sets_move_last_stored_or_not(
    stored_ids: list[str], ops: list[tuple[bool, str, int]], lazy: bool
) -> None:
    stored = {c: ToolResult(c, f"stored {c}") for c in stored_ids}
    source = _Source(stored)
    originals = Originals(source=source) if lazy else Originals(stored)
    model = dict(stored)
    sets = []
    for is_set, call_id, n in ops:
        if is_set:
            originals[call_id] = model[call_id] = ToolResult(call_id, f"set {n}")
            model[call_id] = model.pop(call_id)  # moved last
            sets.append(call_id)
        else:
            assert originals.get(call_id) == model.get(call_id)
            assert (call_id in originals) == (call_id in model)
    assert originals.changes == sets
    assert originals.lazy == lazy  # gets never read them all
    assert originals.count == len(model)  # known without reading them all
    assert set(source.reads) <= set(stored) | {c for _, c, _ in ops}
    assert list(originals.items()) == list(model.items())
    assert originals == model and not originals.lazy
