"""A stack trace in the summarized turns (a tool result, an environment observation) does not
stop compaction: the commit gate tells a failed summarizer call's text (the reply *is* a
traceback) from a summary that quotes one, and the extractive summary keeps a trace as its
exception line and innermost frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.engine import Engine
from regio.errors import CompactionNoProgressError
from regio.regions.compaction import ITEMS_META
from regio.summarizers._validity import summary_defect
from regio.summarizers.tracebacks import condense
from runtime_stubs import StubSummarizer

BLUEPRINT = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"
HEADER = "Traceback (most recent call last):"
PY_TRACE = (
    'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
    "ZeroDivisionError: division by zero"
)
LONG_TRACE = (
    'Traceback (most recent call last):\n  File "src/app/cli.py", line 40, in main\n'
    '    run(args)\n  File "src/app/core.py", line 12, in run\n    total = 1 / count\n'
    "            ~~^~~~~~~\nZeroDivisionError: division by zero"
)
JS_TRACE = (
    "TypeError: x is not a function\n    at run (src/app.js:12:5)\n    at main (src/main.js:3:1)"
)


def _engine(summarizer: Any = None) -> Engine:
    return Engine.from_blueprint(BLUEPRINT.read_text(), summarizer=summarizer)


def _crash_session(engine: Engine, result: str) -> None:
    """The defect's repro: a tool result holding ``result``, two more turns."""
    engine.add_user("Fix the crash.")
    call = ToolUse("c1", "bash", {"cmd": "python x.py"})
    engine.add_assistant("Running it.", [call])
    engine.add_tool_result("c1", result)
    engine.add_assistant("I see.")
    engine.add_user("go on")


def _summaries(engine: Engine) -> list[str]:
    return [
        entry.text
        for region in engine.window.regions
        for entry in getattr(region, "entries", ())
        if entry.meta.get("summary")
    ]


def _items(engine: Engine) -> str:
    """The text of the durable item sections (where a compaction keeps its error lines)."""
    return "\n".join(
        entry.text
        for region in engine.window.regions
        for entry in getattr(region, "entries", ())
        if ITEMS_META in entry.meta
    )


def test_a_traceback_in_a_tool_result_does_not_stop_extractive_compaction() -> None:
    engine = _engine()
    _crash_session(engine, PY_TRACE)
    result = engine.compact(keep_messages=1)
    assert result is not None and not result.rejected
    (summary,) = _summaries(engine)
    assert summary_defect(summary) is None
    kept = f"{summary}\n{_items(engine)}"
    assert "ZeroDivisionError: division by zero (at x.py:1, in <module>)" in kept
    assert HEADER not in kept


#: What an LLM summarizer may write: the conversation's traceback quoted among its summary.
LLM_QUOTE = (
    "The user asked to fix a crash in src/app/core.py. Running the CLI raised:\n"
    f"{LONG_TRACE}\n"
    "The agent traced it to `count` being 0 when the input file is empty.\n"
    "Next: guard the division in run() and add a test for an empty input."
)


def test_an_llm_summary_quoting_a_traceback_is_stored() -> None:
    summarizer = StubSummarizer(text=LLM_QUOTE)
    summarizer.max_summary_tokens = 400
    engine = _engine(summarizer)
    filler = "\n".join(f"tests/test_core.py::test_case_{i} PASSED" for i in range(40))
    _crash_session(engine, f"{filler}\n{LONG_TRACE}")
    result = engine.compact(keep_messages=1)
    assert result is not None and not result.rejected
    assert _summaries(engine) == [LLM_QUOTE]


@pytest.mark.parametrize(
    "reply",
    [
        PY_TRACE,
        LONG_TRACE,
        f"Summarization failed:\n{LONG_TRACE}",
        f"{LONG_TRACE}\n",
        JS_TRACE,
        "Error: the summarizer crashed",
        "Error: 'NoneType' object is not subscriptable\n" + LONG_TRACE,
        f"Summary unavailable.\n{PY_TRACE}",
    ],
)
def test_a_failed_summarizer_reply_is_still_refused(reply: str) -> None:
    assert summary_defect(reply) == "error"
    summarizer = StubSummarizer(text=reply)
    summarizer.max_summary_tokens = 400
    engine = _engine(summarizer)
    filler = "\n".join(f"tests/test_core.py::test_case_{i} PASSED" for i in range(40))
    _crash_session(engine, filler)
    with pytest.raises(CompactionNoProgressError):
        engine.compact(keep_messages=1)
    assert _summaries(engine) == []


def test_a_trace_condenses_to_its_exception_line_and_innermost_frame() -> None:
    py = condense(LONG_TRACE.splitlines(), 400)
    assert py == [("ZeroDivisionError: division by zero (at src/app/core.py:12, in run)", True)]
    js = condense(["before", *JS_TRACE.splitlines(), "after"], 400)
    assert js == [
        ("before", False),
        ("TypeError: x is not a function (at src/app.js:12:5, in run)", True),
        ("after", False),
    ]
    assert condense(LONG_TRACE.splitlines(), 20) == [("ZeroDivisionError: division by zero", True)]


_NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,11}", fullmatch=True)
_FILE = st.builds(lambda d, n: f"{d}/{n}.py", _NAME, _NAME)
_MESSAGE = st.text(st.characters(codec="ascii", categories=("L", "N", "P", "Zs")), max_size=60).map(
    lambda s: " ".join(s.split())
)
_EXCEPTION = st.builds(
    lambda kind, msg: f"{kind}: {msg}" if msg else kind,
    st.sampled_from(["ZeroDivisionError", "KeyError", "ValueError", "app.errors.Failure"]),
    _MESSAGE,
)


@st.composite
def _python_trace(draw: st.DrawFn) -> str:
    lines = [HEADER]
    for _ in range(draw(st.integers(1, 4))):
        lines.append(f'  File "{draw(_FILE)}", line {draw(st.integers(1, 9999))}, in {draw(_NAME)}')
        if draw(st.booleans()):
            lines.append(f"    {draw(_NAME)}({draw(_NAME)})")
            if draw(st.booleans()):
                lines.append("    ~~~~^^^^")
    lines.append(draw(_EXCEPTION))
    if draw(st.booleans()):  # a chained exception
        cause = "During handling of the above exception, another exception occurred:"
        lines = [*lines, "", cause, "", *draw(_python_trace()).splitlines()]
    return "\n".join(lines)


@st.composite
def _js_trace(draw: st.DrawFn) -> str:
    frames = [
        f"    at {draw(_NAME)} ({draw(_NAME)}/{draw(_NAME)}.js:{draw(st.integers(1, 999))}:"
        f"{draw(st.integers(1, 99))})"
        for _ in range(draw(st.integers(1, 4)))
    ]
    return "\n".join([draw(_EXCEPTION), *frames])


_OUTPUT_LINE = st.sampled_from(
    ["$ python -m pytest", "collected 12 items", "tests/test_core.py ..F", "1 failed, 11 passed"]
)
_TOOL_OUTPUT = st.builds(
    lambda before, trace, after: "\n".join([*before, trace, *after]),
    st.lists(_OUTPUT_LINE, max_size=3),
    st.one_of(_python_trace(), _js_trace()),
    st.lists(_OUTPUT_LINE, max_size=2),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.tuples(_TOOL_OUTPUT, st.booleans()), min_size=1, max_size=5),
    keep=st.integers(0, 2),
)
def test_tracebacks_in_tool_output_never_stop_compaction(
    steps: list[tuple[str, bool]], keep: int
) -> None:
    engine = _engine()
    engine.add_user("Fix the failing tests.")
    for i, (output, observed) in enumerate(steps):
        if observed:  # a plain-text agent sends the environment's output as user text
            engine.add_assistant(f"Step {i}: running the tests.")
            engine.add_observation(output)
        else:
            call = ToolUse(f"c{i}", "bash", {"cmd": "pytest"})
            engine.add_assistant(f"Step {i}.", [call])
            engine.add_tool_result(call.id, output)
    engine.add_assistant("I see.")
    engine.add_user("go on")
    result = engine.compact(keep_messages=keep + 1)  # never raises
    assert result is not None and not result.rejected
    for summary in _summaries(engine):
        assert summary_defect(summary) is None
        assert HEADER not in summary  # a trace is kept as its exception line
