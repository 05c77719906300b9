"""Salient placeholders: a cleared tool result's placeholder also carries a bounded,
deterministic extract of the result's salient items (error lines, paths, ids, numbers), so
its facts stay in the context; the extract depends only on the result, so the placeholder is
byte-identical on every later request."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief._extract import MAX_ERROR_CHARS, salient_extract
from regio.content import ToolResult, ToolUse
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy, placeholder
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _words(text: str) -> int:
    return len(text.split())


def _chars(text: str) -> int:
    return (len(text) + 3) // 4


_ident = st.one_of(
    st.from_regex(r"src/[a-z]{1,8}/[a-z_]{1,8}\.py", fullmatch=True),
    st.from_regex(r"[a-z]{2,6}_[0-9a-f]{6,8}", fullmatch=True),
    st.from_regex(r"[A-Z]{3}-[0-9]{3,5}", fullmatch=True),
    st.integers(min_value=100, max_value=999999).map(str),
    st.sampled_from(["the", "and", "ok", "value", "returns", "line"]),
)
_line = st.one_of(
    st.lists(_ident, min_size=1, max_size=8).map(" ".join),
    st.from_regex(r"(ValueError|KeyError|error|FAILED): [a-z ]{0,200}", fullmatch=True),
)
_output = st.lists(_line, max_size=30).map("\n".join)


@given(_output, st.integers(min_value=0, max_value=120), st.sampled_from([_words, _chars]))
def test_an_extract_is_deterministic_bounded_and_taken_from_the_result(
    text: str, budget: int, count: Any
) -> None:
    out = salient_extract(text, budget, count)
    assert out == salient_extract(text, budget, count)
    assert count(out) <= budget
    for item in filter(None, out.split("; ")):
        kept = item[:-1] if item.endswith("\u2026") else item
        assert kept in text and len(item) <= MAX_ERROR_CHARS


@given(_output)
def test_a_zero_budget_keeps_the_placeholder_naming_the_call_only(text: str) -> None:
    assert salient_extract(text, 0, _words) == ""
    bare = placeholder("toolu_1", "bash", restorable=False)
    assert placeholder("toolu_1", "bash", restorable=False, extract="") == bare


def test_error_lines_come_first_then_identifiers_with_the_last_lines_first() -> None:
    text = "\n".join(
        [
            "collected 12 items in src/app/main.py",
            "tests/test_app.py::test_parse FAILED",
            "ValueError: bad header in ORD-4471",
            "wrote build/report_7.xml after 1534 ms",
        ]
    )
    out = salient_extract(text, 200, _words).split("; ")
    assert out == [
        "tests/test_app.py::test_parse FAILED",
        "ValueError: bad header in ORD-4471",
        "build/report_7.xml",  # paths and ids, the last line's first
        "src/app/main.py",
        "1534",  # then numbers of 3+ digits ("12" is not kept)
    ]


def test_an_item_too_long_for_the_budget_gives_way_to_shorter_ones() -> None:
    text = "ERROR: " + " ".join(["word"] * 60) + "\nsee ORD-4471"
    assert salient_extract(text, 5, _words) == "ORD-4471"


def _engine(extract_tokens: int) -> Any:
    policy = ReliefPolicy(
        clear_at_least=10, trim_at_least=10, keep_last=1, placeholder_extract_tokens=extract_tokens
    )
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=4000,
                eviction=Compact(compact_count=500, trigger=600, target=350),
            ),
        ],
        max_tokens=6000,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=policy,
    )


def _result(i: int, n: int) -> str:
    """A tool output of about ``n`` words with an error line, paths, ids and numbers."""
    filler = " ".join(f"w{i}x{k}" for k in range(n))
    return f"{filler}\nsrc/mod_{i}/core.py line {1000 + i}\nKeyError: key_{i:06x} missing"


def _cleared(payload: dict[str, Any]) -> dict[str, str]:
    out = {}
    for m in payload["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else ():
            if b.get("type") == "tool_result":
                content = b["content"]
                if isinstance(content, list):
                    content = "".join(x.get("text", "") for x in content)
                if "cleared to save context" in content:
                    out[b["tool_use_id"]] = content
    return out


@FAST
@given(
    st.lists(st.integers(min_value=60, max_value=160), min_size=20, max_size=40),
    st.integers(min_value=8, max_value=64),
)
def test_a_salient_placeholder_is_byte_identical_on_every_later_request(
    lengths: list[int], extract_tokens: int
) -> None:
    engine = _engine(extract_tokens)
    engine.add_user("fix the bug")
    originals: dict[str, str] = {}
    first: dict[str, str] = {}
    for i, n in enumerate(lengths):
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        originals[call.id] = _result(i, n)
        engine.add_tool_result(call.id, originals[call.id])
        _, payload = engine.request()
        for call_id, content in _cleared(payload).items():
            assert first.setdefault(call_id, content) == content
    assert first
    count = engine.window.counter.count
    for call_id, content in first.items():
        extract = salient_extract(originals[call_id], extract_tokens, count)
        assert extract and count(extract) <= extract_tokens
        assert content == placeholder(call_id, "bash", restorable=True, extract=extract)
        outcome = engine.handle_tool_call("context_restore", {"call_id": call_id})
        assert outcome.ok and outcome.text == originals[call_id]


@FAST
@given(st.lists(st.integers(min_value=60, max_value=160), min_size=20, max_size=30))
def test_every_tool_use_keeps_its_result_with_salient_placeholders(lengths: list[int]) -> None:
    engine = _engine(48)
    engine.add_user("fix the bug")
    for i, n in enumerate(lengths):
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        engine.add_tool_result(call.id, _result(i, n))
        engine.request()
    conv = engine.window.region("conversation")
    uses = [b.id for e in conv.entries for b in e.blocks if isinstance(b, ToolUse)]
    results = [b.tool_use_id for e in conv.entries for b in e.blocks if isinstance(b, ToolResult)]
    assert uses == results


def test_a_negative_extract_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="placeholder_extract_tokens"):
        ReliefPolicy(placeholder_extract_tokens=-1)


def test_a_stack_trace_is_extracted_as_its_exception_line_and_innermost_frame() -> None:
    trace = (
        "$ python x.py\nTraceback (most recent call last):\n"
        '  File "src/app/cli.py", line 40, in main\n    run(args)\n'
        '  File "src/app/core.py", line 12, in run\n    total = 1 / count\n'
        "ZeroDivisionError: division by zero\nexit status 1"
    )
    extract = salient_extract(trace, 200, _words)
    # the line a summary keeps of the trace (so a summarizer reading the placeholder keeps
    # it too), never the header, which says nothing
    assert "ZeroDivisionError: division by zero (at src/app/core.py:12, in run)" in extract
    assert "Traceback (most recent call last)" not in extract
    assert "src/app/cli.py" in extract  # the outer frame's path is still an identifier
