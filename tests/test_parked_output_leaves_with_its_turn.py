"""A parked tool output leaves with the turn that parked it (regio.compaction._parked): once a
compaction has summarized every message holding the output's stub, the output leaves its
region in the same flush (a ``released`` event names it, the transcript keeps it); while a
message still holds the stub, the output stays."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.capture import LiveCapture
from regio.capture.rules import ParkRule
from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.policies import Compact
from regio.regions import PARKED_STUB, CompactHistory, Pinned, SlidingWindow, Temporary
from runtime_stubs import StubSummarizer, make_engine, words

_PARK = ParkRule("tool_output", min_tokens=200, keep=1)


def _engine() -> Engine:
    return make_engine(
        [
            Pinned(name="system", budget=200),
            CompactHistory(name="history", budget=2_000, source="conversation"),
            SlidingWindow(name="conversation", budget=50_000, eviction=Compact()),
            Temporary(name="tool_output", budget=20_000),
        ],
        summarizer=StubSummarizer(1),
    )


def _turn(engine: Engine, capture: LiveCapture, n: int, size: int) -> None:
    """A user message, a call, its result of ``size`` words (parked from 200), a reply."""
    call = ToolUse(f"c{n}", "read_file", {"path": f"src/f{n}.py"})
    output = f"contents of src/f{n}.py\n" + words(size, f"t{n}_")
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
