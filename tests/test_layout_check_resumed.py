"""The payload checks resumed from a session's progress
(:class:`regio.layout.wellformed.CheckProgress`, what the render prefix carries) find the
problems a check of the whole list finds, for malformed lists too: unanswered calls, results
that answer nothing, repeated call ids, malformed ids, a result after other content, a result
in the first message (Anthropic, Chat Completions), an output of the wrong type (Responses),
wherever they fall relative to the settled messages."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.layout.wellformed import (
    CallsProgress,
    ChatProgress,
    anthropic_problems,
    openai_chat_problems,
    openai_responses_problems,
)

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "150"))

_ID = st.sampled_from(["toolu_1", "toolu_2", "toolu_3", "bad id!"])
_PART = st.one_of(
    st.just({"type": "text", "text": "t"}),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "read", "input": {}}, _ID),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, _ID),
)
_MESSAGE = st.builds(
    lambda role, parts: {"role": role, "content": parts},
    st.sampled_from(["user", "assistant"]),
    st.lists(_PART, min_size=1, max_size=3),
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    final=st.lists(_MESSAGE, min_size=1, max_size=12),
    calls=st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 12), st.lists(_MESSAGE, max_size=3)),
        min_size=1,
        max_size=6,
    ),
)
def test_property_a_check_resumed_from_its_progress_finds_what_a_whole_check_finds(
    final: list[dict[str, Any]], calls: list[tuple[int, int, list[dict[str, Any]]]]
) -> None:
    """Each call checks the messages a later payload keeps (a prefix of ``final``) and messages
    it does not (``extra``), with ``settled`` messages (and the one after them) shared with
    every later call: the answer is the whole check's, whatever the earlier calls saw."""
    progress = CallsProgress()
    floor = 0  # the contract: later lists share the messages an earlier call called settled
    for length, settled, extra in calls:
        length = max(length % (len(final) + 1), min(floor + 1, len(final)))
        settled = min(settled, max(length - 1, 0))
        messages = final[:length] + extra
        assert anthropic_problems(messages, progress, settled) == anthropic_problems(messages)
        floor = max(floor, settled)


_CHAT_ID = st.sampled_from(["call_1", "call_2", "call_3", "", "c" * 41])
_CHAT_MESSAGE = st.one_of(
    st.builds(lambda role: {"role": role, "content": "t"}, st.sampled_from(["system", "user"])),
    st.builds(
        lambda ids: {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for i in ids
            ],
        },
        st.lists(_CHAT_ID, max_size=3),
    ),
    st.builds(lambda i: {"role": "tool", "tool_call_id": i, "content": "r"}, _CHAT_ID),
)
_KINDS = ["function_call", "custom_tool_call", "local_shell_call"]
_OUTPUTS = ["function_call_output", "custom_tool_call_output", "local_shell_call_output"]
_ITEM = st.one_of(
    st.just({"role": "user", "content": "t"}),
    st.builds(
        lambda kind, i: {"type": kind, "call_id": i, "name": "f"}, st.sampled_from(_KINDS), _ID
    ),
    st.builds(
        lambda kind, i: {"type": kind, ("id" if kind == _OUTPUTS[2] else "call_id"): i},
        st.sampled_from(_OUTPUTS),
        _ID,
    ),
)


@pytest.mark.parametrize(
    ("check", "progress", "message"),
    [
        (openai_chat_problems, ChatProgress, _CHAT_MESSAGE),
        (openai_responses_problems, CallsProgress, _ITEM),
    ],
    ids=["openai_chat", "openai_responses"],
)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_property_an_openai_check_resumed_from_its_progress_finds_what_a_whole_check_finds(
    check: Any, progress: Any, message: Any, data: st.DataObject
) -> None:
    """As above for the Chat Completions and Responses checks, which read nothing after the
    message they check: ``settled`` may be every message later lists share."""
    final = data.draw(st.lists(message, min_size=1, max_size=12))
    calls = data.draw(
        st.lists(
            st.tuples(st.integers(0, 12), st.integers(0, 12), st.lists(message, max_size=3)),
            min_size=1,
            max_size=6,
        )
    )
    state = progress()
    floor = 0
    for length, settled, extra in calls:
        length = max(length % (len(final) + 1), min(floor, len(final)))
        settled = min(settled, length)
        messages = final[:length] + extra
        assert check(messages, state, settled) == check(messages)
        floor = max(floor, settled)
