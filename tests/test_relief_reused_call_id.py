"""A call id used again never restores another call's result: while the earlier call is in the
window the new one is renamed at admission (``<id>-<n>``, :mod:`regio.callids`) and each id
restores its own result; once it left, the new call keeps the id and replaces its kept
original, whether the new result is changed on admission (trimmed) or admitted unchanged:
``context_restore`` and the clear stage never read an earlier result's text under a call id,
before or after a lazy load."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from test_store_originals_append_only import _engine, _load, _result


def _call(engine: Engine, n: int, call: str, long: bool) -> tuple[str, str]:
    """One turn calling ``call``: the id the engine gave the call, and its result's text."""
    text = _result(n, call) if long else f"short {n} {call}"
    engine.add_user(f"turn {n}: check {call}")
    entry = engine.add_assistant(f"checking {n}", [ToolUse(call, "read", {"n": n})])
    engine.add_tool_result(call, text)  # a long one is trimmed on admission
    engine.request("anthropic", "claude-sonnet-4-6")
    return entry.message.tool_calls[0].id, text


def _check(engine: Engine, latest: dict[str, tuple[str, bool]], texts: set[str]) -> None:
    for call, (text, long) in latest.items():
        out = engine.handle_tool_call("context_restore", {"call_id": call})
        if long:
            assert (out.ok, out.text) == (True, text)
        else:  # unchanged on admission: never an earlier result's original
            assert out.text not in texts - {text}
            assert not out.ok or out.text == text
        kept = engine.book.relief.originals.get(call)
        assert kept is None or kept.content == text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=14))
def test_a_reused_call_ids_restore_is_its_latest_result(turns: list[tuple[int, bool]]) -> None:
    engine = _engine()
    latest: dict[str, tuple[str, bool]] = {}
    texts: set[str] = set()
    for n, (call, long) in enumerate(turns):
        given, text = _call(engine, n, f"c{call}", long)
        latest[given] = (text, long)
        texts.add(text)
        _check(engine, latest, texts)


def test_a_reused_call_id_admitted_unchanged_replaces_its_stored_original(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        engine = _engine()
        _, first = _call(engine, 0, "c1", True)  # trimmed: its original is kept
        engine.save_to(db, "r")
        loaded = _load(db)  # the original is stored, read on demand
        loaded.release("conversation", oldest=2)  # the first call left the window
        given, second = _call(loaded, 1, "c1", False)  # the same call id, admitted unchanged
        assert given == "c1"  # nothing in the window has it: it keeps its id
        _check(loaded, {"c1": (second, False)}, {first, second})
        loaded.save_to(db, "r")
        _check(_load(db), {"c1": (second, False)}, {first, second})
    finally:
        db.close()
