"""Counting up to a limit: exact at or under the limit, over it after the first chunk that
passes it, so admission never counts a 100 MiB tool result in full (it was counted whole, 74 s,
then refused; now a few chunks, then trimmed to the window or refused)."""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.regions import Refusal
from regio.tokens import HeuristicCounter, TiktokenCounter, count_entry_up_to, get_counter

CODING = "examples/blueprints/coding-agent.yaml"

#: About 26 million o200k tokens (103 MiB): prose, so every chunk cut is a safe one.
HUGE = ("The quick brown fox jumps over 13 lazy dogs; " * 20 + "\n") * 120_000


@attrs.define(eq=False)
class MeteredCounter(TiktokenCounter):
    """An o200k counter that records how many characters it hands to tiktoken."""

    encoded: int = attrs.field(default=0, init=False)

    def _encode_chunk(self, chunk: str) -> list[int]:
        self.encoded += len(chunk)
        return super()._encode_chunk(chunk)


texts = st.text(st.sampled_from(list("ab cd,.\n'\u4e2d\u00e9")) | st.characters(), max_size=400)


@settings(max_examples=150, deadline=None)
@given(text=texts, limit=st.integers(0, 200), chunk=st.integers(16, 64))
def test_property_a_count_up_to_a_limit_is_exact_under_it_and_over_it_past_it(
    text: str, limit: int, chunk: int
) -> None:
    for counter in (
        TiktokenCounter("o200k_base", max_chunk_chars=chunk),
        HeuristicCounter(),
    ):
        exact = counter.count(text)
        counter.cache.clear()
        capped = counter.count_up_to(text, limit)
        if exact <= limit:
            assert capped == exact
        else:
            assert capped > limit


def test_counting_up_to_a_limit_stops_after_the_chunk_that_passes_it() -> None:
    counter = MeteredCounter("o200k_base")
    assert counter.count_up_to(HUGE, 100_000) > 100_000
    assert counter.encoded <= 600_000  # 6 chunks of 100,000 characters, of 108 million


def test_a_count_under_the_limit_is_cached_and_equals_the_plain_count() -> None:
    counter = MeteredCounter("o200k_base")
    text = HUGE[:250_000]
    exact = get_counter("o200k_base").count(text)
    assert counter.count_up_to(text, 10**9) == exact
    assert counter.count(text) == exact
    assert counter.encoded == len(text)  # the second count was a cache hit


def test_an_entry_is_counted_up_to_a_limit_block_by_block() -> None:
    counter = MeteredCounter("o200k_base")
    entry = Entry(
        "e1",
        (Text("small"), ToolResult("c1", HUGE), ToolResult("c2", HUGE)),
        role="tool",
    )
    assert count_entry_up_to(counter, entry, 1_000) > 1_000
    assert counter.encoded <= 100_005
    small = Entry("e2", (Text("a few words"), ToolUse("c1", "read", {"p": 1})), role="assistant")
    assert count_entry_up_to(counter, small, 10**6) == counter.count_entry(small)


def test_a_counter_that_cannot_stop_early_counts_the_whole_entry() -> None:
    class Plain:
        name = "plain"

        def count_entry(self, entry: Entry) -> int:
            return 42

    assert count_entry_up_to(Plain(), Entry("e", (Text("x"),)), 1) == 42  # type: ignore[arg-type]


def test_a_huge_tool_result_is_trimmed_to_the_window_after_counting_a_few_chunks() -> None:
    # the turn's result is trimmed to what the window holds (regio.engine._turnfit), never
    # refused; it is counted up to the conversation's reach, not in full
    counter = MeteredCounter("o200k_base", chat_format="anthropic")
    engine = Engine.from_blueprint(CODING, token_counter=counter)
    engine.add_user("go")
    engine.add_assistant("", [ToolUse("c1", "bash", {"cmd": "cat big.log"})])
    counter.encoded = 0
    entry = engine.add_tool_result("c1", HUGE)
    # a few times the 184,000-token window (about 0.75 million characters), not the whole
    # 108 million
    assert counter.encoded <= 4_000_000, counter.encoded
    text = entry.blocks[0].content
    assert entry.tokens <= engine.window.max_tokens and len(text) < len(HUGE) // 100
    assert HUGE.startswith(text[:1000]) and HUGE.endswith(text[-1000:])
    assert engine.book.relief.originals.get("c1") is not None  # context_restore brings it back
    assert len(engine.window.conversation.entries) == 3
    engine.request()


def test_a_huge_write_to_a_region_is_refused_after_counting_a_few_chunks() -> None:
    counter = MeteredCounter("o200k_base", chat_format="anthropic")
    engine = Engine.from_blueprint(CODING, token_counter=counter)
    counter.encoded = 0
    result = engine.write("scratch", HUGE)
    assert isinstance(result, Refusal) and result.reason == "too_large"
    assert counter.encoded <= 1_000_000, counter.encoded
