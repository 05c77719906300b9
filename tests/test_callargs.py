"""One reader of OpenAI function-call arguments (regio.callargs), used by every reader in regio:
any JSON object round-trips; anything else gets the invalid-arguments form and never raises."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.callargs import (
    INVALID_ARGUMENTS_KEY,
    MAX_ARGUMENT_DEPTH,
    function_arguments,
)

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
JSON_OBJECTS = st.dictionaries(st.text(), JSON_VALUES, max_size=6)


@given(JSON_OBJECTS)
def test_any_json_object_round_trips(obj):
    assert function_arguments(json.dumps(obj)) == obj
    assert function_arguments(json.dumps(obj).encode()) == obj
    assert function_arguments(obj) == obj


@given(st.text())
def test_any_text_gives_an_object_and_never_raises(text):
    out = function_arguments(text)
    assert isinstance(out, dict)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        assert out == parsed
    elif text.strip():
        assert out == {INVALID_ARGUMENTS_KEY: text}


@given(JSON_VALUES.filter(lambda v: not isinstance(v, dict)))
def test_json_that_is_not_an_object_keeps_the_text_under_the_invalid_key(value):
    text = json.dumps(value)
    assert function_arguments(text) == {INVALID_ARGUMENTS_KEY: text}


@given(st.integers(min_value=MAX_ARGUMENT_DEPTH + 1, max_value=MAX_ARGUMENT_DEPTH + 3000))
def test_over_deep_json_keeps_the_text_under_the_invalid_key(depth):
    text = '{"a": ' * depth + "1" + "}" * depth
    assert function_arguments(text) == {INVALID_ARGUMENTS_KEY: text}


def test_json_at_the_depth_limit_is_read():
    depth = MAX_ARGUMENT_DEPTH
    text = '{"a": ' * depth + "1" + "}" * depth
    assert function_arguments(text)["a"] is not None


@pytest.mark.parametrize("raw", [None, "", "   ", "\n"])
def test_missing_or_blank_arguments_are_an_empty_object(raw):
    assert function_arguments(raw) == {}


@pytest.mark.parametrize("raw", [42, 1.5, ["a"], object])
def test_a_value_of_another_type_is_kept_as_text(raw):
    assert function_arguments(raw) == {INVALID_ARGUMENTS_KEY: str(raw)}


# ----------------------------------------------------------- every reader uses the one rule


def _wire(raw: Any) -> dict[str, Any]:
    from regio.providers.wire import openai_chat_completion

    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": raw}}
    data = {"choices": [{"message": {"role": "assistant", "tool_calls": [call]}}]}
    return openai_chat_completion(data).message.tool_calls[0].input


def _responses(raw: Any) -> dict[str, Any]:
    from regio.providers.wire import responses_message

    item = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": raw}
    return responses_message({"output": [item]}).tool_calls[0].input


def _message_of(raw: Any) -> dict[str, Any]:
    from regio.sdk._objects import message_of

    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": raw}}
    return message_of({"role": "assistant", "tool_calls": [call]}).tool_calls[0].input


def _adapter(raw: Any) -> dict[str, Any]:
    from regio.adapters.chat import chat_messages

    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": raw}}
    return chat_messages([{"role": "assistant", "tool_calls": [call]}])[0].tool_calls[0].input


def _chatfile(raw: Any) -> dict[str, Any]:
    from regio.tokens.chatfile import parse_transcript

    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": raw}}
    items = parse_transcript([{"role": "assistant", "content": "", "tool_calls": [call]}])
    return items[0].message.tool_calls[0].input


READERS = [_wire, _responses, _message_of, _adapter, _chatfile]
DEEP = "[" * (MAX_ARGUMENT_DEPTH + 5) + "]" * (MAX_ARGUMENT_DEPTH + 5)


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.strip("_"))
@pytest.mark.parametrize(
    "raw", ["{not json", "[1, 2]", '"text"', "7", DEEP, '{"deep": ' + DEEP + "}"]
)
def test_every_reader_keeps_unreadable_arguments_under_the_one_key(reader, raw):
    assert reader(raw) == {INVALID_ARGUMENTS_KEY: raw}


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.strip("_"))
def test_every_reader_reads_a_json_object_and_blank_arguments(reader):
    assert reader('{"path": "a.py", "n": [1, {"k": null}]}') == {
        "path": "a.py",
        "n": [1, {"k": None}],
    }
    assert reader("") == {}
    assert reader(None) == {}


def test_the_agent_loop_and_the_providers_share_the_key():
    from regio.agent.providers import INVALID_ARGUMENTS_KEY as providers_key

    assert providers_key == INVALID_ARGUMENTS_KEY == "_invalid_arguments"
