"""An original the relief chain kept on admission (the result trimmed or routed, the full one
kept for ``context_restore``) that the session no longer holds -- its store records deleted or
lost, its entry cut from a state file -- is reported missing, naming the call and what to do:
the transcript holds only the shortened result, and ``context_restore`` never hands that to
the agent as the original. The transcript record of the admitted message says which of its
results were kept (``TranscriptRecord.kept``), so every backend knows it after a load; a
session saved before the mark restores as it always did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolResult, ToolUse
from regio.engine import Engine
from regio.persistence._lostparts import StoredPartsLostWarning
from regio.persistence.store import RedisStore, SessionStoreError, SQLiteStore
from store_support import redis_url
from test_store_originals_append_only import COUNTER, _engine, _load, _result, _turn

__all__ = ["redis_url"]

_MISSING = "is missing"


def _session(backend: str, folder: Path, request: Any, turns: int) -> tuple[Any, Engine]:
    """``(where, twin)``: a session of ``turns`` trimmed results ``c0``.. saved to ``backend``
    (a state file, or store session ``r``), and the engine that played it."""
    engine = _engine()
    for n in range(turns):
        _turn(engine, n, f"c{n}")
    if backend in ("json", "msgpack"):
        return engine.save(folder / f"s.{backend}"), engine
    if backend == "sqlite":
        where: Any = SQLiteStore(folder / "s.db")
    else:
        where = RedisStore.from_url(
            request.getfixturevalue("redis_url"), prefix=f"om:{folder.name}:"
        )
        for sid in where.sessions():
            where.delete(sid)
    engine.save_to(where, "r")
    return where, engine


def _lose(where: Any, call: str, records: tuple[str, ...]) -> None:
    """Delete the stored ``records`` (``@ro``, ``@rn``) of ``call``'s original; a state file
    loses the original itself."""
    if isinstance(where, Path):
        if where.suffix == ".json":
            data = json.loads(where.read_text(encoding="utf-8"))
            del data["book"]["relief"]["originals"][call]
            where.write_text(json.dumps(data), encoding="utf-8")
        else:
            data = msgspec.msgpack.decode(where.read_bytes())
            del data["book"]["relief"]["originals"][call]
            where.write_bytes(msgspec.msgpack.encode(data))
        return
    keys = [f"{prefix}/{call}" for prefix in records]
    if isinstance(where, SQLiteStore):
        with where._lock:
            where._db.executemany(
                "DELETE FROM entries WHERE session = 'r' AND key = ?", [(k,) for k in keys]
            )
    else:
        where.client.hdel(where._keys("r")[5], *keys)


def _open(where: Any) -> Engine:
    if isinstance(where, Path):
        return Engine.load(where, token_counter=COUNTER, clock=lambda: 0.0)
    return _load(where)


def _close(where: Any) -> None:
    if isinstance(where, SQLiteStore):
        where.close()


def _restore(engine: Engine, call: str) -> tuple[bool, str]:
    out = engine.handle_tool_call("context_restore", {"call_id": call})
    return out.ok, out.text


def _admitted(twin: Engine, call: str) -> str:
    found = twin.transcript_log.tool_result(call)
    assert found is not None
    return found.content


BACKENDS = ["json", "msgpack", "sqlite", "redis"]
#: the ways a stored original's records can vanish (a state file loses the original itself)
LOSSES = [("@ro", "@rn"), ("@ro",), ("@rn",)]


#: (backend, records lost): a state file holds each original once, a store as two records
_CASES = [(b, LOSSES[0]) for b in BACKENDS[:2]] + [(b, r) for b in BACKENDS[2:] for r in LOSSES]


@pytest.mark.parametrize(("backend", "records"), _CASES)
@pytest.mark.parametrize("call", ["c1", "c9"], ids=["left-window", "in-window"])
def test_a_lost_original_is_reported_missing_never_given_as_the_trimmed_result(
    request: Any, tmp_path: Path, backend: str, records: tuple[str, ...], call: str
) -> None:
    where, twin = _session(backend, tmp_path, request, 10)
    try:
        _lose(where, call, records)
        loaded = _open(where)
        assert (loaded.window.call_group(call) is not None) == (call == "c9")
        ok, text = _restore(loaded, call)
        assert not ok, text  # before the fix: ok, the trimmed transcript text
        assert text != _admitted(twin, call) and _result(int(call[1:]), call) != text
        assert call in text and _MISSING in text  # the call, or its record, named
        if records == LOSSES[0]:  # the call named, what happened and what to do
            assert f"the original of call {call!r} is missing" in text
            assert "call the tool again" in text and "restore the session" in text
        assert _restore(loaded, "c5") == (True, _result(5, "c5"))  # the others are intact
    finally:
        _close(where)


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_a_lost_original_raises_to_code_that_reads_it_and_a_full_read_counts_it(
    request: Any, tmp_path: Path, backend: str
) -> None:
    from regio.compaction.relief._originals import original_result

    where, _ = _session(backend, tmp_path, request, 10)
    try:
        _lose(where, "c2", LOSSES[0])
        loaded = _open(where)
        with pytest.raises(SessionStoreError, match="the original of call 'c2' is missing"):
            original_result(loaded.session, "c2")
        with pytest.raises(SessionStoreError, match="holds 9 of the 10 relief originals"):
            loaded.book.relief.originals.load_all()  # the head says 10: a full read finds 9
        with pytest.warns(StoredPartsLostWarning, match="1 of the 10 relief originals"):
            loaded.save(tmp_path / "out.json")  # keeps the 9 it can read, names the lost one
        assert sorted(Engine.load(tmp_path / "out.json").book.relief.originals) == sorted(
            f"c{n}" for n in range(10) if n != 2
        )
    finally:
        _close(where)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_only_original_of_a_session_lost_is_reported_missing(
    request: Any, tmp_path: Path, backend: str
) -> None:
    where, twin = _session(backend, tmp_path, request, 1)
    try:
        assert list(twin.book.relief.originals) == ["c0"]
        _lose(where, "c0", LOSSES[0])
        ok, text = _restore(_open(where), "c0")
        assert not ok and "the original of call 'c0' is missing" in text
    finally:
        _close(where)


def test_a_result_admitted_whole_under_a_reused_call_id_restores_after_the_old_one_is_lost(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        engine = _engine()
        for n in range(4):
            _turn(engine, n, f"c{n}")
        engine.clear("conversation")  # c1's call left the window: a new call may reuse its id
        engine.add_user("again")
        entry = engine.add_assistant("short", [ToolUse("c1", "read", {"n": 9})])
        assert entry.message.tool_calls[0].id == "c1"
        engine.add_tool_result("c1", "short result")  # whole: it replaces c1's original
        engine.save_to(db, "r")
        _lose(db, "c1", LOSSES[0])
        want = _restore(engine, "c1")  # the newest result is whole: in the conversation
        assert "unchanged" in want[1]
        assert _restore(_load(db), "c1") == want  # never "missing": its record has no mark
    finally:
        db.close()


def test_the_transcript_marks_each_message_whose_result_was_kept_on_admission() -> None:
    engine = _engine()
    for n in range(3):
        _turn(engine, n, f"c{n}")
    marked = [r.kept for r in engine.transcript() if r.kept]
    assert marked == [("c0",), ("c1",), ("c2",)]  # one mark per kept original
    assert set(engine.book.relief.originals) == {"c0", "c1", "c2"}


_TURN = st.tuples(st.booleans(), st.booleans())  # (trimmed, original lost)


@pytest.mark.parametrize("backend", ["msgpack", "sqlite"])
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(turns=st.lists(_TURN, min_size=1, max_size=12))
def test_restore_gives_the_original_or_says_it_is_missing_never_the_shortened_result(
    tmp_path_factory: Any, backend: str, turns: list[tuple[bool, bool]]
) -> None:
    folder = Path(tmp_path_factory.mktemp(backend))
    engine = _engine()
    for n, (trimmed, _) in enumerate(turns):
        engine.add_user(f"turn {n}")
        engine.add_assistant(f"calling {n}", [ToolUse(f"c{n}", "read", {"n": n})])
        engine.add_tool_result(f"c{n}", _result(n, f"c{n}") if trimmed else f"ok {n}")
    where: Any = engine.save(folder / "s.msgpack") if backend == "msgpack" else None
    if where is None:
        where = SQLiteStore(folder / "s.db")
        engine.save_to(where, "r")
    try:
        lost = [f"c{n}" for n, (trimmed, gone) in enumerate(turns) if trimmed and gone]
        for call in lost:
            _lose(where, call, LOSSES[0])
        loaded = _open(where)
        for n, (trimmed, _) in enumerate(turns):
            call = f"c{n}"
            ok, text = _restore(loaded, call)
            if call in lost:
                assert not ok and f"the original of call {call!r} is missing" in text
            elif trimmed:
                assert (ok, text) == (True, _result(n, call))
            else:  # admitted whole: it is in the conversation, or restored from the transcript
                assert text == f"ok {n}" or "unchanged" in text
            assert not ok or text != _admitted(engine, call) or not trimmed
    finally:
        _close(where)


def _reading_originals(engine: Engine) -> Engine:
    """``engine`` with ``summarize_originals`` on: its summarizer reads the originals of the
    results relief edited (by default it reads what the conversation holds)."""
    relief = engine.options.relief
    assert relief is not None
    engine.options = attrs.evolve(
        engine.options, relief=msgspec.structs.replace(relief, summarize_originals=True)
    )
    return engine


def test_the_summarizers_input_for_a_cleared_entry_whose_original_was_lost_raises(
    tmp_path: Path,
) -> None:
    from regio.compaction.relief._originals import with_originals
    from regio.policies.relief import CLEARED_META

    db = SQLiteStore(tmp_path / "s.db")
    try:
        engine = _engine()
        for n in range(10):
            _turn(engine, n, f"c{n}")
        engine.save_to(db, "r")
        conv = engine.window.conversation
        assert conv is not None
        entry = next(e for e in conv.entries if any(isinstance(b, ToolResult) for b in e.blocks))
        call = next(b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult))
        cleared = msgspec.structs.replace(entry, meta={**entry.meta, CLEARED_META: [call]})
        full = with_originals(_reading_originals(_load(db)).session, [cleared])
        texts = [b.content for b in full[0].blocks if isinstance(b, ToolResult)]
        assert _result(int(call[1:]), call) in texts
        _lose(db, call, LOSSES[0])
        with pytest.raises(SessionStoreError, match=f"the original of call {call!r} is missing"):
            with_originals(_reading_originals(_load(db)).session, [cleared])
    finally:
        db.close()
