"""Summary validation by class (issue 13): empty, error text of a failed call, refusal or
apology, a request for more input, over ``max_summary_tokens``, not smaller than its input --
none is stored, the previous state stays, an event says why."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.errors import SummaryRejected
from regio.policies import Compact
from regio.regions import CompactHistory, Pinned, SlidingWindow
from regio.summarizers import check_summary
from regio.summarizers._validity import summary_defect
from runtime_stubs import StubSummarizer, make_engine, words

ERRORS = [
    "Error generating summary: upstream timed out",
    "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached'}}",
    "anthropic.APIStatusError: overloaded",
    'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nKeyError: 1',
    "HTTP 502 Bad Gateway",
    "502 Bad Gateway: nginx",
    "HTTP/1.1 503 Service Unavailable\ncontent-type: text/html",
    '{"error": {"type": "overloaded_error", "message": "Overloaded"}}',
    '{"type": "error", "error": {"type": "api_error"}}',
    "Failed to generate a summary because the request timed out.",
    "status code 500 from the summarizer endpoint",
    "at Object.run (/srv/app/index.js:12:5)\nat main (/srv/app/main.js:3:1)",
    "<!DOCTYPE html><html><body>Internal Server Error</body></html>",
    "TimeoutError",
    'Summarization failed:\nTraceback (most recent call last):\n  File "s.py", line 9\nOSError',
    "TypeError: fetch failed\n    at post (/srv/llm.js:40:11)",
]
REFUSALS = [
    "I'm sorry, but I can't summarize this conversation.",
    "I cannot help with that request.",
    "Unfortunately, I am not able to produce a summary.",
    "As an AI language model, I do not have access to the conversation.",
    "My apologies, the content is unavailable.",
    "I must decline to summarize this.",
]
REQUESTS = [
    "Please provide the conversation you would like me to summarize.",
    "Could you share the messages to summarize?",
    "I need more context to write a summary.",
    "There is no conversation to summarize.",
    "No content was provided.",
    "What would you like me to focus on in the summary?",
    "Which part do you want summarized?",
    "Kindly paste the transcript so I can summarize it.",
]
VALID = [
    "Goal: fix the login bug. Constraints: - never edit migrations/.",
    "Constraints:\n- You must not change the API.\nErrors:\n- E   AssertionError: 3 != 4",
    "The user asked for a fix; the error was a KeyError in src/app.py, now fixed.",
    "Progress: tests pass. Open items: - TODO update CHANGELOG.md",
    "Facts: ORD-4471 src/app/main.py 64",
    "user: Could the cache be stale? | src/cache.py\nassistant: checked it, it is fine.",
    "Decisions: we'll retry on HTTP 429 with backoff; the 502 Bad Gateway errors were transient.",
    "Errors:\n- Traceback (most recent call last):\n- ZeroDivisionError: division by zero",
    "tool: result(c1): Traceback (most recent call last):\n  last: KeyError: 1\nFacts: x.py",
    'Goal: fix x.py.\nIt raised:\n  File "x.py", line 1, in f\n  File "y.py", line 2\nNext: fix g.',
    'Goal: fix x.py.\n```\nTraceback (most recent call last):\n  File "x.py", line 1, in f\n```',
]


@pytest.mark.parametrize(
    ("text", "defect"),
    [
        ("", "empty"),
        ("  \n\t ", "empty"),
        *((t, "error") for t in ERRORS),
        *((t, "refusal") for t in REFUSALS),
        *((t, "request") for t in REQUESTS),
    ],
)
def test_a_defective_summary_is_classified(text: str, defect: str) -> None:
    assert summary_defect(text) == defect
    with pytest.raises(SummaryRejected) as info:
        check_summary(text, summary_tokens=5, replaced_tokens=1000)
    assert info.value.reason == defect


@pytest.mark.parametrize("text", VALID)
def test_a_summary_that_mentions_errors_or_questions_later_is_accepted(text: str) -> None:
    assert summary_defect(text) is None
    assert check_summary(text, summary_tokens=10, replaced_tokens=1000) == text


def test_a_summary_over_max_summary_tokens_is_rejected() -> None:
    with pytest.raises(SummaryRejected) as info:
        check_summary("Goal: x", summary_tokens=301, replaced_tokens=5000, max_summary_tokens=300)
    assert info.value.reason == "over_cap"


class ScriptedSummarizer(StubSummarizer):
    """Returns the scripted texts in turn (then valid stub summaries)."""

    def __init__(self, script: list[str], **kw: Any) -> None:
        super().__init__(**kw)
        self.script = list(script)

    def __call__(self, entries: Any, standing: str, extra: str | None) -> str:
        out = super().__call__(entries, standing, extra)
        return self.script.pop(0) if self.script else out


_DEFECTIVE = st.one_of(
    st.sampled_from(ERRORS + REFUSALS + REQUESTS + ["", "   "]),
    st.builds(lambda n: words(n, "long"), st.integers(min_value=60, max_value=200)),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(st.one_of(_DEFECTIVE, st.sampled_from(VALID)), min_size=1, max_size=8))
def test_no_invalid_summary_is_ever_stored(script: list[str]) -> None:
    summarizer = ScriptedSummarizer(script, size=8)
    summarizer.max_summary_tokens = 50
    engine = make_engine(
        [
            Pinned(name="system", budget=100, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=400, volatility="grows"),
            SlidingWindow(
                name="conversation", budget=1500, eviction=Compact(trigger="80%", target="30%")
            ),
        ],
        max_tokens=3000,
        summarizer=summarizer,
    )
    history = engine.window.region("history")
    rejected: list[Any] = []
    engine.subscribe(lambda e: rejected.append(e) if e.kind == "compaction_rejected" else None)
    engine.add_user("start")
    for i in range(40):
        engine.request()
        call = ToolUse(f"c{i}", "bash", {"cmd": "x"})
        engine.add_assistant("step", [call])
        engine.add_tool_result(call.id, words(90, f"r{i}x"))
    for entry in history.entries:
        assert summary_defect(entry.text) is None
        assert entry.tokens <= 50
    used = script[: len(summarizer.inputs)]  # the texts the summarizer really returned
    defective = [t for t in used if summary_defect(t) is not None or len(t.split()) > 50]
    if defective:
        assert rejected, "a defective summary was not reported"
        assert {e.reason for e in rejected} <= {
            "empty",
            "error",
            "refusal",
            "request",
            "over_cap",
            "oversized",
        }
