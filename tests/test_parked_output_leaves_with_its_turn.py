"""A parked tool output leaves with the result that parked it (regio.compaction._parked): once
a compaction has summarized the message holding the output's stub, or relief has cleared that
result to a placeholder, the output leaves its region in the same flush (a ``released`` event
names it, the transcript keeps it). While the result stays in any other form (verbatim, or
trimmed on admission), the output stays; and an output no request has carried yet (parked in
the step a room flush interrupts) is never released."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.capture import LiveCapture
from regio.capture.filing import apply_op
from regio.capture.rules import ParkRule, observe
from regio.compaction.relief._originals import restore
from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.policies import Compact
from regio.policies.relief import CLEARED_META, ReliefPolicy, ToolRelief
from regio.regions import PARKED_CALL, PARKED_STUB, CompactHistory, Pinned, SlidingWindow, Temporary
from runtime_stubs import StubSummarizer, make_engine, words

_PARK = ParkRule("tool_output", min_tokens=200, keep=1)


def _engine(conversation: SlidingWindow | None = None, **options: Any) -> Engine:
    options.setdefault("summarizer", StubSummarizer(1))
    return make_engine(
        [
            Pinned(name="system", budget=200),
            CompactHistory(name="history", budget=2_000, source="conversation"),
            conversation or SlidingWindow(name="conversation", budget=50_000, eviction=Compact()),
            Temporary(name="tool_output", budget=20_000),
        ],
        **options,
    )


def _output(n: int, size: int) -> str:
    """A tool output of ``size`` words plus a first line and three error lines."""
    errors = "\n".join(f"Error: check {k} failed in src/f{n}.py" for k in range(3))
    return f"contents of src/f{n}.py\n{errors}\n" + words(size, f"t{n}_")


def _turn(engine: Engine, capture: LiveCapture, n: int, size: int) -> None:
    """A user message, a call, its result of ``size`` words (parked from 200), a reply."""
    call = ToolUse(f"c{n}", "read_file", {"path": f"src/f{n}.py"})
    output = _output(n, size)
    capture.admit(
        engine,
        [
            Message("user", (Text(f"step {n}: read the file"),)),
            Message("assistant", (call,)),
            Message("tool", (ToolResult(call.id, output),)),
            Message("assistant", (Text(f"read src/f{n}.py"),)),
        ],
        [],
    )
    engine.request()


def _parked(engine: Engine) -> list[str]:
    return [e.text for e in engine.window.region("tool_output").entries]


def _held(engine: Engine) -> str:
    return "\n".join(e.text for e in engine.window.region("conversation").entries)


def test_a_compaction_that_summarizes_the_stub_releases_the_parked_output() -> None:
    engine, capture = _engine(), LiveCapture((_PARK,))
    _turn(engine, capture, 1, 400)
    [entry] = engine.window.region("tool_output").entries
    stub = entry.meta[PARKED_STUB]
    assert stub in _held(engine) and "parked in region 'tool_output'" in stub
    seen = len(engine.events.history)
    result = engine.compact(keep_tokens=0)
    assert result is not None
    assert _parked(engine) == []
    released = [e for e in engine.events.history[seen:] if e.kind == "released"]
    assert [(e.region, e.entry_ids) for e in released] == [("tool_output", (entry.id,))]
    kinds = {(r.kind, r.region, r.entry.id if r.entry else r.ids) for r in engine.transcript()}
    assert ("write", "tool_output", entry.id) in kinds  # the output as parked
    assert ("release", "tool_output", (entry.id,)) in kinds


def test_a_parked_output_whose_stub_is_kept_stays() -> None:
    engine, capture = _engine(), LiveCapture((_PARK,))
    _turn(engine, capture, 1, 400)
    _turn(engine, capture, 2, 50)  # not parked: the newest turn is small
    _turn(engine, capture, 3, 400)  # displaces the first parked output (keep: 1)
    [entry] = engine.window.region("tool_output").entries
    engine.compact(keep_messages=4)  # the newest turn, with its stub, stays verbatim
    assert [e.id for e in engine.window.region("tool_output").entries] == [entry.id]
    assert entry.meta[PARKED_STUB] in _held(engine)


def test_output_written_by_the_agent_is_never_released_by_a_compaction() -> None:
    engine, capture = _engine(), LiveCapture((_PARK,))
    engine.write("tool_output", "a note the agent wrote itself")
    _turn(engine, capture, 1, 50)
    engine.compact(keep_tokens=0)
    assert _parked(engine) == ["a note the agent wrote itself"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(min_value=10, max_value=600), st.integers(min_value=0, max_value=6)),
        min_size=1,
        max_size=8,
    )
)
def test_after_every_compaction_each_parked_output_has_its_stub_in_the_conversation(
    steps: list[tuple[int, int]],
) -> None:
    """Whatever the sizes and however much each compaction keeps: after a flush, every parked
    output's stub is still held by a conversation message, and an output whose stub is held
    was never released."""
    engine, capture = _engine(), LiveCapture((_PARK,))
    for n, (size, keep) in enumerate(steps):
        _turn(engine, capture, n, size)
        before = {e.id: e.meta[PARKED_STUB] for e in engine.window.region("tool_output").entries}
        engine.compact(keep_messages=keep)
        after = {e.id for e in engine.window.region("tool_output").entries}
        held = _held(engine)
        for entry_id, stub in before.items():
            assert (entry_id in after) == (stub in held)


def test_a_parked_result_knows_its_call_and_a_parked_observation_only_its_stub() -> None:
    engine, capture = _engine(), LiveCapture((_PARK,))
    _turn(engine, capture, 1, 400)
    [result] = engine.window.region("tool_output").entries
    assert result.meta[PARKED_CALL] == "c1"
    kept, [op] = observe(_output(2, 400), (_PARK,), engine.counter.count)
    assert apply_op(engine, op)
    observation = engine.window.region("tool_output").entries[-1]
    assert observation.meta == {PARKED_STUB: kept}


def test_a_parked_observation_leaves_when_its_message_is_summarized() -> None:
    engine = _engine()
    kept, [op] = observe(_output(1, 400), (_PARK,), engine.counter.count)
    apply_op(engine, op)
    engine.add_message(Message("user", (Text(kept),)))
    engine.request()
    engine.add_user("next step")
    engine.compact(keep_messages=1)
    assert _parked(engine) == []


def _clearing(keep: int = 2, **relief: Any) -> tuple[Engine, LiveCapture]:
    """An engine whose relief clears every result it may (no extract), and a park keeping
    ``keep`` outputs; ``relief`` overrides the policy's keys."""
    policy = ReliefPolicy(
        **({"clear_at_least": 0, "keep_last": 0, "placeholder_extract_tokens": 0} | relief)
    )
    return _engine(relief=policy), LiveCapture((ParkRule("tool_output", 200, keep=keep),))


def test_a_parked_output_whose_result_relief_cleared_leaves_with_it() -> None:
    engine, capture = _clearing()
    for n in range(4):
        _turn(engine, capture, n, 400)
    parked = [e.id for e in engine.window.region("tool_output").entries]
    seen = len(engine.events.history)
    engine.compact(keep_messages=8)  # the last two turns stay, their results cleared
    kept = [e for e in engine.window.region("conversation").entries if e.role == "tool"]
    assert [e.blocks[0].tool_use_id for e in kept] == ["c2", "c3"]  # type: ignore[union-attr]
    assert all("cleared" in e.text for e in kept)
    assert _parked(engine) == []
    released = [e for e in engine.events.history[seen:] if e.kind == "released"]
    assert sorted(i for e in released for i in e.entry_ids) == sorted(parked)


def test_a_kept_turn_whose_stub_was_trimmed_on_admission_keeps_its_parked_output() -> None:
    relief = ReliefPolicy(
        clear=False, trim=False, tools={"read_file": ToolRelief(max_result_tokens=16)}
    )
    engine, capture = _engine(relief=relief), LiveCapture((ParkRule("tool_output", 200, keep=2),))
    for n in range(4):
        _turn(engine, capture, n, 400)
    parked = [e.id for e in engine.window.region("tool_output").entries]
    stubs = [e.meta[PARKED_STUB] for e in engine.window.region("tool_output").entries]
    assert not any(stub in _held(engine) for stub in stubs)  # trimmed: not verbatim
    engine.compact(keep_messages=8)
    assert [e.id for e in engine.window.region("tool_output").entries] == parked


def _drive_small_conversation(turns: list[tuple[int, int]]) -> None:
    """``turns`` (words asked, words of output) through a small conversation whose room flush
    runs while a result is admitted (its stub not in the conversation yet), asserting that
    every output released was in a request sent before."""
    conversation = SlidingWindow(
        name="conversation",
        budget=1_000,
        elastic=False,
        eviction=Compact(trigger=1_000, target=200),
    )
    engine = _engine(conversation, summarizer=StubSummarizer(5))
    capture = LiveCapture((_PARK,))
    sent: list[str] = []
    texts: dict[str, str] = {}
    for n, (ask, size) in enumerate(turns):
        call = ToolUse(f"c{n}", "read_file", {"path": f"f{n}.py"})
        question = Message("user", (Text(f"step {n} " + words(ask, f"u{n}_")),))
        capture.admit(engine, [question, Message("assistant", (call,))], [])
        sent.append(repr(engine.request()))
        seen = len(engine.events.history)
        capture.admit(engine, [Message("tool", (ToolResult(call.id, _output(n, size)),))], [])
        texts.update({e.id: e.text for e in engine.window.region("tool_output").entries})
        for event in engine.events.history[seen:]:
            if event.kind == "released" and event.region == "tool_output":
                for entry_id in event.entry_ids:
                    last_word = texts[entry_id].split()[-1]
                    assert any(last_word in request for request in sent), entry_id
        sent.append(repr(engine.request()))


def test_an_output_parked_in_the_step_a_room_flush_interrupts_stays() -> None:
    _drive_small_conversation([(22, 400)] * 30)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=60), st.integers(min_value=150, max_value=500)
        ),
        min_size=2,
        max_size=30,
    )
)
def test_no_parked_output_is_released_before_a_request_carried_it(
    turns: list[tuple[int, int]],
) -> None:
    _drive_small_conversation(turns)


def test_a_kept_observation_keeps_its_output_when_an_older_one_had_the_same_stub() -> None:
    """Two observations with one first line and one size have one stub: summarizing the older
    message never takes the output of the newer one, which the conversation still holds."""
    engine = _engine()
    for n in range(2):
        engine.add_user(f"question {n}")
        text, [op] = observe(_output(1, 400), (ParkRule("tool_output", 200, keep=2),), len)
        apply_op(engine, op)
        engine.add_message(Message("user", (Text(text),)))
        engine.request()
    newer = engine.window.region("tool_output").entries[-1]
    engine.compact(keep_messages=1)  # the older observation is summarized, the newer kept
    assert newer.meta[PARKED_STUB] in _held(engine)
    assert newer.id in [e.id for e in engine.window.region("tool_output").entries]


def _turn_with_id(engine: Engine, capture: LiveCapture, n: int, call_id: str) -> None:
    call = ToolUse(call_id, "read_file", {"path": f"src/f{n}.py"})
    capture.admit(
        engine,
        [
            Message("user", (Text(f"step {n}: read the file"),)),
            Message("assistant", (call,)),
            Message("tool", (ToolResult(call.id, _output(n, 400)),)),
            Message("assistant", (Text(f"read src/f{n}.py"),)),
        ],
        [],
    )
    engine.request()


@pytest.mark.parametrize(
    "ids",
    [["call_0", "call_0"], ["functions.Bash:0", "functions.Bash:1"]],
    ids=["reused", "mapped"],
)
def test_the_output_follows_its_call_id_as_the_engine_admitted_it(ids: list[str]) -> None:
    """A backend that numbers every call ``call_0`` (the engine renames the second
    ``call_0-1``) or ids a provider refuses (mapped): summarizing the older turn keeps the
    newer turn's output, and summarizing that turn too releases it."""
    engine, capture = _engine(), LiveCapture((ParkRule("tool_output", 200, keep=1),))
    for n, call_id in enumerate(ids, 1):
        _turn_with_id(engine, capture, n, call_id)
    [parked] = engine.window.region("tool_output").entries
    admitted = [
        b.tool_use_id
        for e in engine.window.region("conversation").entries
        for b in e.blocks
        if isinstance(b, ToolResult)
    ]
    assert admitted[1] != ids[1]  # renamed or mapped on admission
    engine.compact(keep_messages=4)  # the older turn
    assert _parked(engine) == [parked.text]
    engine.add_user("go on")
    engine.request()
    engine.compact(keep_messages=1)  # the newer turn
    assert _parked(engine) == []


def test_a_restore_of_a_cleared_result_brings_back_the_released_output() -> None:
    engine, capture = _clearing()
    for n in range(4):
        _turn(engine, capture, n, 400)
    engine.compact(keep_messages=8)  # the last two results cleared, their outputs released
    assert _parked(engine) == []
    text, ok = restore(engine.session, "c3")
    assert ok and text == _output(3, 400)


def test_a_relief_pass_under_pressure_releases_the_outputs_of_the_results_it_cleared() -> None:
    relief = ReliefPolicy(clear_at_least=0, keep_last=1, placeholder_extract_tokens=0, trim=False)
    conversation = SlidingWindow(
        name="conversation", budget=50_000, eviction=Compact(trigger=1_000, target=700)
    )
    engine = _engine(conversation, relief=relief)
    capture = LiveCapture((ParkRule("tool_output", 200, keep=3),))
    ever_parked: set[str] = set()
    for n in range(12):
        _turn(engine, capture, n, 400 if n % 2 else 150)
        cleared = {
            call
            for e in engine.window.region("conversation").entries
            for call in e.meta.get(CLEARED_META, ())
        }
        calls = {e.meta[PARKED_CALL] for e in engine.window.region("tool_output").entries}
        assert not cleared & calls
        ever_parked |= calls
    assert "relief_applied" in {e.kind for e in engine.events.history}
    assert cleared & ever_parked  # outputs were parked, then their results cleared


def _reused_id_turn(engine: Engine, capture: LiveCapture, step: int, results: int) -> None:
    """A turn whose ``results`` parallel calls all have the id ``call_0``, as every turn's."""
    calls = [ToolUse("call_0", "read_file", {"path": f"f{step}_{k}"}) for k in range(results)]
    outputs = [ToolResult("call_0", _output(10 * step + k, 400)) for k in range(results)]
    capture.admit(
        engine,
        [
            Message("user", (Text(f"step {step}"),)),
            Message("assistant", tuple(calls)),
            Message("tool", tuple(outputs)),
            Message("assistant", (Text("ok"),)),
        ],
        [],
    )
    engine.request()


def _verbatim_stubs_have_their_outputs(engine: Engine) -> None:
    """Every parked stub still verbatim in a conversation result has its output parked."""
    parked = {e.meta[PARKED_STUB] for e in engine.window.region("tool_output").entries}
    for entry in engine.window.region("conversation").entries:
        for b in entry.blocks:
            if isinstance(b, ToolResult) and "parked in region" in b.content:
                assert b.content in parked


def test_two_results_of_one_message_with_one_call_id_keep_each_its_own_output() -> None:
    engine, capture = _clearing(keep_last=1, trim=False)
    for step in range(3):
        _reused_id_turn(engine, capture, step, 2)
    engine.compact(keep_messages=4)  # the last turn stays; relief clears all but its newest
    _verbatim_stubs_have_their_outputs(engine)


def test_a_restore_after_reused_ids_brings_back_that_calls_own_output() -> None:
    engine, capture = _clearing(trim=False)
    for step in range(2):
        _reused_id_turn(engine, capture, step, 1)
    engine.compact(keep_messages=4)  # step 0 summarized, step 1 (call_0-1) cleared
    assert _parked(engine) == []
    text, ok = restore(engine.session, "call_0-1")
    assert ok and text == _output(10, 400)


def test_an_output_no_request_carried_stays_though_a_summarized_stub_matches_it() -> None:
    """Two observations with one stub; the second is parked in a step no request carried yet
    when a compaction summarizes the first: the second output stays."""
    engine, rule = _engine(), (ParkRule("tool_output", 200, keep=2),)
    text, [op] = observe(_output(1, 400), rule, len)
    apply_op(engine, op)
    engine.add_message(Message("user", (Text(text),)))
    engine.add_message(Message("assistant", (Text("ok"),)))
    engine.add_user("next")
    engine.request()
    _, [later] = observe(_output(1, 400), rule, len)
    apply_op(engine, later)  # parked; its message is not admitted yet
    newer = engine.window.region("tool_output").entries[-1].id
    engine.compact(keep_messages=1)
    assert newer in [e.id for e in engine.window.region("tool_output").entries]
