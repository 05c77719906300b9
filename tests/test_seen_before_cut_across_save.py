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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from runtime_stubs import StubCounter, StubSummarizer, words
from test_seen_before_cut import TURN, _covered, _engine, _sent

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


def _play(
    engine: Any,
    turns: list[tuple[bool, list[int], bool, bool]],
    saves: list[str | None],
    where: Path,
) -> list[tuple[str, frozenset[str]]]:
    """Play ``turns`` (tests/test_seen_before_cut.py) on ``engine``, saved and loaded (a state
    file or a SQLite store, ``saves[n]``) after turn ``n``'s results, before its request: the
    log of what the requests carried and what clearings and summaries covered, in order."""
    log: list[tuple[str, frozenset[str]]] = []
    results: dict[str, str] = {}  # entry id -> the call id whose result it holds
    _covered(engine, log, results)
    engine.add_user("start")
    engine.request()  # the calls below answer the model's responses to requests
    for n, (user, sizes, together, then_request) in enumerate(turns):
        if user:
            engine.add_user(words(30, f"u{n}x"))
        calls = [ToolUse(f"c{n}_{k}", "bash", {"k": k}) for k in range(len(sizes))]
        engine.add_assistant(f"step {n}", calls)
        batches = [calls] if together else [[c] for c in calls]
        for batch in batches:
            message = Message.tool(
                [ToolResult(c.id, words(sizes[calls.index(c)], f"{c.id}r")) for c in batch]
            )
            entry = engine.add_message(message)
            for c in batch:
                results[entry.id] = c.id
        how = saves[n] if n < len(saves) else None
        if how is not None:
            engine = _reloaded(engine, where, how, n)
            _covered(engine, log, results)
        if then_request:
            request, _ = engine.request()
            log.append(("request", _sent(request)))
    return log


def _uncarried(log: list[tuple[str, frozenset[str]]]) -> list[str]:
    """The call ids a clearing or summary covered before any request carried them."""
    seen: set[str] = set()
    out: list[str] = []
    for kind, ids in log:
        if kind == "request":
            seen |= ids
        else:
            out.extend(sorted(ids - seen))
    return out


@pytest.mark.parametrize("how", ["file", "sqlite"])
def test_results_added_before_a_save_are_not_summarized_at_the_loaded_engines_first_request(
    tmp_path: Path, how: str
) -> None:
    """Three results (the last one large) added after the last request, then the session
    saved and loaded: the loaded engine's first request carries them, as the engine it was
    saved from does (before the fix the loaded engine summarized all three first)."""
    turns = [(False, [457, 31, 2963], False, True), (True, [60], False, True)]
    assert _uncarried(_play(_engine(3000, False), turns, [], tmp_path)) == []
    assert _uncarried(_play(_engine(3000, False), turns, [how], tmp_path)) == []


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
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
    log = _play(_engine(window, relief), turns, saves, where)
    assert _uncarried(log) == []
