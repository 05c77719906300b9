"""``context_restore`` of a call whose result a ``park`` capture shortened to a stub brings back
the parked output, however the output left its region: displaced by a newer park, released
by the window, or released with its turn (regio.compaction.relief._originals). While the
output is still in its region, the restore says where it is instead of sending it twice. The
output is found in the session transcript (the write was recorded there with its stub), so a
session saved and loaded restores it too."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.capture import LiveCapture
from regio.capture.rules import ParkRule
from regio.content import Entry, Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import (
    PARKED_STUB,
    CompactHistory,
    Pinned,
    SlidingWindow,
    Temporary,
    is_parked_stub,
    parked_pointer,
)
from regio.session._transcript import Transcript
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words


def _engine(
    keep: int = 1, summarizer: StubSummarizer | None = None, **relief: Any
) -> tuple[Engine, LiveCapture]:
    engine = make_engine(
        [
            Pinned(name="system", budget=200),
            CompactHistory(name="history", budget=2_000, source="conversation"),
            SlidingWindow(name="conversation", budget=50_000, eviction=Compact()),
            Temporary(name="tool_output", budget=20_000),
        ],
        summarizer=summarizer or StubSummarizer(1),
        relief=ReliefPolicy(
            **({"clear_at_least": 0, "keep_last": 0, "placeholder_extract_tokens": 0} | relief)
        ),
    )
    return engine, LiveCapture((ParkRule("tool_output", 200, keep=keep),))


def _output(n: int) -> str:
    return f"contents of src/f{n}.py\nError: check {n} failed\n" + words(400, f"t{n}_")


def _turn(
    engine: Engine,
    capture: LiveCapture,
    n: int,
    call_id: str | None = None,
    output: str | None = None,
) -> None:
    call = ToolUse(call_id or f"c{n}", "read_file", {"path": f"src/f{n}.py"})
    capture.admit(
        engine,
        [
            Message("user", (Text(f"step {n}"),)),
            Message("assistant", (call,)),
            Message("tool", (ToolResult(call.id, output or _output(n)),)),
            Message("assistant", (Text(f"read src/f{n}.py"),)),
        ],
        [],
    )
    engine.request()


def _restore(engine: Engine, call_id: str) -> tuple[str, bool]:
    outcome = engine.handle_tool_call("context_restore", {"call_id": call_id})
    return outcome.text, outcome.ok


def _stub_in_conversation(engine: Engine, call_id: str) -> str:
    [content] = [
        b.content
        for e in engine.window.region("conversation").entries
        for b in e.blocks
        if isinstance(b, ToolResult) and b.tool_use_id == call_id
    ]
    return content


def test_a_restore_of_a_stub_whose_output_a_newer_park_displaced_brings_back_the_output() -> None:
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 1)
    _turn(engine, capture, 2)  # displaces the first output
    assert is_parked_stub(_stub_in_conversation(engine, "c1"))
    assert [e.text for e in engine.window.region("tool_output").entries] == [_output(2)]
    assert _restore(engine, "c1") == (_output(1), True)


def test_a_restore_of_a_stub_whose_output_the_window_released_brings_back_the_output() -> None:
    engine, capture = _engine(keep=2)
    _turn(engine, capture, 1)
    engine.clear("tool_output")
    assert _restore(engine, "c1") == (_output(1), True)


def test_a_restore_of_an_output_still_in_its_region_says_where_it_is() -> None:
    engine, capture = _engine(keep=2)
    _turn(engine, capture, 1)
    text, ok = _restore(engine, "c1")
    assert not ok
    assert "'tool_output'" in text and "unchanged" in text and _output(1) not in text


def test_a_stub_of_another_call_is_not_taken_for_this_calls_output() -> None:
    """A result that reads like another call's stub (the same text, another call id) is the
    result itself: the restore says it is in the conversation unchanged."""
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 1)
    _turn(engine, capture, 2)
    stub = _stub_in_conversation(engine, "c1")
    call = ToolUse("other", "echo", {})
    engine.add_message(Message("user", (Text("echo it"),)))
    engine.add_message(Message("assistant", (call,)))
    engine.add_message(Message("tool", (ToolResult("other", stub),)))
    text, ok = _restore(engine, "other")
    assert not ok and "in the conversation unchanged" in text


def test_reused_call_ids_each_restore_their_own_displaced_output() -> None:
    engine, capture = _engine(keep=1)
    for n in range(3):
        _turn(engine, capture, n, call_id="call_0")  # renamed call_0-1, call_0-2 on admission
    assert _restore(engine, "call_0") == (_output(0), True)
    assert _restore(engine, "call_0-1") == (_output(1), True)


def test_a_summary_of_cleared_stubs_reads_their_outputs_with_summarize_originals() -> None:
    summarizer = StubSummarizer(1)
    engine, capture = _engine(keep=2, summarizer=summarizer, summarize_originals=True)
    for n in range(4):
        _turn(engine, capture, n)
    engine.compact(keep_messages=8)  # the last two turns stay, their stubs cleared
    assert "cleared" in _stub_in_conversation(engine, "c2")
    engine.add_user("go on")
    engine.request()
    engine.compact(keep_messages=1)  # summarizes the cleared stubs
    read = "\n".join(e.text for e in summarizer.inputs[-1])
    assert _output(2) in read and _output(3) in read


#: Two versions of one file: the same first line and size, one word changed (the same stub).
V1 = "contents of src/f.py\n" + words(400, "a")
V2 = V1.replace("a7 ", "b7 ")


def test_two_outputs_with_one_stub_under_a_reused_call_id_each_restore_their_own() -> None:
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 0, call_id="call_0", output=V1)
    _turn(engine, capture, 1, call_id="call_0", output=V2)  # admitted as call_0-1
    _turn(engine, capture, 2, call_id="x")  # displaces V2
    assert _stub_in_conversation(engine, "call_0") == _stub_in_conversation(engine, "call_0-1")
    assert _restore(engine, "call_0") == (V1, True)
    assert _restore(engine, "call_0-1") == (V2, True)


def test_an_output_is_not_taken_for_another_calls_with_the_same_stub_and_a_like_id() -> None:
    """``call-1`` and ``call-2`` look alike to the rename rule (``<id>-<n>``); the output of
    ``call-1`` is the one parked with its own message, not the newer one in the region."""
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 1, call_id="call-1", output=V1)
    _turn(engine, capture, 2, call_id="call-2", output=V2)
    assert _restore(engine, "call-1") == (V1, True)
    assert not _restore(engine, "call-2")[1]  # still in its region


def test_two_results_of_one_message_with_one_stub_and_one_id_each_restore_their_own() -> None:
    engine, capture = _engine(keep=1)
    calls = [ToolUse("call_0", "read_file", {"path": "src/f.py"}) for _ in range(2)]
    capture.admit(
        engine,
        [
            Message("user", (Text("read it twice"),)),
            Message("assistant", tuple(calls)),
            Message("tool", (ToolResult("call_0", V1), ToolResult("call_0", V2))),
            Message("assistant", (Text("read"),)),
        ],
        [],
    )
    engine.request()
    _turn(engine, capture, 3)  # displaces both
    assert _restore(engine, "call_0") == (V1, True)
    assert _restore(engine, "call_0-1") == (V2, True)


def test_results_in_one_message_each_restore_their_own_output_openai_style() -> None:
    """One message per result (OpenAI Chat): each message's outputs are the writes just
    before it, not those of the message before it in the same turn."""
    engine, capture = _engine(keep=1)
    calls = [ToolUse(f"k{i}", "read_file", {"path": "src/f.py"}) for i in range(2)]
    capture.admit(
        engine,
        [
            Message("user", (Text("read it twice"),)),
            Message("assistant", tuple(calls)),
            Message("tool", (ToolResult("k0", V1),)),
            Message("tool", (ToolResult("k1", V2),)),
            Message("assistant", (Text("read"),)),
        ],
        [],
    )
    engine.request()
    _turn(engine, capture, 3)
    assert _restore(engine, "k0") == (V1, True)
    assert _restore(engine, "k1") == (V2, True)


def test_an_output_parked_again_by_a_later_call_is_not_sent_twice() -> None:
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 1, output=V1)
    _turn(engine, capture, 2, output=V1)  # the same command again: the same output
    text, ok = _restore(engine, "c1")
    assert not ok and "'tool_output'" in text


def test_a_context_restore_result_is_never_parked_again() -> None:
    """An agent loop that passes everything through the capture, the restore's result too:
    the output comes back into the conversation and the newer parked output stays."""
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 1)
    _turn(engine, capture, 2)
    outcome = engine.handle_tool_call("context_restore", {"call_id": "c1"})
    call = ToolUse("r1", "context_restore", {"call_id": "c1"})
    capture.admit(
        engine,
        [
            Message("assistant", (call,)),
            Message("tool", (ToolResult("r1", outcome.text),)),
        ],
        [],
    )
    assert _stub_in_conversation(engine, "r1") == _output(1)
    assert [e.text for e in engine.window.region("tool_output").entries] == [_output(2)]


def _saved_and_loaded(engine: Engine, how: str, folder: Path, stores: list[Any]) -> Engine:
    if how == "store":
        store = SQLiteStore(folder / "s.db")
        stores.append(store)
        engine.save_to(store, "s")
        return Engine.load_from(store, "s", token_counter=StubCounter())
    path = engine.save(folder / f"s.{how}")
    return Engine.load(path, token_counter=StubCounter())


@pytest.mark.parametrize("how", ["json", "store"])
def test_a_loaded_session_restores_a_displaced_parked_output(how: str, tmp_path: Path) -> None:
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 1)
    _turn(engine, capture, 2)
    stores: list[Any] = []
    try:
        loaded = _saved_and_loaded(engine, how, tmp_path, stores)
        assert _restore(loaded, "c1") == (_output(1), True)
        text, ok = _restore(loaded, "c2")  # still parked
        assert not ok and "'tool_output'" in text
    finally:
        for store in stores:
            store.close()


def test_a_restore_of_a_stub_after_a_load_decodes_only_its_own_turn(tmp_path: Path) -> None:
    engine, capture = _engine(keep=1)
    for n in range(30):
        engine.add_user(f"note {n}")
        engine.add_assistant(f"ok {n}", [])
        engine.request()
    _turn(engine, capture, 1)
    _turn(engine, capture, 2)
    stores: list[Any] = []
    try:
        loaded = _saved_and_loaded(engine, "store", tmp_path, stores)
        assert not loaded.transcript_log.decoded
        assert _restore(loaded, "c1") == (_output(1), True)
        assert not _restore(loaded, "c2")[1]
        assert not loaded.transcript_log.decoded  # the stored records wait, undecoded
    finally:
        for store in stores:
            store.close()


# ----- properties ----------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=1, max_value=3),
    st.lists(st.sampled_from(["turn", "turn", "clear"]), min_size=1, max_size=7),
)
def test_every_parked_call_restores_its_output_or_says_it_is_in_its_region(
    keep: int, steps: list[str]
) -> None:
    engine, capture = _engine(keep=keep)
    turns = 0
    for step in steps:
        if step == "clear":
            engine.clear("tool_output")
        else:
            _turn(engine, capture, turns)
            turns += 1
    held = {e.text for e in engine.window.region("tool_output").entries}
    for n in range(turns):
        text, ok = _restore(engine, f"c{n}")
        if _output(n) in held:
            assert not ok and "'tool_output'" in text
        else:
            assert (text, ok) == (_output(n), True)


@given(
    st.text(min_size=0, max_size=60),
    st.integers(min_value=0, max_value=10**6),
    st.text(alphabet=st.characters(blacklist_characters="'\n"), max_size=20),
)
def test_every_stub_a_park_writes_reads_as_a_stub(head: str, tokens: int, region: str) -> None:
    rule = ParkRule(region or "r", min_tokens=1)
    assert is_parked_stub(rule.stub(head, tokens))
    assert is_parked_stub(f"{head}\n{parked_pointer(tokens, region)}")
    assert not is_parked_stub(f"{parked_pointer(tokens, region)} and more")


_RECORD = st.tuples(st.sampled_from(["write", "message", "turn"]), st.integers(0, 2), st.booleans())


@given(st.lists(_RECORD, max_size=25))
def test_the_parked_writes_of_a_message_are_the_writes_just_before_it_also_after_a_reload(
    records: list[tuple[str, int, bool]],
) -> None:
    live, turn = Transcript(), 0
    for n, (kind, stub, parked) in enumerate(records):
        if kind == "turn":
            turn += 1
            continue
        meta = {PARKED_STUB: f"stub{stub}"} if parked and kind == "write" else {}
        entry = Entry(id=f"e{n}", blocks=(Text(f"text{n}"),), meta=meta)
        live.add(kind, "r", turn=turn, entry=entry)  # type: ignore[arg-type]
    loaded = Transcript(list(live.records))
    for t in (live, loaded):
        for i, message in enumerate(t.records):
            if message.kind != "message":
                continue
            for stub in range(3):
                start = i
                while (
                    start
                    and t.records[start - 1].turn == message.turn
                    and t.records[start - 1].kind != "message"
                ):
                    start -= 1
                expected = [
                    r.entry.id
                    for r in t.records[start:i]
                    if r.kind == "write" and r.entry.meta.get(PARKED_STUB) == f"stub{stub}"
                ]
                assert [e.id for e in t.parked_before(f"stub{stub}", message)] == expected


def test_a_transcript_that_forgot_its_stored_records_finds_the_parked_writes_it_kept() -> None:
    with tempfile.TemporaryDirectory() as folder:
        engine, capture = _engine(keep=1)
        _turn(engine, capture, 1)
        path = engine.save(Path(folder) / "s.json")
        loaded = Engine.load(path, token_counter=StubCounter())
        _turn(loaded, capture, 2)
        _turn(loaded, capture, 3)
        log = loaded.transcript_log
        assert log.forget_stored() > 0
        assert _restore(loaded, "c2") == (_output(2), True)  # positions shifted, still found
