"""A streamed tool call's arguments are read by :func:`regio.callargs.function_arguments`:
``finish()`` never raises whatever the model streamed (deeply nested JSON included); a call
whose arguments are not a readable JSON object is discarded with a ``stream_call_discarded``
event, every other call is kept with its arguments."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.callargs import MAX_ARGUMENT_DEPTH
from regio.content import Message, ToolUse
from regio.engine._streaming import AssistantStream
from regio.session._events import StreamCallDiscarded


def _stream() -> tuple[AssistantStream, list[Message], list[Any]]:
    added: list[Message] = []
    events: list[Any] = []

    def add(message: Message) -> Any:
        added.append(message)
        return message

    return AssistantStream(add, events.append), added, events  # type: ignore[arg-type]


def _finished(raw: str) -> tuple[list[ToolUse], list[Any]]:
    stream, added, events = _stream()
    stream.text("Running it.")
    stream.tool_call_start("c1", "run")
    stream.tool_call_delta("c1", raw)
    stream.tool_call_end("c1")
    stream.finish()
    calls = [b for m in added for b in m.blocks if isinstance(b, ToolUse)]
    return calls, [e for e in events if isinstance(e, StreamCallDiscarded)]


def test_deeply_nested_streamed_arguments_are_discarded_not_raised() -> None:
    calls, discarded = _finished("[" * 100_000 + "]" * 100_000)
    assert calls == [] and len(discarded) == 1
    calls, discarded = _finished('{"a":' * 100_000 + "1" + "}" * 100_000)
    assert calls == [] and len(discarded) == 1


def test_arguments_nested_past_the_argument_depth_are_discarded() -> None:
    deep = '{"a":' * (MAX_ARGUMENT_DEPTH + 1) + "1" + "}" * (MAX_ARGUMENT_DEPTH + 1)
    calls, discarded = _finished(deep)
    assert calls == [] and len(discarded) == 1


def test_a_streamed_call_with_an_object_or_no_arguments_is_kept() -> None:
    calls, discarded = _finished('{"cmd": "make"}')
    assert [c.input for c in calls] == [{"cmd": "make"}] and discarded == []
    calls, discarded = _finished("")
    assert [c.input for c in calls] == [{}] and discarded == []


@settings(max_examples=150, deadline=None)
@given(
    raw=st.one_of(
        st.text(max_size=60),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=5),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
            max_leaves=20,
        ).map(json.dumps),
        st.integers(1, 3_000).map(lambda n: "[" * n + "]" * n),
    )
)
def test_property_finish_keeps_a_call_exactly_when_its_arguments_are_a_json_object(
    raw: str,
) -> None:
    calls, discarded = _finished(raw)  # never raises
    try:
        value: Any = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        assert [c.input for c in calls] == [value] and discarded == []
    else:
        assert calls == [] and len(discarded) == 1
