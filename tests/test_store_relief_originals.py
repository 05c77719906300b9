"""The relief originals (the results the relief chain changed on admission, kept whole for
``context_restore``) in a session store: each is one ``@ro/<call id>`` record and
``@rn/<call id>`` the sequence number of its last set, so the head holds the next sequence
number, not the ids, and a save writes only the originals new (or replaced under their call id)
since the last save; a load gives back every original in order, and what is stored is exactly
what a save from scratch would store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore, encode_save
from regio.persistence.store.base import _Head
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from store_support import HISTORY_BLUEPRINT, HistorySession

COUNTER = get_counter("heuristic")


def _engine() -> Engine:
    return Engine.from_blueprint(
        HISTORY_BLUEPRINT,
        token_counter=COUNTER,
        summarizer=ExtractiveSummarizer(counter=COUNTER, max_summary_tokens=200),
        clock=lambda: 0.0,
        relief=ReliefPolicy(tools={"read": ToolRelief(max_result_tokens=16)}),
    )


def _turn(engine: Engine, n: int, call: str, long: bool) -> None:
    engine.add_user(f"turn {n}: check {call}")
    engine.add_assistant(f"checking {n}", [ToolUse(call, "read", {"n": n})])
    lines = 20 if long else 1
    engine.add_tool_result(call, " ".join(f"turn {n} line {k} ok" for k in range(lines)))
    engine.request("anthropic", "claude-sonnet-4-6")


def _load(store: SQLiteStore) -> Engine:
    return Engine.load_from(store, "r", token_counter=COUNTER, clock=lambda: 0.0)


def _stored_keys(store: SQLiteStore) -> set[str]:
    return {k for (k,) in store._db.execute("select key from entries where session = 'r'")}


# per turn: (call id number, a long result the chain trims, save after it, reload after it)
_TURNS = st.lists(
    st.tuples(st.integers(0, 8), st.booleans(), st.booleans(), st.booleans()),
    min_size=1,
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=_TURNS)
def test_a_loaded_session_has_every_original_and_the_store_holds_exactly_a_full_save(
    tmp_path_factory: Any, turns: list[tuple[int, bool, bool, bool]]
) -> None:
    store = SQLiteStore(Path(tmp_path_factory.mktemp("ro")) / "s.db")
    engine = _engine()
    try:
        for n, (call, long, save, reload) in enumerate(turns):
            _turn(engine, n, f"c{call}", long)
            if save or reload or n == len(turns) - 1:
                before = dict(engine.book.relief.originals)
                engine.save_to(store, "r")
                if reload:
                    engine = _load(store)
                    assert engine.book.relief.originals == before
                    assert list(engine.book.relief.originals) == list(before)
        loaded = _load(store)
        assert loaded.book.relief.originals == engine.book.relief.originals
        assert list(loaded.book.relief.originals) == list(engine.book.relief.originals)
        full = encode_save(loaded, None)
        originals = {k for k in full.put if k.startswith(("@ro/", "@rn/"))}
        assert len(originals) == 2 * len(engine.book.relief.originals)
        assert _stored_keys(store) == set(full.digests) | originals
    finally:
        store.close()


def test_a_save_writes_the_new_and_replaced_originals_only(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    engine = _engine()
    try:
        for n in range(30):
            _turn(engine, n, f"c{n}", True)
            engine.save_to(store, "r")
        _turn(engine, 30, "c30", True)
        put = encode_save(engine, engine.store_mark).put
        assert sorted(k for k in put if k.startswith(("@ro/", "@rn/"))) == ["@rn/c30", "@ro/c30"]
        engine.save_to(store, "r")
        _turn(engine, 31, "c4", True)  # a call id again: its original is replaced
        put = encode_save(engine, engine.store_mark).put
        assert sorted(k for k in put if k.startswith(("@ro/", "@rn/"))) == ["@rn/c4", "@ro/c4"]
        engine.save_to(store, "r")
        assert _load(store).book.relief.originals == engine.book.relief.originals
    finally:
        store.close()


def test_the_head_holds_the_sequence_of_the_originals_not_their_ids() -> None:
    session = HistorySession(relief=True)
    session.advance_to(100)
    early = len(encode_save(session.engine, session.engine.store_mark).head)
    session.advance_to(1_000)
    assert len(session.engine.book.relief.originals) == 1_000
    records = encode_save(session.engine, session.engine.store_mark)
    head = msgspec.msgpack.decode(records.head, type=_Head)
    assert head.originals is None and head.lists is not None and "@rl" not in head.lists
    assert head.originals_seq == 1_000
    assert len(records.head) <= early + 512, (early, len(records.head))


def test_a_trimmed_result_that_left_the_window_restores_whole_after_a_load(
    tmp_path: Path,
) -> None:
    # why the session keeps every original: the transcript holds the result as admitted
    # (trimmed), so after its group has left the window the original is the only full copy
    session = HistorySession(relief=True)
    session.advance_to(150)
    engine = session.engine
    assert engine.window.call_group("c0") is None  # its turn group has left the window
    full = " ".join(f"item 0 line {k} status ok" for k in range(20))
    admitted = engine.transcript_log.tool_result("c0")
    assert admitted is not None and admitted.content != full  # trimmed on admission
    store = SQLiteStore(tmp_path / "s.db")
    try:
        engine.save_to(store, "r")
        loaded = _load(store)
        out = loaded.handle_tool_call("context_restore", {"call_id": "c0"})
        assert out.ok and out.text == full
    finally:
        store.close()
