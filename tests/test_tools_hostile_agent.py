"""The agent's mistakes come back to it as bounded text, never raised into the loop; every
deliberate lookup error of the regions is a RegioError (and still a KeyError / IndexError)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import driven_engine
from regio.agent import AgentLoop, ScriptedProvider, reply
from regio.engine import Engine
from regio.engine._tools import TOOL_NAMES
from regio.errors import EntryIndexError, NoSuchRegionError, RegioError, UnknownKeyError
from regio.session._options import EngineOptions
from regio.session._toolargs import ToolLimits

ECHO = 200

LOOP_BLUEPRINT = """
version: 1
name: hostile-loop
model: {provider: openai, name: gpt-4o, context_window: 8000, max_output_tokens: 500}
tokenizer: o200k_base
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: You are careful.}
  - {name: notes, kind: keyed, volatility: rewritten, budget: 500}
  - {name: conversation, kind: sliding_window, budget: 5000}
"""


def tool_messages(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in payload["messages"] if m["role"] == "tool"]


def _engine() -> Engine:
    return driven_engine(hook=None)


def _deep(levels: int) -> str:
    return '{"region": ' + "[" * levels + "]" * levels + "}"


BAD_CALLS: list[tuple[str, Any]] = [
    ("context_write", {"region": "facts", "text": "no key given"}),  # keyed region, no key
    ("context_write", {"region": 7, "text": "x"}),
    ("context_write", {"region": "nowhere", "text": "x"}),
    ("context_read", {"region": "facts", "key": "missing"}),
    ("context_delete", {"region": "facts", "key": "missing"}),
    ("context_delete", {"region": "facts", "index": 99}),
    ("todo_done", {"item_id": "no-such-item"}),
    ("todo_note", {"item_id": "no-such-item", "note": "n"}),
    ("context_write", _deep(5_000)),
    ("context_write", {"region": "facts", "text": "x", "key": {"a": [[[[[[[[]]]]]]]]}}),
    ("context_delete", {"region": "facts", "index": 10**5000}),
    ("context_delete", '{"region": "facts", "index": 1' + "0" * 5000 + "}"),
    ("context_write", "[1, 2]"),
    ("context_write", "{not json"),
    ("context_write", b"\xff\xfe"),
    ("context_write", 12),
    ("no_such_tool", {}),
    ("x" * 1_000_000, {}),
]


@pytest.mark.parametrize(("name", "arguments"), BAD_CALLS, ids=range(len(BAD_CALLS)))
def test_a_bad_context_tool_call_comes_back_as_text(name: str, arguments: Any) -> None:
    engine = _engine()
    outcome = engine.handle_tool_call(name, arguments)
    assert not outcome.ok
    assert isinstance(outcome.text, str) and outcome.text
    assert (
        len(outcome.text)
        < 8 * ECHO + 400 + len(engine.handle_tool_call("context_list", {}).text) + 400
    )


def test_a_keyed_write_without_a_key_says_to_pass_a_key() -> None:
    outcome = _engine().handle_tool_call("context_write", {"region": "facts", "text": "x"})
    assert not outcome.ok and "key" in outcome.text


HUGE = "A" * 1_000_000


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("context_write", {"region": HUGE, "text": "x"}),
        ("context_write", {"region": "facts", "text": "x", "key": 5, HUGE: 1}),
        ("context_read", {"region": "facts", "key": HUGE}),
        ("context_delete", {"region": "facts", "key": HUGE}),
        ("todo_done", {"item_id": HUGE}),
        ("todo_add", {"text": "x", "region": HUGE}),
        (HUGE, {}),
    ],
    ids=range(7),
)
def test_echoed_agent_input_is_bounded(name: str, arguments: Any) -> None:
    engine = _engine()
    listing = engine.handle_tool_call("context_list", {}).text
    outcome = engine.handle_tool_call(name, arguments)
    assert not outcome.ok
    assert len(outcome.text) - len(listing) < 3 * ECHO + 400
    assert "1000000 characters" in outcome.text  # says how long the value was


def test_an_echoed_container_is_bounded() -> None:
    engine = _engine()
    listing = engine.handle_tool_call("context_list", {}).text
    outcome = engine.handle_tool_call(
        "context_write", {"region": "facts", "text": "x", "key": [HUGE]}
    )
    assert not outcome.ok and len(outcome.text) - len(listing) < 3 * ECHO + 400


def test_the_echo_bound_is_configurable() -> None:
    engine = _engine()
    engine.options = EngineOptions(**{
        **{n: getattr(engine.options, n) for n in EngineOptions.names()},
        "tool_limits": ToolLimits(echo_chars=20),
    })  # fmt: skip
    outcome = engine.handle_tool_call("context_read", {"region": "B" * 5000})
    assert "B" * 21 not in outcome.text and "B" * 20 in outcome.text


def test_tool_limits_refuse_non_positive_bounds() -> None:
    with pytest.raises(ValueError, match="echo_chars"):
        ToolLimits(echo_chars=0)


def test_a_keyed_write_without_a_key_inside_the_loop_comes_back_and_the_loop_continues() -> None:
    engine = Engine.from_blueprint(LOOP_BLUEPRINT)
    provider = ScriptedProvider(
        [
            reply("", [("w1", "context_write", {"region": "notes", "text": "no key"})]),
            reply("done"),
        ]
    )
    result = AgentLoop(engine, provider, []).run("Remember it.")
    assert result.stop_reason == "final_answer"
    assert "key" in tool_messages(provider.calls[1])[0]["content"]


def test_an_unknown_tool_name_of_a_megabyte_is_echoed_bounded_by_the_loop() -> None:
    engine = Engine.from_blueprint(LOOP_BLUEPRINT)
    provider = ScriptedProvider([reply("", [("u1", "Z" * 5_000, {})]), reply("done")])
    AgentLoop(engine, provider, []).run("Go.")
    assert len(tool_messages(provider.calls[1])[0]["content"]) < 1_000


@pytest.mark.parametrize(
    ("call", "kinds"),
    [
        (lambda e: e.release("facts", key="missing"), (UnknownKeyError, KeyError)),
        (lambda e: e.release("facts", index=50), (EntryIndexError, IndexError)),
        (lambda e: e.release("nowhere", index=0), (NoSuchRegionError, KeyError)),
        (lambda e: e.write("nowhere", "x"), (NoSuchRegionError, KeyError)),
        (lambda e: e.window.todo_done("todo", "missing"), (UnknownKeyError, KeyError)),
    ],
    ids=["release-key", "release-index", "release-region", "write-region", "todo-item"],
)
def test_region_lookup_errors_are_regio_errors_and_builtin_ones(call: Any, kinds: Any) -> None:
    engine = _engine()
    with pytest.raises(RegioError) as info:
        call(engine)
    assert all(isinstance(info.value, k) for k in kinds)
    assert not str(info.value).startswith(("'", '"'))  # the message, not a quoted repr


def test_release_with_no_selector_is_a_regio_error() -> None:
    with pytest.raises(RegioError):
        _engine().release("facts")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_arg_names = st.sampled_from(["region", "text", "key", "index", "oldest", "item_id", "note"])
_regions = st.sampled_from(["system", "facts", "todo", "odd", "conversation", "nowhere", ""])
LIMITS = ToolLimits()  # what an engine whose options name none enforces


def _nested(levels: int, kinds: list[bool]) -> Any:
    """A value of ``levels`` nested lists / dicts (``kinds[i]``: a dict at level i)."""
    value: Any = "leaf"
    for k in range(levels):
        value = {"n": value} if kinds[k % len(kinds)] else [value]
    return value


#: values around the depth limit: the arguments object is level 1, so one of
#: ``max_depth - 1`` levels is the deepest accepted
_near_depth = st.builds(
    _nested,
    st.integers(LIMITS.max_depth - 4, LIMITS.max_depth + 6),
    st.lists(st.booleans(), min_size=1, max_size=4),
)
#: integers around the digit limit (either sign)
_near_digits = st.builds(
    lambda digits, sign: sign * int("9" * digits),
    st.integers(LIMITS.max_int_digits - 8, LIMITS.max_int_digits + 8),
    st.sampled_from([1, -1]),
)
_values = _json | _regions | _near_depth | _near_digits
_arguments = st.one_of(
    st.dictionaries(_arg_names | st.text(max_size=10), _values, max_size=5),
    st.builds(json.dumps, st.dictionaries(_arg_names, _values, max_size=5)),
    st.text(max_size=40),
    st.binary(max_size=20),
    _json,
)
_names = st.sampled_from(TOOL_NAMES) | st.text(max_size=20)


@settings(
    max_examples=int(__import__("os").environ.get("REGIO_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(calls=st.lists(st.tuples(_names, _arguments), min_size=1, max_size=6))
def test_fuzzed_context_tool_calls_never_raise_and_always_answer_text(
    calls: list[tuple[str, Any]],
) -> None:
    engine = _engine()
    for name, arguments in calls:
        outcome = engine.handle_tool_call(name, arguments)
        assert isinstance(outcome.text, str) and outcome.text
    engine.request()  # the window stays renderable after any sequence of calls


def _depth(value: Any) -> int:
    """Nesting of lists / dicts in ``value`` (a scalar: 0)."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


DEPTH_TEXT = f"the arguments nest deeper than {LIMITS.max_depth} levels"


@given(value=_near_depth, as_text=st.booleans())
def test_arguments_past_the_depth_limit_come_back_naming_the_limit(
    value: Any, as_text: bool
) -> None:
    arguments: Any = {"region": "facts", "text": "x", "key": value}
    outcome = _engine().handle_tool_call(
        "context_write", json.dumps(arguments) if as_text else arguments
    )
    assert not outcome.ok  # a nested key is never a valid one
    if 1 + _depth(value) > LIMITS.max_depth:
        assert DEPTH_TEXT in outcome.text
        assert "call context_write again with a JSON object" in outcome.text
    else:
        assert "nest deeper" not in outcome.text  # read, then refused for its type


@given(value=_near_digits, as_text=st.booleans())
def test_integers_past_the_digit_limit_come_back_naming_the_limit(
    value: int, as_text: bool
) -> None:
    digits = len(str(abs(value)))
    arguments = {"region": "facts", "index": value}
    outcome = _engine().handle_tool_call(
        "context_delete", json.dumps(arguments) if as_text else arguments
    )
    limit = LIMITS.max_int_digits
    assert not outcome.ok  # no such entry, or refused
    if as_text:  # counted exactly while the JSON is read
        refused = f"an integer of {digits} digits (the limit is {limit})"
        assert (refused in outcome.text) == (digits > limit)
    else:  # a parsed integer is sized from its bits: within 2 digits of the count
        refused = f"argument 'index' is an integer of more than {limit} digits"
        if digits <= limit:
            assert refused not in outcome.text
        elif digits > limit + 2:
            assert refused in outcome.text
    if refused in outcome.text:
        assert "call context_delete again with a JSON object" in outcome.text
