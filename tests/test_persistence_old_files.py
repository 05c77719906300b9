"""State saved by an older regio still loads: the fixtures in ``tests/fixtures/state`` were
written by regio's main of 2026-12-01 (``python tests/state_fixture_support.py``), whose state
files saved every option field by field, the layout state twice (``layout_state`` beside
``last_request.state``) and no request tools. A loaded fixture renders what the same session
built again renders."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import msgpack
from msgspec.structs import replace

from regio.engine import Engine
from regio.persistence._savedconfig import ReliefLimitRaisedWarning
from regio.persistence._statefile import FORMAT, READ_FORMATS
from regio.persistence.store import SessionStoreError, SQLiteStore
from regio.persistence.store.base import HEAD_FORMAT, HEAD_READ_FORMATS
from regio.policies.relief import MARKER_TOKENS, ToolRelief
from state_fixture_support import FIXTURES, SHELL, Ticks, fixture_engine, unwatched

STAMP = "20261201"


def _same_session(loaded: Engine, rebuilt: Engine) -> None:
    assert loaded.options == rebuilt.options
    # the fixtures predate TranscriptRecord.kept: their records carry no mark
    assert loaded.transcript() == tuple(replace(r, kept=()) for r in rebuilt.transcript())
    assert any(r.kept for r in rebuilt.transcript())
    assert loaded.ledger.records == rebuilt.ledger.records
    assert loaded.book.relief.originals == rebuilt.book.relief.originals
    assert loaded.state.last_request == unwatched(replace(rebuilt.state.last_request, events=()))
    for engine in (loaded, rebuilt):
        engine.add_user("and the next turn")
    assert loaded.request(tools=[SHELL])[1] == rebuilt.request(tools=[SHELL])[1]
    assert loaded.state.last_estimate == rebuilt.state.last_estimate
    restored = loaded.handle_tool_call("context_restore", {"call_id": "call_5"})
    again = rebuilt.handle_tool_call("context_restore", {"call_id": "call_5"})
    assert restored.text == again.text


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
def test_a_state_file_saved_by_the_older_format_loads_and_renders_the_same(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"old{suffix}"
    shutil.copyfile(FIXTURES / f"main-{STAMP}{suffix}", path)
    _same_session(Engine.load(path, clock=Ticks()), fixture_engine())


def test_a_store_session_saved_by_the_older_format_loads_and_renders_the_same(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / f"main-{STAMP}.db", path)
    store = SQLiteStore(path)
    try:
        loaded = Engine.load_from(store, "fixture", clock=Ticks())
        _same_session(loaded, fixture_engine())
        loaded.save_to(store)  # an old session saves on in the current format
        again = Engine.load_from(store, "fixture", clock=Ticks())
        assert again.transcript() == loaded.transcript()
        assert again.state.last_request == replace(loaded.state.last_request, events=())
    finally:
        store.close()


def _with_shell_limit(tmp_path: Path, limit: int) -> Path:
    """A copy of the JSON fixture whose ``shell`` relief ``max_result_tokens`` is ``limit``
    (a state saved before the limit had a floor)."""
    data = json.loads((FIXTURES / f"main-{STAMP}.json").read_text(encoding="utf-8"))
    data["config"]["relief"]["tools"]["shell"]["max_result_tokens"] = limit
    path = tmp_path / f"old-limit-{limit}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_an_old_state_with_a_result_limit_below_the_marker_loads_raised_with_a_warning(
    tmp_path: Path,
) -> None:
    path = _with_shell_limit(tmp_path, 8)
    with pytest.warns(ReliefLimitRaisedWarning, match=re.escape(str(path))):
        loaded = Engine.load(path, clock=Ticks())
    assert loaded.options.relief is not None
    assert loaded.options.relief.tool("shell").max_result_tokens == MARKER_TOKENS
    loaded.add_user("and the next turn")
    loaded.request(tools=[SHELL])
    again = Engine.load(loaded.save(tmp_path / "again.json"), clock=Ticks())
    assert again.options == loaded.options  # saved raised: no warning the next time


def test_a_new_relief_policy_still_refuses_a_result_limit_below_the_marker() -> None:
    with pytest.raises(ValueError, match="max_result_tokens must be >= 16"):
        ToolRelief(max_result_tokens=8)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(limit=st.integers(min_value=0, max_value=64))
def test_a_saved_result_limit_loads_as_at_least_the_marker_and_warns_only_when_raised(
    tmp_path: Path, limit: int
) -> None:
    path = _with_shell_limit(tmp_path, limit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = Engine.load(path, clock=Ticks())
    raised = [w for w in caught if issubclass(w.category, ReliefLimitRaisedWarning)]
    assert loaded.options.relief is not None
    assert loaded.options.relief.tool("shell").max_result_tokens == max(limit, MARKER_TOKENS)
    assert len(raised) == (1 if limit < MARKER_TOKENS else 0)


def _head(path: Path, session_id: str) -> dict[str, Any]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        row = db.execute("select head from sessions where id = ?", (session_id,)).fetchone()
    return dict(msgpack.decode(row[0]))


def test_a_save_writes_this_versions_formats_and_the_older_ones_still_read(tmp_path: Path) -> None:
    engine = fixture_engine()
    saved = json.loads(engine.save(tmp_path / "new.json").read_bytes())
    assert saved["format"] == FORMAT == "regio.engine/2"
    old = json.loads((FIXTURES / f"main-{STAMP}.json").read_bytes())
    assert old["format"] == "regio.engine/1" and old["format"] in READ_FORMATS
    store = SQLiteStore(tmp_path / "new.db")
    try:
        engine.save_to(store, "fresh")
    finally:
        store.close()
    assert _head(tmp_path / "new.db", "fresh")["format"] == HEAD_FORMAT == "regio.session-head/6"
    assert _head(FIXTURES / f"main-{STAMP}.db", "fixture")["format"] in HEAD_READ_FORMATS


def test_a_session_head_of_an_unknown_format_is_refused_naming_the_version(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / f"main-{STAMP}.db", path)
    head = _head(path, "fixture")
    head["format"] = "regio.session-head/9"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("update sessions set head = ? where id = ?", (msgpack.encode(head), "fixture"))
    store = SQLiteStore(path)
    try:
        with pytest.raises(SessionStoreError, match=r"session-head/9.*another regio version"):
            Engine.load_from(store, "fixture", clock=Ticks())
    finally:
        store.close()
