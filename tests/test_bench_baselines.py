"""The trim and summarize baselines."""

from __future__ import annotations

import pytest

from regio.bench.baselines import (
    SUMMARY_HEADING,
    SummarizeBaseline,
    TrimBaseline,
    plain_request,
    split_tokens,
    trim_available,
)
from regio.content import Message, ToolResult, ToolUse
from regio.runtime.extractive import ExtractiveSummarizer


def _count(text: str) -> int:
    return max(1, len(text) // 4)


def _conversation(turns: int) -> list[tuple[Message, int]]:
    out: list[tuple[Message, int]] = []
    for i in range(turns):
        out.append((Message.user(f"question {i} " * 20), 60))
        out.append((Message.assistant("", [ToolUse(f"c{i}", "look", {"q": i})]), 10))
        out.append((Message.tool([ToolResult(f"c{i}", f"answer {i} " * 20)]), 60))
        out.append((Message.assistant(f"reply {i} " * 10), 30))
    return out


@pytest.mark.skipif(not trim_available(), reason="langchain-core not installed")
def test_trim_keeps_a_suffix_that_starts_on_a_user_message() -> None:
    base = TrimBaseline(max_tokens=300, count=_count)
    history = _conversation(6)
    kept = base.view(("system", 2), history)
    assert 0 < len(kept) < len(history)
    assert kept == history[len(history) - len(kept) :]
    assert kept[0][0].role == "user"
    assert base.trimmed_turns == 1


@pytest.mark.skipif(not trim_available(), reason="langchain-core not installed")
def test_trim_keeps_everything_under_the_budget() -> None:
    history = _conversation(2)
    assert TrimBaseline(max_tokens=100_000, count=_count).view(("s", 1), history) == history


def test_summarize_replaces_the_whole_conversation_past_the_threshold() -> None:
    base = SummarizeBaseline(
        window_tokens=1000,
        count=_count,
        threshold=0.8,
        summarizer=ExtractiveSummarizer(max_summary_tokens=200),
    )
    history = _conversation(2)
    assert base.view(("s", 10), history) == history  # 320 + 10 tokens: under 800
    history = _conversation(6)
    view = base.view(("s", 10), history)
    assert len(view) == 1 and view[0][0].text.startswith(SUMMARY_HEADING)
    assert base.compactions == 1
    more = [*history, (Message.user("next"), 5)]
    assert base.view(("s", 10), more) == [view[0], more[-1]]


def test_split_tokens_keeps_the_sum() -> None:
    msg = Message.assistant("abc" * 30, [ToolUse("x", "t", {"a": 1})])
    assert sum(split_tokens(101, msg.blocks)) == 101


def test_a_plain_request_marks_the_system_and_the_last_message() -> None:
    req = plain_request(("sys", 3), _conversation(1), id="r", t_start=1.0)
    marked = [i for i, b in enumerate(req.blocks) if b.mark]
    assert marked == [0, len(req.blocks) - 1]
    assert req.prompt_tokens == 3 + 160
