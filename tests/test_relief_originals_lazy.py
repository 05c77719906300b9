"""The summarizer's originals after a load (``relief.with_originals``): the first summary of a
loaded session reads only the relief-edited messages it summarizes, by entry id and turn,
never decoding the whole stored transcript; it sees what the never-saved session sees. The
same holds for ``context_restore`` of a call still in the window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import CompactHistory, Pinned, SlidingWindow
from regio.session._stored import StoredRecords
from regio.session._transcript import Transcript, TranscriptRecord
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words

# per record: (kind, turn step 0/1, holds a tool result)
_RECORDS = st.lists(
    st.tuples(st.sampled_from(["message", "write"]), st.integers(0, 1), st.booleans()),
    max_size=30,
)


def _records(spec: list[Any]) -> list[TranscriptRecord]:
    out, turn = [], 0
    for n, (kind, step, result) in enumerate(spec):
        turn += step
        blocks = (ToolResult(f"c{n}", f"r{n}"),) if result else (Text(f"t{n}"),)
        entry = Entry(id=f"e{n}", blocks=blocks, turn=turn)
        out.append(TranscriptRecord(n, turn, kind, "conversation", entry))
    return out


def _lazy(stored: list[TranscriptRecord], decoded: list[int]) -> Transcript:
    """A transcript whose ``stored`` records wait undecoded (``decoded`` logs each one-record
    decode by position)."""

    def one(i: int) -> TranscriptRecord:
        decoded.append(i)
        return stored[i]

    return Transcript(
        stored=StoredRecords(
            len(stored),
            lambda: list(stored),
            one=one,
            turns=lambda: [r.turn for r in stored],
        )
    )


@settings(max_examples=60, deadline=None)
@given(_RECORDS, st.integers(0, 30), st.integers(0, 30), st.integers(-1, 2))
def test_a_lookup_by_entry_and_turn_finds_what_a_scan_finds_decoding_only_that_turn(
    spec: list[Any], split: int, wanted: int, off: int
) -> None:
    records = _records(spec)
    stored, added = records[:split], records[split:]
    decoded: list[int] = []
    log = _lazy(stored, decoded)
    for r in added:
        log.add(r.kind, r.region, turn=r.turn, entry=r.entry)
    scan = [r.entry for r in records if r.kind == "message" and r.entry.id == f"e{wanted}"]
    turn = records[wanted].turn if wanted < len(records) else 0
    got = log.message(f"e{wanted}", turn=turn + off)  # a wrong turn still finds it
    assert got == (scan[-1] if scan else None)
    if off == 0 and scan and wanted < len(stored):
        assert not log.decoded  # found among the stored records of its turn alone
        assert all(stored[i].turn == turn for i in decoded)
    assert log.message(f"e{wanted}") == got  # and without a turn


FLOW = Compact(compact_count=500, trigger=1000, target=400)


def _engine() -> Engine:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(name="conversation", budget=4000, eviction=FLOW),
        ],
        max_tokens=6000,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=ReliefPolicy(
            clear_at_least=10, trim_at_least=10, keep_last=1, summarize_originals=True
        ),
    )


def _step(engine: Engine, i: int) -> None:
    call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
    engine.add_assistant(f"step {i}", [call])
    engine.add_tool_result(call.id, words(150, f"t{i}x"))
    engine.request()


def _reloaded(engine: Engine, folder: Path, how: str, stores: list[Any]) -> Engine:
    """``engine`` saved and loaded as a JSON or msgpack file or from a SQLite store (left
    open in ``stores``: its records are read from it on first use)."""
    summarizer = StubSummarizer(size=8, distinct=True)
    if how == "sqlite":
        store = SQLiteStore(folder / "s.db")
        stores.append(store)
        engine.save_to(store, "s")
        return Engine.load_from(store, "s", token_counter=StubCounter(), summarizer=summarizer)
    path = engine.save(folder / f"s.{how}")
    return Engine.load(path, token_counter=StubCounter(), summarizer=summarizer)


@pytest.mark.parametrize("how", ["json", "msgpack", "sqlite"])
def test_the_first_summary_after_a_load_reads_only_its_own_originals(
    tmp_path: Path, how: str
) -> None:
    engine = _engine()
    engine.add_user("fix the bug")
    for i in range(60):
        _step(engine, i)
    live = engine.summarizer
    stores: list[Any] = []
    loaded = _reloaded(engine, tmp_path, how, stores)
    assert loaded.summarizer is not live
    before = len(live.inputs)
    i = 60
    while not loaded.summarizer.inputs:
        _step(engine, i)
        _step(loaded, i)
        i += 1
        assert i < 200, "the loaded session never summarized"
    assert not loaded.transcript_log.decoded
    # the summary covered the original results (not placeholders), as the live session's did
    assert loaded.summarizer.inputs[0] == live.inputs[before]
    batch = loaded.summarizer.inputs[0]
    texts = [b.content for e in batch for b in e.blocks if isinstance(b, ToolResult)]
    assert texts and not any("cleared to save context" in t for t in texts)
    for store in stores:
        store.close()


def _cleared_calls(engine: Engine) -> list[str]:
    conv = engine.window.conversation
    assert conv is not None
    return [
        b.tool_use_id
        for e in conv.entries
        for b in e.blocks
        if isinstance(b, ToolResult) and "cleared" in b.content
    ]


@pytest.mark.parametrize("how", ["json", "msgpack", "sqlite"])
def test_the_first_restore_after_a_load_reads_only_its_own_original(
    tmp_path: Path, how: str
) -> None:
    engine = _engine()
    engine.add_user("fix the bug")
    for i in range(60):
        _step(engine, i)
    stores: list[Any] = []
    loaded = _reloaded(engine, tmp_path, how, stores)
    cleared = _cleared_calls(loaded)
    assert cleared and cleared == _cleared_calls(engine)
    assert not loaded.transcript_log.decoded
    for call_id in cleared:
        out = loaded.handle_tool_call("context_restore", {"call_id": call_id})
        assert out.ok
        assert out.text == engine.handle_tool_call("context_restore", {"call_id": call_id}).text
        assert out.text == engine.transcript_log.tool_result(call_id).content
    assert not loaded.transcript_log.decoded
    for store in stores:
        store.close()


@settings(max_examples=15, deadline=None)
@given(st.integers(20, 70), st.integers(0, 80))
def test_restore_after_a_load_answers_what_the_saved_session_answers(
    tmp_path_factory: Any, steps: int, call: int
) -> None:
    engine = _engine()
    engine.add_user("fix the bug")
    for i in range(steps):
        _step(engine, i)
    stores: list[Any] = []
    loaded = _reloaded(engine, Path(tmp_path_factory.mktemp("restore")), "sqlite", stores)
    args = {"call_id": f"c{call}"}
    got = loaded.handle_tool_call("context_restore", args)
    want = engine.handle_tool_call("context_restore", args)
    assert (got.ok, got.text) == (want.ok, want.text)
    if loaded.window.call_group(f"c{call}") is not None:
        assert not loaded.transcript_log.decoded  # a call in the window: no full decode
    for store in stores:
        store.close()
