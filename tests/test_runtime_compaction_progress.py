"""Compaction always makes progress or falls back (review findings H1, H2, L7): the extractive
summarizer shrinks its input, merges shrink the history, a failed conversation summary falls
back to bulk eviction, and summarizer bugs surface unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolUse
from regio.engine import Engine
from regio.errors import CompactionNoProgressError
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import HeuristicCounter

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"
MAX_ITEMS, COMPACT_COUNT = 120, 20
# The example leaves compaction to the token budget (max_items 1000 is a backstop); these tests
# exercise the item-count trigger, so they lower it to 120.
BLUEPRINT = EXAMPLE.read_text(encoding="utf-8").replace(
    "    max_items: 1000\n", f"    max_items: {MAX_ITEMS}\n"
)
assert f"max_items: {MAX_ITEMS}\n" in BLUEPRINT
FALLBACK_POINT = MAX_ITEMS + 2 * COMPACT_COUNT


def tool_turn(engine: Engine, t: int) -> None:
    engine.add_assistant(
        f"Run step {t}.", [ToolUse(f"c{t}", "bash", {"cmd": f"pytest tests/test_{t}.py -x"})]
    )
    engine.add_tool_result(f"c{t}", f"1 passed in 0.{t}s")


class Echo:
    """A summarizer whose output is never smaller than its input."""

    max_summary_tokens = 1_500

    def __call__(self, entries: Sequence[Entry], standing: str, extra: str | None) -> str:
        return " ".join(["x"] * (sum(e.tokens for e in entries) + 50))


class Buggy:
    """A summarizer with a programming error."""

    max_summary_tokens = 1_500

    def __call__(self, entries: Sequence[Entry], standing: str, extra: str | None) -> str:
        return {"a": 1}["missing"]  # type: ignore[return-value]


def test_the_readme_tool_loop_runs_300_turns_and_the_conversation_stays_bounded() -> None:
    engine = Engine.from_blueprint(BLUEPRINT, summarizer=ExtractiveSummarizer())
    engine.add_user("Fix tests/test_api.py::test_login")
    for t in range(300):
        tool_turn(engine, t)
        engine.request(provider="anthropic", model="claude-sonnet-4-5")
        assert len(engine.window.region("conversation").entries) <= FALLBACK_POINT
    assert engine.events.of_kind("compaction_completed")
    assert not engine.events.of_kind("compaction_no_progress")


def test_a_failing_conversation_summary_falls_back_to_bulk_eviction_inside_request() -> None:
    engine = Engine.from_blueprint(BLUEPRINT, summarizer=Echo())
    engine.add_user("Fix tests/test_api.py::test_login")
    for t in range(300):
        tool_turn(engine, t)
        engine.request(provider="anthropic", model="claude-sonnet-4-5")  # never raises
        assert len(engine.window.region("conversation").entries) <= FALLBACK_POINT
    assert engine.events.of_kind("compaction_no_progress")
    assert engine.events.of_kind("compaction_fallback")
    conversation = engine.window.region("conversation")
    assert conversation.entries[0].role == "user"  # the newest user message is protected


def test_an_explicit_flush_raises_and_names_the_item_count_trigger_that_fired() -> None:
    engine = Engine.from_blueprint(BLUEPRINT, summarizer=Echo())
    engine.add_user("Fix tests/test_api.py::test_login")
    for t in range(71):
        tool_turn(engine, t)
    with pytest.raises(CompactionNoProgressError) as info:
        engine.flush()
    assert info.value.trigger == MAX_ITEMS + COMPACT_COUNT
    assert info.value.size == len(engine.window.region("conversation").entries)
    assert f"trigger of {MAX_ITEMS + COMPACT_COUNT} items" in str(info.value)


def test_a_summarizer_bug_propagates_unchanged_and_counts_no_strike() -> None:
    engine = Engine.from_blueprint(BLUEPRINT, summarizer=Buggy())
    engine.add_user("Fix tests/test_api.py::test_login")
    for t in range(71):
        tool_turn(engine, t)
    with pytest.raises(KeyError):
        engine.request(provider="anthropic", model="claude-sonnet-4-5")
    assert engine.book.strikes.get("conversation", 0) == 0
    assert not engine.events.of_kind("compaction_rejected")


_line = st.text(alphabet="abcdefghij klmnop/._-0123456789ORD", min_size=1, max_size=120)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_line, min_size=1, max_size=12), min_size=1, max_size=25))
def test_extractive_output_is_smaller_than_its_input_for_short_and_long_entries(
    texts: list[list[str]],
) -> None:
    counter = HeuristicCounter()
    entries = [
        Entry(id=f"e{i}", blocks=(Text("\n".join(lines)),), role="tool")
        for i, lines in enumerate(texts)
    ]
    entries = [Entry(e.id, e.blocks, role=e.role, tokens=counter.count_entry(e)) for e in entries]
    replaced = sum(e.tokens for e in entries)
    summarizer = ExtractiveSummarizer(counter=counter)
    summary = summarizer(entries, "", None)
    assert summary == summarizer(entries, "", None)
    if replaced >= 8:
        assert summary.strip()
        assert counter.count(summary) <= replaced // 2 < replaced


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(300, 1_500), min_size=2, max_size=8),
    st.integers(0, 10_000),
)
def test_a_compact_history_merge_always_makes_progress(sizes: list[int], seed: int) -> None:
    engine = Engine.from_blueprint(BLUEPRINT, summarizer=ExtractiveSummarizer())
    history = engine.window.region("conversation_history")
    for n, size in enumerate(sizes):
        words = " ".join(f"src/m{seed}_{n}_{k}.py line {k}" for k in range(size // 8))
        entry = engine.window.make_entry(
            words, tokens=engine.budget.count_text(words), meta={"summary": True}
        )
        engine.window.write(history, entry)
    before = history.used_tokens
    merges = [p for p in engine.pending() if p.operation == "merge"]
    engine.flush()
    assert not engine.events.of_kind("compaction_no_progress")
    if merges:
        assert engine.events.of_kind("compaction_completed")
        assert history.used_tokens < before
