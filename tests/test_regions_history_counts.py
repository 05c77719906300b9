"""The O(1) history-window check of sliding_window writes agrees with the full unit analysis."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message
from regio.policies import HistoryCaps, HistoryCounts, analyze
from regio.regions import SlidingWindow, Window
from regions_support import generated_history


def _entries(messages: list[Message]) -> list[Entry]:
    return [
        Entry(id=f"e{i}", blocks=m.blocks, role=m.role, tokens=1) for i, m in enumerate(messages)
    ]


caps_values = st.one_of(st.none(), st.integers(min_value=0, max_value=4))


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=10_000),
    turns=st.integers(min_value=0, max_value=6),
    skip=st.integers(min_value=0, max_value=3),
    max_turns=caps_values,
    max_tool_calls=caps_values,
)
def test_history_counts_keep_all_exactly_when_the_history_cut_is_zero(
    seed: int, turns: int, skip: int, max_turns: int | None, max_tool_calls: int | None
) -> None:
    # ``skip`` drops leading messages: histories that start mid-turn or on a tool result
    entries = _entries(generated_history(random.Random(seed), turns)[skip:])
    for n in range(len(entries) + 1):
        prefix = entries[:n]
        counts = HistoryCounts()
        for e in prefix:
            counts = counts.extend(e)
        expected = analyze(prefix).history_cut(HistoryCaps(None, None, max_turns, max_tool_calls))
        assert counts.keeps_all(max_turns, max_tool_calls) == (expected == (0, True))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=10_000),
    turns=st.integers(min_value=1, max_value=6),
    max_turns=caps_values,
    max_tool_calls=caps_values,
)
def test_a_history_window_evicts_the_same_entries_as_a_full_trim(
    seed: int, turns: int, max_turns: int | None, max_tool_calls: int | None
) -> None:
    window = Window(
        regions=[
            SlidingWindow(
                name="conv", budget=10**6, max_turns=max_turns, max_tool_calls=max_tool_calls
            )
        ],
        max_tokens=2 * 10**6,
    )
    conv = window.region("conv")
    for m in generated_history(random.Random(seed), turns):
        window.add_message(m, tokens=1)
        # after every write the history window already holds: a full trim removes nothing
        assert conv.trim(max_turns=max_turns, max_tool_calls=max_tool_calls) == []


def test_history_counts_follow_appends_and_recount_after_a_rewrite() -> None:
    window = Window(
        regions=[SlidingWindow(name="conv", budget=10**6, max_turns=1)], max_tokens=2 * 10**6
    )
    conv = window.region("conv")
    for m in generated_history(random.Random(7), 4):
        window.add_message(m, tokens=1)
    fresh = HistoryCounts()
    for e in conv.entries:
        fresh = fresh.extend(e)
    assert conv.history_counts() == fresh
    conv.release(oldest=1)
    fresh = HistoryCounts()
    for e in conv.entries:
        fresh = fresh.extend(e)
    assert conv.history_counts() == fresh
