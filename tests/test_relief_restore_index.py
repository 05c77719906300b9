"""``context_restore`` finds a result through the session's own index of its transcript
(built from the records on first use, so a loaded session has it too), never by scanning the
whole session; it finds exactly what a scan would, and an unknown call id comes back to the
agent as text."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief import _originals as relief_originals
from regio.content import Entry, Text, ToolResult, ToolUse
from regio.persistence.store import SQLiteStore
from regio.policies.relief import ReliefPolicy
from regio.regions import Pinned, SlidingWindow
from regio.session._transcript import Transcript
from runtime_stubs import StubCounter, make_engine, words


def _scan(t: Transcript, call_id: str) -> ToolResult | None:
    for record in reversed(t.records):
        if record.kind == "message" and record.entry is not None:
            for b in record.entry.blocks:
                if isinstance(b, ToolResult) and b.tool_use_id == call_id:
                    return b
    return None


_RECORD = st.tuples(
    st.sampled_from(["message", "write"]),
    st.lists(st.integers(min_value=0, max_value=6), max_size=3),  # call ids of its results
    st.integers(min_value=0, max_value=5),  # entry id
)


@given(st.lists(_RECORD, max_size=30), st.integers(min_value=0, max_value=40))
def test_the_transcript_index_finds_what_a_scan_finds_also_after_a_reload(
    records: list[Any], split: int
) -> None:
    live = Transcript()
    for n, (kind, ids, entry_id) in enumerate(records):
        blocks = tuple(ToolResult(f"c{i}", f"r{n}-{i}") for i in ids) or (Text(f"t{n}"),)
        live.add(kind, "conversation", turn=0, entry=Entry(id=f"e{entry_id}", blocks=blocks))
        if n == split:  # a lookup midway, then more records come
            assert live.tool_result("c0") == _scan(live, "c0")
    loaded = Transcript(list(live.records))  # a transcript rebuilt from its records
    for t in (live, loaded):
        for i in range(8):
            assert t.tool_result(f"c{i}") == _scan(t, f"c{i}")
        for e in range(7):
            found = [r.entry for r in t.records if r.kind == "message" and r.entry.id == f"e{e}"]
            assert t.message(f"e{e}") == (found[-1] if found else None)


def test_an_unknown_call_id_comes_back_as_text_after_a_reload(tmp_path: Any) -> None:
    engine = make_engine(
        [Pinned(name="system", budget=200), SlidingWindow(name="conversation", budget=8000)],
        max_tokens=10000,
        relief=ReliefPolicy(),
    )
    engine.add_user("go")
    engine.add_assistant("", [])
    path = engine.save(tmp_path / "s.json")
    loaded = type(engine).load(path, token_counter=StubCounter())
    for e in (engine, loaded):
        out = e.handle_tool_call("context_restore", {"call_id": "nope" + words(3)})
        assert "no tool result with call_id" in out.text


def _session() -> Any:
    return make_engine(
        [Pinned(name="system", budget=200), SlidingWindow(name="conversation", budget=10**6)],
        max_tokens=2 * 10**6,
        relief=ReliefPolicy(),
    )


def _answer(engine: Any, n: int, call: int) -> None:
    """Call ``c<call>`` (a reused id: the newer result is the one to find) and its result."""
    engine.add_assistant(f"step {n}", [ToolUse(f"c{call}", "read", {"n": n})])
    engine.add_tool_result(f"c{call}", f"result {n} of c{call}")


def _saved_and_loaded(engine: Any, how: str, folder: Path, stores: list[Any]) -> Any:
    """``engine`` saved and loaded the way a session is: a JSON or msgpack file, or a store
    (left open in ``stores``: the saved records are read from it on first use)."""
    if how == "sqlite":
        store = SQLiteStore(folder / "s.db")
        stores.append(store)
        engine.save_to(store, "s")
        return type(engine).load_from(store, "s", token_counter=StubCounter())
    path = engine.save(folder / f"s.{how}")
    return type(engine).load(path, token_counter=StubCounter())


_CALLS = st.lists(st.integers(min_value=0, max_value=5), max_size=12)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CALLS, _CALLS, st.sampled_from(["json", "msgpack", "sqlite"]))
def test_the_first_lookup_on_a_loaded_session_finds_what_a_scan_finds(
    before: list[int], after: list[int], how: str
) -> None:
    engine = _session()
    engine.add_user("go")
    for n, call in enumerate(before):
        _answer(engine, n, call)
    stores: list[Any] = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            _check_first_lookup(_saved_and_loaded(engine, how, Path(folder), stores), before, after)
        finally:
            for store in stores:
                store.close()


def _check_first_lookup(loaded: Any, before: list[int], after: list[int]) -> None:
    log = loaded.transcript_log
    assert not log.decoded  # the saved records wait, undecoded, behind the new ones
    for n, call in enumerate(after, start=len(before)):
        _answer(loaded, n, call)
    assert not log.decoded
    # the first lookup by call id (decodes the saved records and indexes them); a reused id
    # was renamed at admission (regio.callids): the k-th reuse of c<i> is c<i>-<k>
    calls = [*before, *after]
    names = [
        f"c{call}" if k == 0 else f"c{call}-{k}"
        for k, call in ((calls[:n].count(call), call) for n, call in enumerate(calls))
    ]
    ids = [*names, *(f"c{i}" for i in range(7))]
    found = {i: log.tool_result(i) for i in ids}
    kept = {i: relief_originals.original_result(loaded.session, i) for i in ids}
    assert found == kept == {i: _scan(log, i) for i in ids}
    for n, (call, name) in enumerate(zip(calls, names, strict=True)):
        assert found[name] == ToolResult(name, f"result {n} of c{call}")  # its own result
