"""SDK objects in and out: responses, tool dicts and usage of the real anthropic/openai types."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.content import Text, ToolUse
from regio.layout import ToolSpec
from regio.regions import SlidingWindow
from regio.sdk._objects import SDKInputError, response_message, tool_specs, usage_of
from runtime_stubs import make_engine
from sdk_responses_support import ANTHROPIC_MESSAGE, CHAT_COMPLETION, RESPONSES_RESPONSE

anthropic_types = pytest.importorskip("anthropic.types")
chat_types = pytest.importorskip("openai.types.chat")
responses_types = pytest.importorskip("openai.types.responses")

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def anthropic_message() -> object:
    return anthropic_types.Message.model_validate(copy.deepcopy(ANTHROPIC_MESSAGE))


def chat_completion() -> object:
    return chat_types.ChatCompletion.model_validate(copy.deepcopy(CHAT_COMPLETION))


def responses_response() -> object:
    return responses_types.Response.model_validate(copy.deepcopy(RESPONSES_RESPONSE))


RESPONSES = [anthropic_message, chat_completion, responses_response]


def engine():
    return make_engine([SlidingWindow(name="conversation", budget=50_000)])


@pytest.mark.parametrize("make", RESPONSES)
@pytest.mark.parametrize("as_dict", [False, True])
def test_add_response_reads_sdk_objects_and_their_dicts(make, as_dict):
    response = make()
    if as_dict:
        response = response.model_dump()
    eng = engine()
    eng.add_user("read a.py")
    entry = eng.add_response(response)
    texts = [b.text for b in entry.blocks if isinstance(b, Text)]
    calls = [b for b in entry.blocks if isinstance(b, ToolUse)]
    assert entry.role == "assistant"
    assert texts == ["Reading it."]
    assert [(c.name, c.input) for c in calls] == [("read", {"path": "a.py"})]
    eng.add_tool_result(calls[0].id, "print(1)")  # the call id is the one a result answers
    assert eng.window.call_groups[calls[0].id]


@pytest.mark.parametrize("make", RESPONSES)
def test_add_response_with_observe_records_the_usage(make):
    eng = engine()
    eng.add_user("read a.py")
    eng.request()
    eng.add_response(make(), observe=True)
    record = eng.ledger.last
    assert record is not None
    expected = (10 + 90, 90) if make is anthropic_message else (100, 64)
    assert (record.prompt_tokens, record.cache_read_tokens) == expected


@pytest.mark.parametrize("make", RESPONSES)
def test_observe_takes_each_sdk_usage_object(make):
    response = make()
    eng = engine()
    eng.add_user("hi")
    eng.request()
    from_object = eng.observe(response.usage)
    from_dict = eng.observe(response.usage.model_dump())
    from_response = eng.observe(response)
    assert from_object.prompt_tokens == from_dict.prompt_tokens == from_response.prompt_tokens
    assert from_object.prompt_tokens > 0


@pytest.mark.parametrize("bad", [42, "text", object(), [1, 2]])
def test_add_response_refuses_other_types_naming_type_and_accepted(bad):
    with pytest.raises(SDKInputError) as info:
        engine().add_response(bad)
    assert type(bad).__name__ in str(info.value)
    assert "ChatCompletion" in str(info.value) and "anthropic.types.Message" in str(info.value)


def test_add_response_refuses_a_dict_that_is_no_response():
    with pytest.raises(SDKInputError, match="not a provider response"):
        engine().add_response({"hello": "world"})


@pytest.mark.parametrize("bad", [3.5, {"foo": 1}])
def test_observe_refuses_what_is_no_usage(bad):
    eng = engine()
    with pytest.raises(SDKInputError, match="observe"):
        eng.observe(bad)


TOOL_SHAPES = [
    {"name": "read", "description": "Read a file", "input_schema": SCHEMA},
    {
        "type": "function",
        "function": {"name": "read", "description": "Read a file", "parameters": SCHEMA},
    },
    {"type": "function", "name": "read", "description": "Read a file", "parameters": SCHEMA},
    ToolSpec("read", "Read a file", SCHEMA),
]


@pytest.mark.parametrize("tool", TOOL_SHAPES)
def test_request_takes_each_sdk_tool_dict(tool):
    eng = engine()
    eng.add_user("read a.py")
    _, payload = eng.request(tools=[tool])
    mine = [t for t in payload["tools"] if t["name"] == "read"]
    assert len(mine) == 1
    assert mine[0]["input_schema"] == SCHEMA


def test_all_tool_shapes_lay_out_the_same_bytes():
    payloads = []
    for tool in TOOL_SHAPES:
        eng = engine()
        eng.add_user("read a.py")
        payloads.append(eng.request(tools=[tool])[1])
    assert all(p == payloads[0] for p in payloads)


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "web_search_20250305", "max_uses": 3},
        {"name": "x", "input_schema": {"type": "string"}},
        {"name": "x", "parameters": "not a schema"},
        7,
    ],
)
def test_unreadable_tool_is_refused_naming_its_index(bad):
    with pytest.raises(SDKInputError, match=r"tools\[1\]"):
        tool_specs([TOOL_SHAPES[0], bad])


def test_tools_must_be_a_list():
    with pytest.raises(SDKInputError, match="wrap one in a list"):
        tool_specs(TOOL_SHAPES[0])


@given(
    name=st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True),
    description=st.text(max_size=40),
    props=st.dictionaries(
        st.from_regex(r"[a-z]{1,8}", fullmatch=True),
        st.sampled_from([{"type": "string"}, {"type": "integer"}]),
        max_size=4,
    ),
)
def test_every_tool_shape_reads_to_the_same_spec(name, description, props):
    schema = {"type": "object", "properties": props}
    shapes = [
        {"name": name, "description": description, "input_schema": schema},
        {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        },
        {"type": "function", "name": name, "description": description, "parameters": schema},
    ]
    specs = [tool_specs([shape])[0] for shape in shapes]
    assert specs == [ToolSpec(name, description, schema)] * 3


def test_usage_of_none_and_empty_is_no_usage():
    assert usage_of(None) is None
    assert usage_of({}) == {}


def test_response_message_returns_the_usage_of_the_response():
    message, usage = response_message(anthropic_message())
    assert usage["cache_read_input_tokens"] == 90
    assert message.role == "assistant"


def test_responses_reasoning_summary_becomes_thinking():
    data = responses_response().model_dump()
    data["output"].insert(
        0,
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}]},
    )
    message, _ = response_message(data)
    assert message.blocks[0].__class__.__name__ == "Thinking"
