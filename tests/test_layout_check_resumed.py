"""The Anthropic payload check resumed from a session's progress
(:class:`regio.layout.wellformed.AnthropicProgress`, what the render prefix carries) finds the
problems a check of the whole list finds, for malformed lists too: unanswered calls, results
that answer nothing, repeated call ids, malformed ids, a result after other content, a result
in the first message, wherever they fall relative to the settled messages."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.layout.wellformed import AnthropicProgress, anthropic_problems

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
    progress = AnthropicProgress()
    floor = 0  # the contract: later lists share the messages an earlier call called settled
    for length, settled, extra in calls:
        length = max(length % (len(final) + 1), min(floor + 1, len(final)))
        settled = min(settled, max(length - 1, 0))
        messages = final[:length] + extra
        assert anthropic_problems(messages, progress, settled) == anthropic_problems(messages)
        floor = max(floor, settled)
