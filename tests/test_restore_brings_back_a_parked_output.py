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

from regio.callids import provider_id
from regio.capture import LiveCapture
from regio.capture.rules import LookupRule, ParkRule
from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.errors import RegionFullError
from regio.persistence._lostparts import StoredPartsLostWarning
from regio.persistence.store import SQLiteStore
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.regions import (
    CompactHistory,
    Keyed,
    Pinned,
    SlidingWindow,
    Temporary,
    is_parked_stub,
    parked_pointer,
)
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


def test_a_result_in_a_user_message_with_text_restores_its_output_after_it_left_with_its_turn():
    """Anthropic's API carries results in a user message, often with a text beside them; such
    a message opens a turn after the park writes of the turn before it."""
    engine, capture = _engine(keep=4)
    for n in range(4):
        call = ToolUse(f"c{n}", "read_file", {"path": f"src/f{n}.py"})
        results = (
            ToolResult(call.id, _output(n)),
            Text("<system-reminder>go on</system-reminder>"),
        )
        capture.admit(
            engine,
            [
                Message("user", (Text(f"step {n}"),)),
                Message("assistant", (call,)),
                Message("user", results),
                Message("assistant", (Text("read"),)),
            ],
            [],
        )
        engine.request()
    engine.compact(keep_messages=8)  # c2 and c3 cleared, their outputs leave with them
    assert engine.window.region("tool_output").entries == []
    assert _restore(engine, "c2") == (_output(2), True)


def _loop_step(engine: Engine, capture: LiveCapture, n: int, call: ToolUse, text: str) -> None:
    """A loop that admits each message as it comes (one per ``admit``)."""
    capture.admit(engine, [Message("user", (Text(f"step {n}"),))], [])
    capture.admit(engine, [Message("assistant", (call,))], [])
    capture.admit(engine, [Message("tool", (ToolResult(call.id, text),))], [])
    engine.request()


@pytest.mark.parametrize(
    "ids",
    [("call_0", "call_0", "call_0", "call_0"),  # a backend that numbers each step's calls from 0
     ("functions.read:0", "functions.read:1", "functions.context_restore:2",
      provider_id("functions.read:0"))],  # ids a provider refuses, mapped on admission
)  # fmt: skip
def test_a_restore_result_under_a_reused_or_mapped_call_id_is_never_parked_again(
    ids: tuple[str, str, str, str],
) -> None:
    engine, capture = _engine(keep=1)
    _loop_step(engine, capture, 1, ToolUse(ids[0], "read_file", {"path": "f1"}), _output(1))
    _loop_step(engine, capture, 2, ToolUse(ids[1], "read_file", {"path": "f2"}), _output(2))
    restore = ToolUse(ids[2], "context_restore", {"call_id": ids[3]})
    outcome = engine.handle_tool_call(restore.name, restore.input)
    assert outcome.ok and outcome.text == _output(1)
    _loop_step(engine, capture, 3, restore, outcome.text)
    results = [
        b.content
        for e in engine.window.region("conversation").entries
        for b in e.blocks
        if isinstance(b, ToolResult)
    ]
    assert results[-1] == _output(1)  # in the conversation whole
    assert [e.text for e in engine.window.region("tool_output").entries] == [_output(2)]


def test_a_lookup_in_a_loop_admitting_one_message_at_a_time_files_each_result_under_its_key():
    engine = make_engine(
        [
            Pinned(name="system", budget=200),
            SlidingWindow(name="conversation", budget=50_000),
            Keyed(name="users", budget=5_000),
        ]
    )
    capture = LiveCapture((LookupRule("users", ("get_user",), key="user:{user_id}"),))
    for uid in (1, 2):
        call = ToolUse("call_0", "get_user", {"user_id": uid})
        _loop_step(engine, capture, uid, call, f"name of user {uid}")
    filed = {e.key: e.text for e in engine.window.region("users").entries}
    assert filed == {"user:1": "name of user 1", "user:2": "name of user 2"}


def test_a_restore_whose_result_a_repair_closed_brings_back_the_output() -> None:
    """The call's result left the conversation but its call stayed; a repair closed the call
    with a placeholder (a write record, no message): the original is still the output."""
    engine, capture = _engine(keep=1)
    _turn(engine, capture, 1)
    _turn(engine, capture, 2)  # displaces output 1
    conv = engine.window.region("conversation")
    held = [k for k, e in enumerate(conv.entries) if e.role == "tool" and "c1" in repr(e.blocks)]
    del conv.entries[held[0]]  # a result lost from the window, its call kept
    assert engine.repair()
    assert _restore(engine, "c1") == (_output(1), True)


def test_a_retry_after_a_refused_admission_restores_each_result_its_own_output() -> None:
    """A message refused after its park writes were recorded, then sent again: the writes of
    the refused attempt are not taken for the retry's."""
    engine, capture = _engine(keep=1)
    v3 = V1.replace("a9 ", "c9 ")
    calls = tuple(ToolUse("call_0", "read_file", {"path": "f"}) for _ in range(2))
    capture.admit(engine, [Message("user", (Text("read twice"),)), Message("assistant", calls)], [])
    results = (ToolResult("call_0", V2), ToolResult("call_0", v3))
    with pytest.raises(RegionFullError):  # refused after its park writes were recorded
        capture.admit(engine, [Message("user", (*results, Text(words(300_000, "big"))))], [])
    capture.admit(engine, [Message("user", (*results, Text("go on")))], [])
    engine.request()
    _turn(engine, capture, 5)  # displaces both
    assert _restore(engine, "call_0") == (V2, True)
    assert _restore(engine, "call_0-1") == (v3, True)


def test_a_restore_result_admitted_first_after_a_load_is_never_parked_again(
    tmp_path: Path,
) -> None:
    """The proxy's next request after a load: the engine has not rebuilt its index of renamed
    calls yet, and the restore's result under a reused id is named as admission names it."""
    engine, capture = _engine(keep=1)
    _loop_step(engine, capture, 1, ToolUse("call_0", "read_file", {"path": "f1"}), _output(1))
    _loop_step(engine, capture, 2, ToolUse("call_0", "read_file", {"path": "f2"}), _output(2))
    restore = ToolUse("call_0", "context_restore", {"call_id": "call_0"})
    capture.admit(
        engine, [Message("user", (Text("step 3"),)), Message("assistant", (restore,))], []
    )
    outcome = engine.handle_tool_call(restore.name, restore.input)
    loaded = Engine.load(engine.save(tmp_path / "s.json"), token_counter=StubCounter())
    assert loaded.state.call_names is None
    capture.admit(loaded, [Message("tool", (ToolResult("call_0", outcome.text),))], [])
    results = [
        b.content
        for e in loaded.window.region("conversation").entries
        for b in e.blocks
        if isinstance(b, ToolResult)
    ]
    assert results[-1] == _output(1)
    assert [e.text for e in loaded.window.region("tool_output").entries] == [_output(2)]


def test_a_restore_result_whose_id_admission_repairs_is_never_parked_again() -> None:
    engine, capture = _engine(keep=1)
    call_id = "toolu_\ud800x"  # a lone surrogate: admission repairs it, then maps the id
    call = ToolUse(call_id, "context_restore", {"call_id": "c"})
    capture.admit(engine, [Message("user", (Text("go"),)), Message("assistant", (call,))], [])
    output = "restored\n" + words(400)
    capture.admit(engine, [Message("tool", (ToolResult(call_id, output),))], [])
    assert engine.window.region("conversation").entries[-1].blocks[0].content == output
    assert engine.window.region("tool_output").entries == []


_HEAD = "contents of src/f.py\n" + "\n".join(f"Error: check {k} failed" for k in range(3)) + "\n"


@pytest.mark.parametrize("ids", [("call_0", "call_0"), ("call-1", "call-12")])
def test_results_whose_stubs_relief_trimmed_each_restore_their_own_output(
    ids: tuple[str, str],
) -> None:
    """Relief trims both stubs on admission (nothing left to rank them by), the two calls'
    ids look alike to the rename rule: each output is found by its call's admitted id."""
    engine, capture = _engine(
        keep=1, clear=False, trim=False, tools={"read_file": ToolRelief(max_result_tokens=16)}
    )
    v1 = _HEAD + words(400, "a")
    v2 = v1.replace("a7 ", "b7 ")
    calls = tuple(ToolUse(i, "read_file", {"path": "src/f.py"}) for i in ids)
    results = (ToolResult(ids[0], v1), ToolResult(ids[1], v2))
    sent = [Message("user", (Text("read"),)), Message("assistant", calls)]
    capture.admit(
        engine, [*sent, Message("tool", results), Message("assistant", (Text("ok"),))], []
    )
    engine.request()
    _turn(engine, capture, 3)  # displaces both
    admitted = [
        b.tool_use_id
        for e in engine.window.region("conversation").entries
        for b in e.blocks
        if isinstance(b, ToolResult)
    ][:2]
    assert _restore(engine, admitted[0]) == (v1, True)
    assert _restore(engine, admitted[1]) == (v2, True)


def test_outputs_parked_under_a_reused_call_id_leave_with_their_turns() -> None:
    """A backend that numbers every step's call ``call_0``: the outputs of the summarized
    turns leave; only the kept turn's stays."""
    engine, capture = _engine(keep=3, clear=False, trim=False)  # relief clears nothing
    for n in range(3):
        _turn(engine, capture, n, call_id="call_0")
    engine.compact(keep_messages=4)  # the last turn stays, verbatim
    assert [e.text for e in engine.window.region("tool_output").entries] == [_output(2)]


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
    st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=20),
)
def test_every_stub_a_park_writes_reads_as_a_stub(head: str, tokens: int, region: str) -> None:
    rule = ParkRule(region or "r", min_tokens=1)
    assert is_parked_stub(rule.stub(head, tokens))
    assert is_parked_stub(f"{head}\n{parked_pointer(tokens, region)}")
    assert not is_parked_stub(f"{parked_pointer(tokens, region)} and more")


#: One step of an agent loop: how many results, how its messages carry them (one tool message,
#: one message per result as OpenAI Chat sends them, or a user message holding the results and
#: a text as Anthropic's API does), whether every call reuses the id ``call_0``, and for each
#: result which of three outputs (two with one stub, one with another) it returns.
_STEP = st.tuples(
    st.integers(1, 3),
    st.sampled_from(["tool", "per_result", "user_with_text"]),
    st.booleans(),
    st.lists(st.integers(0, 2), min_size=3, max_size=3),
)


def _outputs(step: int) -> list[str]:
    same = "contents of src/f.py\n" + words(300, f"s{step}_")
    return [same, same.replace(f"s{step}_7 ", f"x{step}_7 "), _output(step)]


def _step_messages(
    step: int, spec: tuple[int, str, bool, list[int]]
) -> tuple[list[Message], list[str]]:
    count, how, reuse, picks = spec
    ids = ["call_0" if reuse else f"s{step}c{k}" for k in range(count)]
    calls = tuple(ToolUse(i, "read_file", {"path": f"f{step}_{k}"}) for k, i in enumerate(ids))
    sent = [_outputs(step)[picks[k]] for k in range(count)]
    results = [ToolResult(i, text) for i, text in zip(ids, sent, strict=True)]
    if how == "per_result":
        carried = [Message("tool", (r,)) for r in results]
    elif how == "user_with_text":
        carried = [Message("user", (*results, Text("<reminder>go on</reminder>")))]
    else:
        carried = [Message("tool", tuple(results))]
    return [Message("user", (Text(f"step {step}"),)), Message("assistant", calls), *carried,
            Message("assistant", (Text("done"),))], sent  # fmt: skip


def _check_every_restore(engine: Engine, sent: list[str]) -> None:
    """Each result in the conversation (in admission order, the order ``sent`` lists their
    outputs) restores exactly its own output, or names the region still holding it."""
    admitted = [
        b.tool_use_id
        for e in engine.window.region("conversation").entries
        for b in e.blocks
        if isinstance(b, ToolResult)
    ]
    held = {e.text for e in engine.window.region("tool_output").entries}
    assert len(admitted) == len(sent)
    for call_id, output in zip(admitted, sent, strict=True):
        text, ok = _restore(engine, call_id)
        if output in held:
            assert not ok and "'tool_output'" in text, call_id
        else:
            assert (text, ok) == (output, True), call_id


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 2), st.lists(_STEP, min_size=1, max_size=5))
def test_every_parked_result_restores_its_own_output_in_every_loop_shape_also_after_a_load(
    keep: int, steps: list[tuple[int, str, bool, list[int]]]
) -> None:
    engine, capture = _engine(keep=keep)
    sent: list[str] = []
    for n, spec in enumerate(steps):
        messages, outputs = _step_messages(n, spec)
        for message in messages:  # a loop that admits each message as it comes
            capture.admit(engine, [message], [])
        sent += outputs
        engine.request()
    _check_every_restore(engine, sent)
    with tempfile.TemporaryDirectory() as folder:
        stores: list[Any] = []
        try:
            loaded = _saved_and_loaded(engine, "store", Path(folder), stores)
            assert not loaded.transcript_log.decoded  # the stored records wait, read lazily
            _check_every_restore(loaded, sent)
        finally:
            for store in stores:
                store.close()


def test_a_session_saved_after_its_store_lost_records_restores_from_a_lazy_load(
    tmp_path: Path,
) -> None:
    """A save after the store lost the stored records keeps the records since the load with
    their sequence numbers (regio.persistence._lostparts), so a record's ``seq`` is not its
    position; loaded lazily again, the parked output is still found."""
    engine, capture = _engine(keep=1)
    for n in range(5):
        engine.add_user(f"note {n}")
        engine.add_assistant(f"ok {n}", [])
        engine.request()
    store = SQLiteStore(tmp_path / "s.db")
    try:
        engine.save_to(store, "s")
        lazy = Engine.load_from(store, "s", token_counter=StubCounter())
        _turn(lazy, capture, 1)
        _turn(lazy, capture, 2)  # displaces the first output
        store.delete("s")
        with pytest.warns(StoredPartsLostWarning):  # the stored records are lost
            path = lazy.save(tmp_path / "after.json")
        Engine.load(path, token_counter=StubCounter()).save_to(store, "s2")
        again = Engine.load_from(store, "s2", token_counter=StubCounter())
        assert not again.transcript_log.decoded
        assert _restore(again, "c1") == (_output(1), True)
    finally:
        store.close()


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


def test_outputs_whose_stubs_relief_trimmed_for_one_call_only_come_back_to_their_own_calls() -> (
    None
):
    """Two results of one message with the same stub; relief shortens only ``read_file``'s, so
    the stubs left no longer rank the outputs: each call still gets its own output back (the
    capture recorded the id the engine admitted). Before, ``A`` got ``B``'s output, ok=True."""
    engine, capture = _engine(
        keep=1, clear=False, trim=False, tools={"read_file": ToolRelief(max_result_tokens=16)}
    )
    v1 = _HEAD + words(400, "a")
    v2 = v1.replace("a7 ", "b7 ")
    calls = (
        ToolUse("A", "cat", {"path": "src/f.py"}),
        ToolUse("B", "read_file", {"path": "src/f.py"}),
    )
    capture.admit(
        engine,
        [
            Message("user", (Text("read"),)),
            Message("assistant", calls),
            Message("tool", (ToolResult("A", v1), ToolResult("B", v2))),
            Message("assistant", (Text("ok"),)),
        ],
        [],
    )
    engine.request()
    _turn(engine, capture, 3)  # a later park displaces both outputs
    assert _restore(engine, "A") == (v1, True)
    assert _restore(engine, "B") == (v2, True)


def test_an_output_without_a_recorded_call_beside_one_with_it_comes_back_to_its_call() -> None:
    """One message answers a call in the window (``A``: the capture records the id admitted)
    and one it does not hold (``Z``: nothing to record); both stubs read alike. The rank among
    the message's results still names ``Z``'s write (before, the recorded write of ``A`` made
    every unrecorded one unreachable: the stub came back as ``Z``'s output)."""
    engine, capture = _engine(keep=2)
    out_a, out_z = _output(1), _output(1).replace("t1_7 ", "t1_zz ")
    capture.admit(
        engine,
        [
            Message("user", (Text("read"),)),
            Message("assistant", (ToolUse("A", "cat", {"p": 1}),)),
            Message("tool", (ToolResult("A", out_a), ToolResult("Z", out_z))),
            Message("assistant", (Text("ok"),)),
        ],
        [],
    )
    engine.request()
    _turn(engine, capture, 3)
    _turn(engine, capture, 4)  # both outputs displaced
    assert _restore(engine, "A") == (out_a, True)
    assert _restore(engine, "Z") == (out_z, True)
