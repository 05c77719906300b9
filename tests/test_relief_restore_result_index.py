"""``context_restore`` reads a call's live result entry from the window's result index, not by
walking the conversation back to the call: on any sequence of calls, results (at once, in a
later message, re-sent, for an unknown call, progress reports), relief clears, compactions,
releases, requests under pressure and saves / loads, the indexed lookup answers exactly what
the backward walk answered, for every call id; relief edits are followed without a rebuild."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief import _chain as relief
from regio.compaction.relief import _originals as relief_originals
from regio.content import Entry, Message, ToolResult, ToolUse
from regio.errors import CompactionNoProgressError, ProtectedEntryError
from regio.persistence.store import SQLiteStore
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words
from test_regions_result_index import near, walk

CALLS = [f"c{i}" for i in range(6)]


def _walk(c: Any, call_id: str) -> Entry | None:
    """The lookup as it was before the index (the reference): from the newest conversation
    entry back to the call, summaries passed over (:func:`walk`)."""
    conv = c.window.conversation
    if conv is None or c.window.call_group(call_id) is None:
        return None
    return walk(conv.entries, call_id)


def _engine() -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=800, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=3000,
                eviction=Compact(compact_count=500, trigger=1200, target=500),
            ),
        ],
        max_tokens=5000,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=ReliefPolicy(clear_at_least=10, trim_at_least=10, keep_last=1),
    )


def _reloaded(engine: Any, how: str, folder: str, stores: list[Any]) -> Any:
    if how == "sqlite":
        store = SQLiteStore(Path(folder) / f"s{len(stores)}.db")
        stores.append(store)
        engine.save_to(store, "s")
        return type(engine).load_from(store, "s", token_counter=StubCounter())
    path = engine.save(Path(folder) / f"s.{how}")
    return type(engine).load(path, token_counter=StubCounter())


_CALL = st.tuples(
    st.just("call"),
    st.lists(st.sampled_from(CALLS), min_size=1, max_size=2, unique=True),
    st.sampled_from(["now", "now", "later", "progress"]),
    st.integers(5, 150),
)
_STEP = st.one_of(
    _CALL,
    _CALL,
    _CALL,
    st.tuples(st.just("late"), st.integers(5, 150)),
    st.tuples(st.just("resend"), st.sampled_from([*CALLS, "ghost"]), st.integers(5, 60)),
    st.tuples(st.just("user")),
    st.tuples(st.just("request")),
    st.tuples(st.just("clear"), st.integers(75, 98)),
    st.tuples(st.just("compact"), st.integers(2, 8)),
    st.tuples(st.just("release"), st.integers(0, 3)),
    st.tuples(st.just("restore"), st.sampled_from(CALLS)),
    st.tuples(st.just("reload"), st.sampled_from(["json", "msgpack", "sqlite"])),
)


def _step(engine: Any, step: tuple[Any, ...], pending: list[str], n: int) -> None:
    kind = step[0]
    if kind == "call":
        _, ids, when, size = step
        engine.add_assistant(f"step {n}", [ToolUse(i, "read", {"n": n}) for i in ids])
        if when == "later":
            pending.extend(ids)
        else:
            final = when == "now"
            results = tuple(ToolResult(i, words(size, f"r{n}{i}"), final=final) for i in ids)
            engine.add_message(Message.tool(results))
    elif kind == "late" and pending:
        results = tuple(ToolResult(i, words(step[1], f"late{n}{i}")) for i in pending)
        engine.add_message(Message.tool(results))
        pending.clear()
    elif kind == "resend":
        engine.add_tool_result(step[1], words(step[2], f"again{n}"))
    elif kind == "user":
        engine.add_user(f"next {n}")
    elif kind == "request":
        engine.request()
    elif kind == "clear":
        conv = engine.window.conversation
        relief.relieve(engine.session, conv, conv.used_tokens * step[1] // 100)
    elif kind == "compact":
        with contextlib.suppress(CompactionNoProgressError):  # too little: nothing changed
            engine.compact(keep_messages=step[1])
    elif kind == "release":
        with contextlib.suppress(ProtectedEntryError):
            engine.release("conversation", oldest=step[1])
    elif kind == "restore":
        engine.handle_tool_call("context_restore", {"call_id": step[1]})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STEP, min_size=6, max_size=40), st.sampled_from([0, 3, 64]))
def test_the_indexed_lookup_answers_what_the_backward_walk_answers(
    steps: list[Any], near_entries: int
) -> None:
    with near(near_entries):
        _check_steps(steps)


def _check_steps(steps: list[Any]) -> None:
    engine = _engine()
    engine.add_user("go")
    pending: list[str] = []
    stores: list[Any] = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            for n, step in enumerate(steps):
                if step[0] == "reload":
                    engine = _reloaded(engine, step[1], folder, stores)
                else:
                    _step(engine, step, pending, n)
                c = engine.session
                for call in [*CALLS, "ghost"]:
                    assert relief_originals._live_result_entry(c, call) == _walk(c, call), (n, call)
        finally:
            for store in stores:
                store.close()


def _session(calls: int) -> Any:
    engine = make_engine(
        [Pinned(name="system", budget=200), SlidingWindow(name="conversation", budget=10**7)],
        max_tokens=2 * 10**7,
        relief=ReliefPolicy(clear_at_least=1, keep_last=0),
    )
    engine.add_user("go")
    for i in range(calls):
        engine.add_assistant("", [ToolUse(f"c{i}", "read", {"i": i})])
        engine.add_tool_result(f"c{i}", words(40, f"r{i}x"))
    return engine


def test_relief_clears_are_followed_without_rebuilding_the_index() -> None:
    engine = _session(50)
    c, conv = engine.session, engine.window.conversation
    index = engine.window.result_index(conv)
    assert relief_originals.restore(c, "c0")[1] is False  # unchanged: the first lookup builds it
    assert index.rebuilds == 1
    assert relief.relieve(c, conv, conv.used_tokens // 2) > 0  # clears the oldest results
    assert "cleared" in relief_originals._live_result_entry(c, "c0").blocks[0].content
    for i in range(50):
        assert relief_originals._live_result_entry(c, f"c{i}") == _walk(c, f"c{i}")
    assert relief_originals.restore(c, "c0") == (words(40, "r0x"), True)
    assert index.rebuilds == 1  # the clear replaced entries in place: followed, not rebuilt


def test_after_a_release_a_recent_call_is_answered_without_a_rebuild() -> None:
    """Entries removed: the index cannot follow; the newest entries answer a recent call
    (no rebuild), the first call further back rebuilds the index once."""
    engine = _session(100)
    c, conv = engine.session, engine.window.conversation
    index = engine.window.result_index(conv)
    relief_originals.restore(c, "c5")
    assert index.rebuilds == 1
    engine.release("conversation", oldest=4)
    assert index.rebuilds == 1  # nothing is done until asked
    assert relief_originals._live_result_entry(c, "c99") == _walk(c, "c99")
    assert index.rebuilds == 1  # among the newest entries
    for i in range(100):
        assert relief_originals._live_result_entry(c, f"c{i}") == _walk(c, f"c{i}")
    assert index.rebuilds == 2


def test_a_result_for_a_call_asked_again_is_not_live_until_it_comes() -> None:
    """A call id used again while its call is in the window: the new call is renamed at
    admission (``c1-1``, :mod:`regio.callids`), so the older result stays the live one of
    ``c1``, and the renamed call has none until its result arrives (sent as ``c1``), in a
    later message."""
    engine = _session(3)
    c = engine.session
    older = relief_originals._live_result_entry(c, "c1")
    assert older is not None
    entry = engine.add_assistant("again", [ToolUse("c1", "read", {"again": True})])
    assert entry.message.tool_calls[0].id == "c1-1"
    assert relief_originals._live_result_entry(c, "c1-1") is None
    assert relief_originals._live_result_entry(c, "c1") == older
    engine.add_user("meanwhile")
    engine.add_tool_result("c1", "the newer result")
    newer = relief_originals._live_result_entry(c, "c1-1")
    assert newer.blocks == (ToolResult("c1-1", "the newer result"),)
    assert relief_originals._live_result_entry(c, "c1") == older
    assert relief_originals.restore(c, "c1-1")[1] is False
