"""A session saved and loaded between requests keeps "seen before cut" (issue 29,
``regio.compaction._cuts``): a tool result added before the save, which no request carried
yet, is not cleared or summarized by the loaded engine before a request carries it. The saved
state holds when the last request was laid out and the window's next entry number then
(``SessionState.last_sent_at`` / ``last_next_entry``); without them a loaded engine took every
result as sent and summarized the newest one at its first request."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from runtime_stubs import StubCounter, StubSummarizer
from test_seen_before_cut import TURN, _engine, play, played, uncarried

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))


def _reloaded(engine: Any, where: Path, how: str, n: int) -> Any:
    """``engine`` saved to a state file or a SQLite store and loaded back."""
    kw: dict[str, Any] = {"summarizer": StubSummarizer(size=30), "token_counter": StubCounter()}
    if how == "file":
        path = where / f"s{n}.json"
        engine.save(path)
        return Engine.load(path, **kw)
    store = SQLiteStore(where / f"s{n}.db")
    try:
        engine.save_to(store, "s", create=True)
        return Engine.load_from(store, "s", **kw)
    finally:
        store.close()


def _saving(where: Path, saves: list[str | None]) -> Any:
    """The :data:`test_seen_before_cut.Between` step that saves and loads the engine after turn
    ``n`` the way ``saves[n]`` says (``None``, or no entry: not)."""

    def between(engine: Any, n: int) -> Any:
        how = saves[n] if n < len(saves) else None
        return engine if how is None else _reloaded(engine, where, how, n)

    return between


@pytest.mark.parametrize("how", ["file", "sqlite"])
def test_results_added_before_a_save_are_not_summarized_at_the_loaded_engines_first_request(
    tmp_path: Path, how: str
) -> None:
    """Three results (the last one large) added after the last request, then the session
    saved and loaded: the loaded engine's first request carries them, as the engine it was
    saved from does (before the fix the loaded engine summarized all three first)."""
    turns = [(False, [457, 31, 2963], False, True), (True, [60], False, True)]
    assert uncarried(play(_engine(3000, False), turns)) == []
    assert uncarried(play(_engine(3000, False), turns, _saving(tmp_path, [how]))) == []


@played(EXAMPLES)
@given(
    turns=st.lists(TURN, min_size=1, max_size=15),
    window=st.sampled_from([3000, 6000]),
    relief=st.booleans(),
    saves=st.lists(st.sampled_from(["file", "sqlite", None]), min_size=15, max_size=15),
)
def test_property_every_tool_result_is_in_a_request_before_it_is_cut_across_saves(
    tmp_path_factory: Any,
    turns: list[tuple[bool, list[int], bool, bool]],
    window: int,
    relief: bool,
    saves: list[str | None],
) -> None:
    """The property of tests/test_seen_before_cut.py with the session saved (a state file or
    a SQLite store) and loaded after any turn's results, before its request."""
    where = tmp_path_factory.mktemp("saves")
    assert uncarried(play(_engine(window, relief), turns, _saving(where, saves))) == []
