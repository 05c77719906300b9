"""regio trace JSONL: lossless round trip, strict reading, and the Trace views."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, Text, Thinking, ToolResult, ToolUse
from regio.traces import (
    AssistantMessage,
    Compaction,
    Header,
    RegionAppend,
    RegionRelease,
    RegionWrite,
    SystemPrompt,
    ToolResults,
    Trace,
    TraceFormatError,
    Usage,
    UserMessage,
    dumps_trace,
    loads_trace,
    read_trace,
    write_trace,
)

# -- strategies ------------------------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
inputs = st.dictionaries(texts, json_values, max_size=4)
usages = (
    st.none()
    | st.builds(
        Usage,
        st.integers(0, 10**6),
        st.integers(0, 10**6),
        st.integers(0, 10**6),
        st.integers(0, 10**5),
    )
    | st.builds(Usage.anthropic, *[st.integers(0, 10**6)] * 4)
    | st.builds(Usage.openai, *[st.integers(0, 10**6)] * 3)
)
opt_texts = st.none() | texts


def _event(kind: str, t: float, draw: st.DrawFn):  # type: ignore[no-untyped-def]
    if kind == "system":
        return SystemPrompt(t, draw(texts))
    if kind == "user":
        return UserMessage(
            t, tuple(Text(x) for x in draw(st.lists(texts, max_size=2))), draw(st.booleans())
        )
    if kind == "assistant":
        blocks = draw(
            st.lists(
                st.builds(Text, texts)
                | st.builds(Thinking, texts, texts)
                | st.builds(ToolUse, names, names, inputs),
                max_size=4,
            )
        )
        return AssistantMessage(t, tuple(blocks), draw(usages))
    if kind == "tool_results":
        results = draw(st.lists(st.builds(ToolResult, names, texts, st.booleans()), max_size=3))
        return ToolResults(t, tuple(results))
    if kind == "region_write":
        return RegionWrite(t, draw(names), draw(texts), draw(opt_texts))
    if kind == "region_append":
        return RegionAppend(t, draw(names), draw(texts), draw(opt_texts))
    if kind == "region_release":
        return RegionRelease(t, draw(names), draw(opt_texts), draw(st.none() | st.integers(0, 100)))
    return Compaction(t, draw(opt_texts))


KINDS = [
    "system",
    "user",
    "assistant",
    "tool_results",
    "region_write",
    "region_append",
    "region_release",
    "compact",
]


@st.composite
def traces(draw: st.DrawFn) -> Trace:
    header = Header(
        id=draw(names),
        source_format=draw(st.sampled_from(["swe-agent", "tau-bench", "openai", "regio"])),
        source_file=draw(texts),
        record=draw(st.none() | st.integers(0, 1000)),
        agent=draw(opt_texts),
        model=draw(opt_texts),
        license=draw(texts),
        timing=draw(texts),
        tools=tuple(draw(st.lists(inputs, max_size=2))),
        meta=draw(inputs),
    )
    t = 0.0
    events = []
    for kind in draw(st.lists(st.sampled_from(KINDS), max_size=12)):
        t += draw(st.floats(0, 1000, allow_nan=False))
        events.append(_event(kind, t, draw))
    return Trace(header, tuple(events))


# -- round trip ----------------------------------------------------------------------------------


@settings(max_examples=75, deadline=None)
@given(trace=traces())
def test_a_written_trace_reads_back_equal(
    trace: Trace, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("rt") / "trace.jsonl"
    write_trace(trace, path)
    again = read_trace(path)
    assert again == trace
    assert dumps_trace(again) == dumps_trace(trace)


@settings(max_examples=50, deadline=None)
@given(traces())
def test_every_line_of_a_written_trace_is_one_json_object_with_a_type(trace: Trace) -> None:
    lines = dumps_trace(trace).split("\n")[:-1]
    assert len(lines) == 1 + len(trace.events)
    decoded = [json.loads(line) for line in lines]
    assert decoded[0]["type"] == "header"
    assert [d["type"] for d in decoded[1:]] == [str(e.__struct_config__.tag) for e in trace.events]


@settings(max_examples=50, deadline=None)
@given(traces())
def test_messages_are_the_message_events_in_order(trace: Trace) -> None:
    messages = trace.messages()
    message_events = [
        e for e in trace.events if isinstance(e, (UserMessage, AssistantMessage, ToolResults))
    ]
    assert len(messages) == len(message_events)
    steps = trace.steps()
    assert len(steps) == sum(isinstance(e, AssistantMessage) for e in trace.events)
    for step in steps:
        assert step.response.role == "assistant"
        assert list(step.messages) == messages[: len(step.messages)]
        assert messages[len(step.messages)] == step.response


# -- strict reading --------------------------------------------------------------------------


def _header_line() -> str:
    return json.dumps({"type": "header", "id": "x", "source_format": "regio"})


def test_reading_a_trace_without_a_header_names_the_line() -> None:
    text = json.dumps({"type": "system", "t": 0.0, "text": "hi"}) + "\n"
    with pytest.raises(
        TraceFormatError, match=r"f\.jsonl: line 1: the first line must be a header"
    ):
        loads_trace(text, "f.jsonl")


def test_reading_an_unknown_event_type_names_the_line() -> None:
    text = _header_line() + "\n" + json.dumps({"type": "bogus", "t": 0}) + "\n"
    with pytest.raises(TraceFormatError, match="line 2"):
        loads_trace(text, "f.jsonl")


def test_reading_a_broken_json_line_names_the_line() -> None:
    text = _header_line() + "\n\n{not json\n"
    with pytest.raises(TraceFormatError, match="line 3"):
        loads_trace(text, "f.jsonl")


def test_time_going_backwards_is_refused_with_the_numbers() -> None:
    lines = [
        _header_line(),
        json.dumps({"type": "system", "t": 5.0, "text": "a"}),
        json.dumps({"type": "system", "t": 4.0, "text": "b"}),
    ]
    with pytest.raises(TraceFormatError, match=r"line 3: t=4\.0 .* not before 5\.0"):
        loads_trace("\n".join(lines), "f.jsonl")


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    with pytest.raises(TraceFormatError, match="empty"):
        read_trace(path)


def test_a_user_block_of_the_wrong_type_is_refused() -> None:
    bad = {"type": "user", "t": 0.0, "blocks": [{"type": "tool_use", "id": "a", "name": "n"}]}
    with pytest.raises(TraceFormatError, match="line 2"):
        loads_trace(_header_line() + "\n" + json.dumps(bad), "f.jsonl")


# -- views ---------------------------------------------------------------------------------------


def _trace(*events: object) -> Trace:
    return Trace(Header("t", "regio"), tuple(events))  # type: ignore[arg-type]


def test_steps_carry_the_request_time_and_the_system_prompt_in_effect() -> None:
    trace = _trace(
        SystemPrompt(0.0, "S1"),
        UserMessage(0.0, (Text("hi"),)),
        AssistantMessage(1.5, (ToolUse("c1", "ls", {}),)),
        ToolResults(3.5, (ToolResult("c1", "a b"),)),
        SystemPrompt(3.5, "S2"),
        AssistantMessage(5.0, (Text("done"),), Usage(100, 80, 0, 5)),
    )
    first, second = trace.steps()
    assert (first.t, first.system, len(first.messages)) == (0.0, "S1", 1)
    assert (second.t, second.system, len(second.messages)) == (3.5, "S2", 3)
    assert second.usage == Usage(100, 80, 0, 5)
    assert trace.system_prompt == "S2"
    assert trace.duration == 5.0
    assert trace.messages()[2] == Message.tool([ToolResult("c1", "a b")])


def test_a_replaced_system_prompt_or_a_compaction_makes_a_trace_not_append_only() -> None:
    base = [SystemPrompt(0.0, "S"), UserMessage(0.0, (Text("hi"),))]
    assert _trace(*base).is_append_only()
    assert _trace(*base, SystemPrompt(1.0, "S")).is_append_only()
    assert not _trace(*base, SystemPrompt(1.0, "S2")).is_append_only()
    assert not _trace(*base, Compaction(1.0, "keep paths")).is_append_only()
    assert not _trace(*base, RegionRelease(1.0, "notes", count=1)).is_append_only()
    keyed = [RegionWrite(1.0, "facts", "a", "k"), RegionWrite(2.0, "facts", "b", "k")]
    assert not _trace(*base, *keyed).is_append_only()
    assert _trace(*base, RegionAppend(1.0, "log", "x")).is_append_only()


def test_problems_report_orphan_results_reused_ids_and_unanswered_calls() -> None:
    trace = _trace(
        UserMessage(0.0, (Text("hi"),)),
        ToolResults(0.5, (ToolResult("ghost", "x"),)),
        AssistantMessage(1.0, (ToolUse("c1", "ls", {}),)),
        AssistantMessage(2.0, (ToolUse("c1", "ls", {}),)),
    )
    problems = trace.problems()
    assert any("'ghost' has no earlier tool_use" in p for p in problems)
    assert any("'c1' is used twice" in p for p in problems)
    assert any("were not answered" in p for p in problems)
    clean = _trace(UserMessage(0.0, (Text("hi"),)), AssistantMessage(1.0, (Text("ok"),)))
    assert clean.problems() == []


def test_counts_are_by_event_type() -> None:
    trace = _trace(
        SystemPrompt(0.0, "S"), UserMessage(0.0, (Text("a"),)), UserMessage(0.0, (Text("b"),))
    )
    assert trace.counts() == {"system": 1, "user": 2}
    assert math.isclose(trace.duration, 0.0)
