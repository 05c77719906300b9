"""State saved by an older regio still loads: the fixtures in ``tests/fixtures/state`` were
written by regio's main of 2026-12-01 (``python tests/state_fixture_support.py``), whose state
files saved every option field by field, the layout state twice (``layout_state`` beside
``last_request.state``) and no request tools. A loaded fixture renders what the same session
built again renders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from msgspec.structs import replace

from regio.runtime import Engine
from regio.store import SQLiteStore
from state_fixture_support import FIXTURES, SHELL, Ticks, fixture_engine

STAMP = "20261201"


def _same_session(loaded: Engine, rebuilt: Engine) -> None:
    assert loaded.options == rebuilt.options
    assert loaded.transcript() == rebuilt.transcript()
    assert loaded.ledger.records == rebuilt.ledger.records
    assert loaded.book.relief.originals == rebuilt.book.relief.originals
    assert loaded.state.last_request == replace(rebuilt.state.last_request, events=())
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
