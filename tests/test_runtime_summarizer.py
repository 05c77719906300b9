"""Summarizers: the commit gate, the extractive summarizer, the LLM prompt and chunking."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolResult, ToolUse
from regio.errors import SummarizerError, SummaryRejected
from regio.summarizers._extractive import ExtractiveSummarizer, extract_identifiers
from regio.summarizers._hierarchy import asummarize_entries, chunk_entries, summarize_entries
from regio.summarizers._llm import LLMSummarizer
from regio.summarizers._protocol import FunctionSummarizer, check_summary, is_refusal
from regio.tokens import HeuristicCounter


class WordCounter(HeuristicCounter):
    """One token per whitespace-separated word (a deterministic stub)."""

    def _tokenize(self, text: str) -> int:
        return len(text.split())


def _entry(i: int, words: int, role: str | None = "user") -> Entry:
    text = " ".join(f"w{i}_{k}" for k in range(words))
    return Entry(id=f"e{i}", blocks=(Text(text),), role=role, tokens=words)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["", "   \n\t", None])
def test_an_empty_summary_is_rejected(text: object) -> None:
    with pytest.raises(SummaryRejected) as info:
        check_summary(text, summary_tokens=0, replaced_tokens=100)
    assert info.value.reason == "empty"


@pytest.mark.parametrize(
    "text",
    [
        "I can't help with that.",
        "I'm sorry, but I cannot do this",
        "Sorry, I am unable to summarize",
        "As an AI, I won't",
    ],
)
def test_a_refusal_like_summary_is_rejected(text: str) -> None:
    with pytest.raises(SummaryRejected) as info:
        check_summary(text, summary_tokens=5, replaced_tokens=100)
    assert info.value.reason == "refusal"


def test_a_summary_not_smaller_than_what_it_replaces_is_rejected() -> None:
    with pytest.raises(SummaryRejected) as info:
        check_summary("Goal: x", summary_tokens=100, replaced_tokens=100)
    assert info.value.reason == "oversized"


def test_a_summary_quoting_a_refusal_later_is_accepted() -> None:
    text = "Goal: fix login. The user said: I'm sorry, but the test fails."
    assert not is_refusal(text)
    assert check_summary(text, summary_tokens=10, replaced_tokens=100) == text


def test_extractive_keeps_first_last_lines_and_identifiers_verbatim() -> None:
    filler = "\n".join("plain filler words without any identifier here" for _ in range(20))
    body = (
        "Opening line\nthe order ORD-4471 ships to db-07.internal\n"
        f"see src/app/main.py at 64\n{filler}\nClosing line"
    )
    entry = Entry(id="u1", blocks=(Text(body),), role="user", tokens=200)
    summary = ExtractiveSummarizer()([entry], "", None)
    for fact in (
        "Opening line",
        "Closing line",
        "ORD-4471",
        "db-07.internal",
        "src/app/main.py",
        "64",
    ):
        assert fact in summary


def test_extractive_carries_a_previous_summary_forward_verbatim() -> None:
    previous = Entry(
        id="s",
        blocks=(Text("Goal: ship Bluefin\nDeadline 2025-03-14"),),
        tokens=10,
        meta={"summary": True},
    )
    summary = ExtractiveSummarizer()([previous, _entry(1, 200)], "", None)
    assert summary.startswith("Goal: ship Bluefin\nDeadline 2025-03-14")


def test_extractive_shows_tool_calls_and_results() -> None:
    call = Entry(
        id="a1",
        blocks=(ToolUse("c1", "read_file", {"path": "a.py"}), Text("reading " * 40)),
        role="assistant",
    )
    result = Entry(id="t1", blocks=(ToolResult("c1", "line one\n" * 30 + "line two"),), role="tool")
    summary = ExtractiveSummarizer()([call, result], "", None)
    assert 'call read_file(c1) {"path":"a.py"}' in summary
    assert "result(c1): line one" in summary


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=30), st.integers(20, 400))
def test_extractive_output_is_deterministic_and_bounded(texts: list[str], cap: int) -> None:
    counter = HeuristicCounter()
    entries = [Entry(id=f"e{i}", blocks=(Text(t),), role="user") for i, t in enumerate(texts)]
    summarizer = ExtractiveSummarizer(max_summary_tokens=cap, counter=counter)
    first = summarizer(entries, "", None)
    assert first == summarizer(entries, "", None)
    assert counter.count(first) <= cap


def test_extract_identifiers_keeps_first_seen_order_without_duplicates() -> None:
    assert extract_identifiers("TCK-9902 then a.py then TCK-9902 and 12,500") == [
        "TCK-9902",
        "a.py",
        "12,500",
    ]


def test_llm_summarizer_sends_standing_and_extra_instructions_and_the_transcript() -> None:
    seen: list[list[dict[str, str]]] = []

    def complete(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        return "Goal: x"

    summarizer = LLMSummarizer(complete, context_window=8_000, max_summary_tokens=300)
    assert summarizer([_entry(1, 3)], "STANDING RULES", "focus on tests") == "Goal: x"
    system, user = seen[0]
    assert "STANDING RULES" in system["content"] and "focus on tests" in system["content"]
    assert "w1_0 w1_1 w1_2" in user["content"]


def test_llm_summarizer_supports_async_adapters() -> None:
    async def complete(messages: list[dict[str, str]]) -> str:
        return "Progress: done"

    summarizer = LLMSummarizer(complete)
    reply = summarizer([_entry(1, 3)], "rules", None)
    assert asyncio.run(reply) == "Progress: done"  # type: ignore[arg-type]


def test_llm_summarizer_refuses_a_non_text_reply() -> None:
    summarizer = LLMSummarizer(lambda messages: {"text": "x"})  # type: ignore[arg-type, return-value]
    with pytest.raises(SummarizerError, match="expected str"):
        summarizer([_entry(1, 3)], "rules", None)


class Recorder:
    """Stub summarizer: records inputs, refuses requests over its own window, returns N words."""

    def __init__(self, window: int, reserve: int, size: int) -> None:
        self.context_window = window
        self.reserve_tokens = reserve
        self.max_summary_tokens = size
        self.calls: list[int] = []

    def __call__(self, entries: Sequence[Entry], standing: str, extra: str | None) -> str:
        total = sum(e.tokens for e in entries)
        if total + self.reserve_tokens > self.context_window:
            raise RuntimeError("summarizer overflow")
        self.calls.append(total)
        return " ".join(["s"] * self.max_summary_tokens)


def test_input_that_fits_is_summarized_in_one_call() -> None:
    stub = Recorder(window=128_000, reserve=4_000, size=100)
    entries = [_entry(i, 1_000) for i in range(40)]
    outcome = summarize_entries(stub, entries, "", None, WordCounter())
    assert len(stub.calls) == 1 and outcome.tokens == 100


def test_oversized_input_is_chunked_and_merged_into_one_summary() -> None:
    stub = Recorder(window=16_000, reserve=2_000, size=500)
    entries = [_entry(0, 30_000), *[_entry(i, 1_000) for i in range(1, 11)]]
    outcome = summarize_entries(stub, entries, "", None, WordCounter())
    assert len(stub.calls) >= 3
    assert max(stub.calls) <= 14_000
    assert outcome.calls[-1].level > 0 and outcome.tokens == 500


def test_async_twin_gives_the_same_outcome() -> None:
    entries = [_entry(i, 3_000) for i in range(10)]
    a = summarize_entries(Recorder(16_000, 2_000, 200), entries, "", None, WordCounter())

    class AsyncRecorder(Recorder):
        async def __call__(self, entries, standing, extra):  # type: ignore[override]
            return super().__call__(entries, standing, extra)

    b = asyncio.run(
        asummarize_entries(AsyncRecorder(16_000, 2_000, 200), entries, "", None, WordCounter())
    )
    assert a == b


def test_a_sync_call_with_an_async_summarizer_says_to_use_the_async_twin() -> None:
    async def fn(entries, standing, extra):  # type: ignore[no-untyped-def]
        return "x"

    with pytest.raises(SummarizerError, match="aflush"):
        summarize_entries(FunctionSummarizer(fn), [_entry(1, 5)], "", None, WordCounter())


def test_a_summarizer_that_does_not_shrink_raises_instead_of_looping() -> None:
    def same(entries: Sequence[Entry], standing: str, extra: str | None) -> str:
        return " ".join(e.text for e in entries)

    stub = FunctionSummarizer(same, context_window=2_000, max_summary_tokens=100)
    with pytest.raises(SummarizerError, match="no progress"):
        summarize_entries(stub, [_entry(i, 500) for i in range(10)], "", None, WordCounter())


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 3_000), min_size=1, max_size=25), st.integers(50, 2_000))
def test_chunks_keep_order_and_fit_the_budget(sizes: list[int], budget: int) -> None:
    counter = WordCounter()
    entries = [_entry(i, n) for i, n in enumerate(sizes)]
    chunks = chunk_entries(entries, budget, counter)
    assert all(sum(e.tokens for e in c) <= budget for c in chunks)
    flat = [e for c in chunks for e in c]
    originals = [e.meta.get("part_of", e.id) for e in flat]
    assert list(dict.fromkeys(originals)) == [e.id for e in entries]
    for entry in entries:
        parts = [e for e in flat if e.meta.get("part_of", e.id) == entry.id]
        assert "".join(p.text for p in parts) == entry.text
