"""The session's render log: a request built on a warm log is exactly the request built from
scratch, the log is reset only when the conversation is rewritten, and a turn costs what it
adds, not what the window holds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout import RenderLog, repair
from regio.layout import renderlog as renderlog_module
from regio.layout.repair import (
    START_MESSAGE,
    PMessage,
    RepairFront,
    StaleFront,
    advance,
    named,
    repair_after,
    run_events,
)
from regio.layout.watermark import reporting, watermarks
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter

IDS = ["c1", "c2", "c3", "c4", "c5"]


@st.composite
def pmessages(draw: st.DrawFn) -> PMessage:
    role = draw(st.sampled_from(["user", "assistant", "tool", "user", "assistant"]))
    blocks = draw(
        st.lists(
            st.one_of(
                st.builds(Text, st.sampled_from(["", "a", "bb"])),
                st.builds(ToolUse, st.sampled_from(IDS), st.just("t")),
                st.builds(
                    ToolResult,
                    st.sampled_from(IDS),
                    st.sampled_from(["r", "s"]),
                    final=st.booleans(),  # progress reports and final results
                ),
            ),
            max_size=3,
        )
    )
    origin = draw(st.sampled_from(["entry", "note", "frozen"]))
    return PMessage(role, tuple(blocks), "e", draw(st.booleans()), origin)


def _resumed(messages: list[PMessage], cuts: list[int]) -> tuple[list[PMessage], list[Any]]:
    """Repair ``messages`` moving the watermark as far as allowed before each cut (read, as the
    render log reads it, on the call ids as the repair names them)."""
    front = RepairFront()
    final: list[PMessage] = []
    pos = 0
    for cut in cuts:
        ids = named(front, messages[pos:])
        marks = [m for m in watermarks(ids, front) if pos + m <= cut]
        if not marks:
            continue
        later = reporting(ids[marks[-1] :])
        run = repair_after(front, messages[pos : pos + marks[-1]], later)
        final += advance(front, run, marks[-1])
        pos += marks[-1]
    run = repair_after(front, messages[pos:])
    out = final + run.messages
    first = front.first_role or (run.messages[0].role if run.messages else None)
    return ([START_MESSAGE, *out] if first == "assistant" else out), run_events(front, run)


#: a call id reused after its first call was answered: the second call (named ``c4-1``) is still
#: open at input 4, so no watermark may fall there
REUSED_ID_OPEN = [
    PMessage("assistant", (ToolUse("c4", "t", {}),), "e", True, "entry"),
    PMessage("user", (ToolResult("c4", "r"),), "e", False, "entry"),
    PMessage("assistant", (ToolUse("c4", "t", {}),), "e", False, "entry"),
    PMessage("user", (Text("a"),), "e", False, "entry"),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(pmessages(), max_size=30), st.lists(st.integers(0, 30), max_size=4))
@example(REUSED_ID_OPEN, [3])
def test_a_repair_resumed_at_watermarks_equals_a_full_repair(
    messages: list[PMessage], cuts: list[int]
) -> None:
    assert _resumed(messages, sorted(cuts)) == repair(messages)


def test_a_late_result_for_a_call_taken_as_missing_invalidates_the_front() -> None:
    history = [
        PMessage("user", (Text("q"),), "e1"),
        PMessage("assistant", (ToolUse("c1", "t"),), "e2"),
        PMessage("user", (Text("again"),), "e3"),
    ]
    front = RepairFront()
    advance(front, repair_after(front, history), len(history))
    assert "c1" in front.missing
    with pytest.raises(StaleFront):
        repair_after(front, [PMessage("tool", (ToolResult("c1", "late"),), "e4")])


BLUEPRINT = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 30000,
        max_output_tokens: 1000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, seed: "You help."}
  - {name: env_state, kind: keyed, volatility: rewritten, budget: 300}
  - {name: notes, kind: temporary, volatility: grows, budget: 1500, admission: evict}
  - {name: history, kind: compact_history, source: conversation, volatility: grows,
     budget: 1500}
  - name: conversation
    kind: sliding_window
    budget: BUDGET
    max_items: ITEMS
    eviction: {strategy: compact, compact_count: 10}
"""

#: One turn's action: 0 plain reply, 1 call answered, 2 call never answered, 3 orphan result,
#: 4 note written, 5 env state changed, 6 note released, 7 parallel calls answered late,
#: 8 background job started (a progress report), 9 progress report of an open job,
#: 10 final result of an open job, 11 progress report then reply in the same turn,
#: 12 a job's report and a parallel call's final result in one message, 13 two reports of a
#: job in a row, 14 two jobs started by one assistant message, 15 a job's report between two
#: user texts, 16 a job's report after an assistant text (the next reply follows it), 17 a
#: user text, a job's report and a parallel call's final result in one message.
actions = st.lists(st.integers(0, 17), min_size=1, max_size=60)


def _engine(budget: str = "3000", items: int = 40) -> Engine:
    counter = get_counter("heuristic")
    return Engine.from_blueprint(
        BLUEPRINT.replace("BUDGET", budget).replace("ITEMS", str(items)),
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter, max_summary_tokens=100),
        clock=lambda: 0.0,
    )


def _turn(engine: Engine, i: int, action: int, jobs: list[str] | None = None) -> None:
    jobs = [] if jobs is None else jobs
    engine.add_user(f"turn {i}: look at item {i} " + "word " * (i % 5))
    if action == 1 or action == 2:
        engine.add_assistant(f"checking {i}", [ToolUse(f"c{i}", "ls", {"i": i})])
        if action == 1:
            engine.add_tool_result(f"c{i}", f"files {i} " * 3)
    elif action == 3:
        engine.add_tool_result(f"ghost{i}", "nobody asked")
    elif action == 4:
        engine.write("notes", f"note {i}: " + "fact " * (i % 11))
    elif action == 5:
        engine.write("env_state", f"cwd=/repo/{i}", key="env")
    elif action == 6 and engine.window.region("notes").entries:
        engine.release("notes", oldest=1)
    elif action == 7:
        engine.add_assistant("", [ToolUse(f"p{i}", "a", {}), ToolUse(f"q{i}", "b", {})])
        engine.add_tool_result(f"q{i}", "second first")
        engine.add_tool_result(f"p{i}", "first second")
    elif action == 8:
        engine.add_assistant(f"starting job {i}", [ToolUse(f"j{i}", "build", {})])
        engine.add_tool_result(f"j{i}", f"job {i}: running", final=False)
        jobs.append(f"j{i}")
    elif action in (9, 11) and jobs:
        job = jobs[i % len(jobs)]
        engine.add_tool_result(job, f"{job}: {i}% done", final=False)
        if action == 11:
            engine.add_assistant(f"still running at turn {i}")
    elif action == 10 and jobs:
        job = jobs.pop(i % len(jobs))
        engine.add_tool_result(job, f"{job} finished at turn {i}")
    elif action == 12 and jobs:
        job = jobs[i % len(jobs)]
        engine.add_assistant("", [ToolUse(f"x{i}", "ls", {"i": i})])
        report = ToolResult(job, f"{job}: {i}%", final=False)
        engine.add_message(Message("user", (report, ToolResult(f"x{i}", f"x{i} out"))))
    elif action == 13 and jobs:
        job = jobs[i % len(jobs)]
        engine.add_tool_result(job, f"{job}: a{i}", final=False)
        engine.add_tool_result(job, f"{job}: b{i}", final=False)
    elif action == 14:
        engine.add_assistant("", [ToolUse(f"j{i}a", "build", {}), ToolUse(f"j{i}b", "build", {})])
        runs = (ToolResult(f"j{i}a", "run", final=False), ToolResult(f"j{i}b", "run", final=False))
        engine.add_message(Message("user", runs))
        jobs += [f"j{i}a", f"j{i}b"]
    elif action == 15 and jobs:
        engine.add_tool_result(jobs[i % len(jobs)], f"{i}% between texts", final=False)
        engine.add_user(f"and also {i}")
    elif action == 16 and jobs:
        engine.add_assistant(f"waiting {i}")
        engine.add_tool_result(jobs[i % len(jobs)], f"{i}% after a reply", final=False)
    elif action == 17 and jobs:
        job = jobs[i % len(jobs)]
        engine.add_assistant("", [ToolUse(f"y{i}", "ls", {"i": i})])
        report = ToolResult(job, f"{job}: {i}% with text", final=False)
        parts = (Text(f"see {i} " + "word " * (i % 7)), report, ToolResult(f"y{i}", f"y{i} out"))
        engine.add_message(Message("user", parts))


def _play(
    steps: list[int], api: str, cold: bool, replies: tuple[bool, ...] = (True,)
) -> list[tuple[bytes, list[str], list[Any]]]:
    """Play ``steps``, one request a turn; after request ``i`` the assistant replies when
    ``replies[i % len(replies)]`` (else the next turn follows the request directly: the
    loop shape where a job's report is the last message of every request)."""
    engine = _engine()
    out = []
    jobs: list[str] = []
    for i, action in enumerate(steps):
        _turn(engine, i, action, jobs)
        if cold:
            engine.render_log = RenderLog()
        req, payload = engine.request("anthropic", "claude-sonnet-4-5", api=api)
        blocks = [(b.prefix_hash, b.tokens, b.source, b.origin, b.message) for b in req.blocks]
        out.append((json.dumps(payload).encode(), [repr(e) for e in req.events], blocks))
        if replies[i % len(replies)]:
            engine.add_assistant(f"done {i}")
    return out


#: found by a seeded search: two jobs started in one message, reports in a row, a report
#: beside a parallel call's result, under compaction (a removed report once left a stale
#: ``moved_results`` event on the warm log)
REPORTS_IN_A_ROW = [0, 2, 0, 0, 0, 1, 2, 3, 0, 8, 3, 0, 10, 0, 7, 7, 7, 0, 7, 0, 3, 14, 0, 0, 1]
REPORTS_IN_A_ROW += [7, 3, 12, 0, 11, 0, 8, 7, 14, 14, 0, 1, 0, 0, 1, 13, 9, 13]
#: a finished job's result moved past a report of its sibling job that is then removed
REPORT_REMOVED_BEFORE_A_RESULT = [14, 9, 2, 1, 13, 3, 14, 7, 4, 14, 10, 5, 2, 8, 2, 2, 0, 4]
REPORT_REMOVED_BEFORE_A_RESULT += [10, 2, 13, 1, 0, 7, 7, 8, 0, 12]


@settings(max_examples=25, deadline=None)
@given(
    actions,
    st.sampled_from(["anthropic", "openai_chat", "openai_responses"]),
    st.lists(st.booleans(), min_size=1, max_size=4).map(tuple),
)
@example(REPORTS_IN_A_ROW, "anthropic", (True,))
@example(REPORT_REMOVED_BEFORE_A_RESULT, "openai_chat", (True,))
@example(REPORTS_IN_A_ROW, "openai_chat", (False,))
@example(REPORT_REMOVED_BEFORE_A_RESULT, "anthropic", (False, True))
def test_requests_on_a_warm_log_equal_requests_built_from_scratch(
    steps: list[int], api: str, replies: tuple[bool, ...]
) -> None:
    assert _play(steps, api, False, replies) == _play(steps, api, True, replies)


def test_the_log_is_reset_only_when_the_conversation_is_rewritten() -> None:
    engine = _engine(budget='"80%"', items=1000)
    for i in range(30):
        _turn(engine, i, 1)
        engine.request("anthropic", "claude-sonnet-4-5")
        engine.add_assistant(f"done {i}")
    assert engine.render_log.resets == 0  # append-only: the watermark only moves forward
    assert engine.render_log.messages > 50
    small = _engine()
    compactions = []
    small.subscribe(lambda e: compactions.append(e) if e.kind == "compaction_finished" else None)
    for i in range(80):
        _turn(small, i, 1)
        small.request("anthropic", "claude-sonnet-4-5")
        small.add_assistant(f"done {i}")
    assert compactions
    assert 0 < small.render_log.resets <= 2 * len(compactions)


def test_a_turn_hashes_only_what_it_adds(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]
    real = renderlog_module.block_digest

    def counting(*args: Any) -> str:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(renderlog_module, "block_digest", counting)
    engine = _engine(budget='"80%"', items=1000)
    per_turn = []
    for i in range(120):
        before = calls[0]
        _turn(engine, i, 1)
        engine.request("anthropic", "claude-sonnet-4-5")
        engine.add_assistant(f"done {i}")
        per_turn.append(calls[0] - before)
    assert max(per_turn[100:]) == max(per_turn[10:20])  # flat, not growing with the window


def test_a_dropped_engine_takes_its_render_log_with_it() -> None:
    import gc
    import weakref

    engine = _engine()
    for i in range(5):
        _turn(engine, i, 1)
        engine.request("anthropic", "claude-sonnet-4-5", api="openai_chat")
        engine.add_assistant(f"done {i}")
    log = weakref.ref(engine.render_log)
    window = weakref.ref(engine.window)
    del engine
    gc.collect()
    assert log() is None and window() is None  # nothing module-level keeps a session alive


@pytest.mark.parametrize("reply", [False, True], ids=["report-then-request", "reply-between"])
def test_a_newer_progress_report_is_patched_in_without_resetting_the_log(
    monkeypatch: pytest.MonkeyPatch, reply: bool
) -> None:
    """A background job reporting once a turn: each newer report is rendered where it was
    added and the earlier one's message leaves; the log is not reset, a turn hashes what it
    adds (flat, not growing with the session) and the request equals one built from scratch."""
    calls = [0]
    real = renderlog_module.block_digest

    def counting(*args: Any) -> str:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(renderlog_module, "block_digest", counting)
    engine = _engine(budget='"80%"', items=1000)
    engine.add_user("start the build in the background")
    engine.add_assistant("starting", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    per_turn = []
    for i in range(120):
        before = calls[0]
        _turn(engine, i, 1)
        engine.add_tool_result("bg", f"status: running, {i}% done", final=False)
        if reply:
            engine.add_assistant(f"still running {i}")
        warm = engine.request("anthropic", "claude-sonnet-4-5")[1]
        per_turn.append(calls[0] - before)
    assert engine.render_log.resets == 0
    assert max(per_turn[100:]) <= max(per_turn[10:20])
    engine.add_tool_result("bg", "build finished")
    warm = engine.request("anthropic", "claude-sonnet-4-5")[1]
    assert engine.render_log.resets == 0
    engine.render_log = RenderLog()
    assert json.dumps(engine.request("anthropic", "claude-sonnet-4-5")[1]) == json.dumps(warm)


def _report_turn(engine: Engine, i: int, kind: int) -> None:
    """One turn of a running job ``bg``: 0 its report beside a call's final result in one
    tool message (with a request between the user's message and the results), 1 its report
    between two user texts, 2 its report after an assistant text (the reply follows it), 3 a
    call answered and no report, 4 a user message with a text, the report and a call's
    result."""
    report = ToolResult("bg", f"status: running, step {i}", final=False)
    engine.add_user(f"question {i} " + "word " * (i % 4))
    if kind == 0:
        engine.request("anthropic", "claude-sonnet-4-5")
        engine.add_assistant(f"look {i}", [ToolUse(f"c{i}", "ls", {"i": i})])
        engine.add_message(Message("user", (ToolResult(f"c{i}", f"files {i} " * 3), report)))
    elif kind == 1:
        engine.add_message(Message.tool([report]))
        engine.add_user(f"and also {i}")
    elif kind == 2:
        engine.add_assistant(f"waiting {i}")
        engine.add_message(Message.tool([report]))
    elif kind == 3:
        engine.add_assistant(f"look {i}", [ToolUse(f"c{i}", "ls", {"i": i})])
        engine.add_tool_result(f"c{i}", f"files {i}")
    else:
        engine.add_assistant("", [ToolUse(f"y{i}", "ls", {"i": i})])
        text = Text(f"see {i} " + "word " * (i % 7))
        engine.add_message(Message("user", (text, report, ToolResult(f"y{i}", "out " * i))))


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=40),
    st.sampled_from(["anthropic", "openai_chat", "openai_responses"]),
    st.lists(st.booleans(), min_size=1, max_size=3),
)
def test_a_report_beside_a_result_or_between_same_role_messages_never_resets_the_log(
    kinds: list[int], api: str, replies: list[bool]
) -> None:
    """A superseded report in an entry with other blocks (the window rewrites the entry
    without it) or between two messages that merge once it is gone: the render log follows
    without a reset and every request equals one built from scratch."""
    engine = _engine(budget='"80%"', items=1000)
    engine.add_user("start the build in the background")
    engine.add_assistant("starting", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    for i, kind in enumerate(kinds):
        _report_turn(engine, i, kind)
        warm = engine.request("anthropic", "claude-sonnet-4-5", api=api)
        log = engine.render_log
        engine.render_log = RenderLog()
        cold = engine.request("anthropic", "claude-sonnet-4-5", api=api)
        engine.render_log = log
        assert json.dumps(warm[1]) == json.dumps(cold[1])
        assert [repr(e) for e in warm[0].events] == [repr(e) for e in cold[0].events]
        assert [(b.prefix_hash, b.tokens, b.source, b.message) for b in warm[0].blocks] == [
            (b.prefix_hash, b.tokens, b.source, b.message) for b in cold[0].blocks
        ]
        if replies[i % len(replies)]:
            engine.add_assistant(f"done {i}")
    assert engine.render_log.resets == 0
