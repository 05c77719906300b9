"""The engine's index of renamed calls (``regio.session._callnames.CallNames``) holds only
calls still in the window: a backend that numbers every call ``call_0`` made the index grow
with the session (1,200 calls listed after 1,200 steps where 120-140 are listed now),
and every admission scanned all of it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, Text, ToolResult, ToolUse
from regio.policies import Compact
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words


def _engine():  # type: ignore[no-untyped-def]
    return make_engine(
        [
            Pinned(name="system", budget=200),
            CompactHistory(name="history", budget=2_000, source="conversation"),
            SlidingWindow(name="conversation", budget=1_500, eviction=Compact()),
        ],
        summarizer=StubSummarizer(1),
        max_tokens=4_000,
    )


@settings(max_examples=15, deadline=None)
@given(ids=st.lists(st.sampled_from(["call_0", "call_1", "toolu_a"]), min_size=20, max_size=80))
def test_every_call_the_index_lists_is_still_in_the_window(ids: list[str]) -> None:
    """Property: after each admission, the calls listed under the id it used all have a
    group in the window (an id is pruned when admission reads it), and each result went to
    the call made for it."""
    engine = _engine()
    for n, sent in enumerate(ids):
        engine.add_message(Message("user", (Text(f"step {n}"),)))
        engine.add_message(Message("assistant", (ToolUse(sent, "read", {"n": n}),)))
        engine.add_message(Message("tool", (ToolResult(sent, f"result {n} " + words(400)),)))
        names = engine.state.call_names
        if names is not None:  # the id just named was pruned as it was read
            made = names.by_sent.get(sent, [])
            assert all(engine.window.call_group(c) is not None for c in made)
        newest = engine.window.region("conversation").entries[-1]
        (result,) = [b for b in newest.blocks if isinstance(b, ToolResult)]
        call = engine.window.tool_call(result.tool_use_id)
        assert call is not None and call.input == {"n": n}
        engine.request()
