"""What a running job's reports cost in cache: the call's tool_result keeps its bytes while
the job runs (the fixed running marker), the latest report is rendered where it was added and
a newer one takes the older one out, so the previous request's prefix is reused up to its
tail; the final result rewrites the call's tool_result once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from progress_support import conversation_blueprint
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout import RenderLog
from regio.layout.repair import RUNNING_RESULT

BLUEPRINT = conversation_blueprint("background", 150_000, items=5000)


def _unmarked(value: Any) -> Any:
    """``value`` without ``cache_control`` keys (markers move by design)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _messages(payload: dict[str, Any]) -> list[Any]:
    return list(_unmarked(payload["input" if "input" in payload else "messages"]))


def _in_common(before: list[Any], after: list[Any]) -> int:
    return next(
        (k for k, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
        min(len(before), len(after)),
    )


def _session(
    open_job: bool, provider: str, turns: int = 30, beside: bool = False
) -> tuple[Engine, list[int], int]:
    """A job reporting every turn (``open_job``) or finished: per turn, the messages the
    request has in common with the previous one; and the previous request's length. With
    ``beside`` the report comes in the tool message of the turn's call's final result
    (``[tool_result(c_i), tool_result(bg, final=False)]``)."""
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("start the build in the background")
    engine.add_assistant("starting", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    if not open_job:
        engine.add_tool_result("bg", "build finished")
    common, before = [], _messages(engine.request(provider)[1])
    for i in range(1, turns + 1):
        engine.add_user(f"question {i}")
        engine.add_assistant(f"look {i}", [ToolUse(f"c{i}", "ls", {})])
        report = ToolResult("bg", f"status: running, {i}% done", final=False)
        if beside:
            results = (ToolResult(f"c{i}", f"files {i}"), *((report,) if open_job else ()))
            engine.add_message(Message("user", results))
        else:
            engine.add_tool_result(f"c{i}", f"files {i}")
            if open_job:
                engine.add_message(Message.tool([report]))
        after = _messages(engine.request(provider)[1])
        common.append(_in_common(before, after))
        before, length = after, len(before)
    return engine, common, length


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai_responses"])
def test_a_reporting_job_reuses_the_previous_request_up_to_its_tail(provider: str) -> None:
    _, opened, length = _session(True, provider)
    _, closed, _ = _session(False, provider)
    # before: 2 of 61 (Anthropic), 3 of 91 (OpenAI Chat), 3 of 121 (Responses) in common
    assert opened[-1] >= length - 1  # all but the previous request's last message
    assert opened[1:] == closed[1:]  # every turn: as much as with the job closed


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai_responses"])
def test_a_report_beside_a_parallel_result_reuses_the_previous_request_up_to_its_tail(
    provider: str,
) -> None:
    """The report in the same tool message as another call's final result: the window takes
    it out of that entry when the next report comes; the render log follows without a reset
    and the previous request is reused up to its last message, as with the job closed."""
    engine, opened, length = _session(True, provider, beside=True)
    _, closed, _ = _session(False, provider, beside=True)
    # 60 of 61 (Anthropic), 91 of 92 (OpenAI Chat), 120 of 121 (Responses) in common
    assert opened[-1] >= length - 1
    assert opened[1:] == closed[1:]
    assert engine.render_log.resets == 0
    warm = json.dumps(engine.request(provider)[1])
    engine.render_log = RenderLog()
    assert json.dumps(engine.request(provider)[1]) == warm


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_final_result_replaces_the_running_marker_and_the_report_leaves(
    provider: str,
) -> None:
    engine, _, _ = _session(True, provider, turns=3)
    text = json.dumps(engine.request(provider)[1])
    assert text.count(RUNNING_RESULT) == 1 and text.count("[progress report of tool call bg") == 1
    assert "status: running, 3% done" in text and "2% done" not in text
    engine.add_tool_result("bg", "build finished: 3 files")
    warm = engine.request(provider)[1]
    text = json.dumps(warm)
    assert RUNNING_RESULT not in text and "[progress report of" not in text
    assert "build finished: 3 files" in text
    engine.render_log = RenderLog()
    assert json.dumps(engine.request(provider)[1]) == text  # as a fresh render


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=25),
    st.sampled_from(["anthropic", "openai", "openai_responses"]),
)
def test_a_newer_report_changes_nothing_before_the_older_one(
    turns: list[tuple[bool, bool, bool]], provider: str
) -> None:
    """Per turn: whether the job reports, whether the assistant replies after the request,
    whether the report comes in the tool message of the turn's call's final result.
    Every message block of the previous request before its first report block keeps its
    prefix hash in the next request (nothing before the tail is rewritten)."""
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("start")
    engine.add_assistant("starting", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    before = engine.request(provider)[0]
    for i, (report, reply, beside) in enumerate(turns):
        engine.add_user(f"question {i}")
        engine.add_assistant(f"look {i}", [ToolUse(f"c{i}", "ls", {})])
        results = [ToolResult(f"c{i}", f"files {i}")]
        if report:
            results.append(ToolResult("bg", f"status: running, step {i}", final=False))
        if beside:
            engine.add_message(Message("user", tuple(results)))
        else:
            for result in results:
                engine.add_message(Message.tool([result]))
        after = engine.request(provider)[0]
        old = [b for b in before.blocks if b.level == "messages"]
        new = [b for b in after.blocks if b.level == "messages"]
        r = next((k for k, b in enumerate(old) if b.origin == "progress"), len(old))
        assert [b.prefix_hash for b in new[:r]] == [b.prefix_hash for b in old[:r]]
        if not report:  # no newer report: the whole previous conversation is kept
            assert [b.prefix_hash for b in new[: len(old)]] == [b.prefix_hash for b in old]
        if reply:
            engine.add_assistant(f"so {i}")
        before = after
    assert engine.render_log.resets == 0
