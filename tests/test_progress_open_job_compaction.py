"""An open background job does not block compaction: a call that has only progress reports
(``ToolResult(final=False)``) keeps its own group open and protected (its call and latest
report stay together), but its group does not reach over the later, unrelated complete
groups up to its latest report, so those stay independently compactable and evictable."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from progress_support import conversation_blueprint
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.regions import Refusal
from regio.turngroups import group_entries, group_messages


def _engine(budget: int = 40000, items: int = 60) -> Engine:
    # the cost controller off: it sizes each batch by the session's own growth per turn (the
    # open job's reports make its turns larger), which is not what these tests compare
    return Engine.from_blueprint(
        conversation_blueprint("background", budget, items=items, compact_count=10),
        cost_control=False,
    )


def _session(open_job: bool, turns: int) -> tuple[Engine, int]:
    """A session that starts a background job, then works ``turns`` turns (one complete tool
    call each) while the job reports progress once a turn; returns the engine and the peak
    number of conversation entries."""
    engine = _engine()
    engine.add_user("start the build in the background")
    engine.add_assistant("starting", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running, job 1", final=False)
    if not open_job:
        engine.add_tool_result("bg", "build finished")
    peak = 0
    for i in range(1, turns + 1):
        engine.add_user(f"question {i} " + "word " * 10)
        engine.add_assistant(f"look {i}", [ToolUse(f"c{i}", "ls", {"i": i})])
        engine.add_tool_result(f"c{i}", f"files {i} " * 5)
        if open_job:
            engine.add_tool_result("bg", f"status: running, {i}% done", final=False)
        engine.add_assistant(f"so {i}")
        engine.request()
        peak = max(peak, len(engine.window.conversation.entries))
    return engine, peak


def _blocks(engine: Engine) -> list[Any]:
    return [b for e in engine.window.conversation.entries for b in e.blocks]


def test_a_long_session_with_an_open_background_job_compacts_like_a_closed_one() -> None:
    opened, open_peak = _session(open_job=True, turns=205)
    _closed, closed_peak = _session(open_job=False, turns=205)
    assert open_peak <= closed_peak + 2  # bounded like the closed job (was 748 against 69)
    blocks = _blocks(opened)
    assert any(isinstance(b, ToolUse) and b.id == "bg" for b in blocks)
    reports = [b for b in blocks if isinstance(b, ToolResult) and b.tool_use_id == "bg"]
    assert [r.content for r in reports] == ["status: running, 205% done"]
    assert opened.window.region("history").entries  # the work around the job was compacted


def test_progress_reports_do_not_merge_later_complete_groups_into_the_open_one() -> None:
    messages = [
        Message.user("start"),
        Message.assistant("", [ToolUse("bg", "build", {})]),
        Message.tool([ToolResult("bg", "running", final=False)]),
        Message.user("meanwhile"),
        Message.assistant("", [ToolUse("c1", "ls", {})]),
        Message.tool([ToolResult("c1", "files")]),
        Message.tool([ToolResult("bg", "running 50%", final=False)]),
    ]
    grouping = group_messages(messages)
    assert grouping.group_of(1).members == (1, 2, 6)
    assert grouping.group_of(1).open
    assert grouping.group_of(4).members == (4, 5)
    assert not grouping.group_of(4).open
    # once the job has its final result, the interleaved span is one unit again
    done = group_messages([*messages, Message.tool([ToolResult("bg", "built")])])
    assert done.group_of(1).members == (1, 2, 4, 5, 6, 7)
    assert done.open_groups == ()


def test_interleaved_calls_with_a_progress_report_stay_well_formed_units() -> None:
    # a1{bg}, a2{c2}, progress(bg), t(c2): c2 is complete on its own, bg stays open
    messages = [
        Message.user("go"),
        Message.assistant("", [ToolUse("bg", "build", {})]),
        Message.assistant("", [ToolUse("c2", "ls", {})]),
        Message.tool([ToolResult("bg", "running", final=False)]),
        Message.tool([ToolResult("c2", "files")]),
    ]
    grouping = group_messages(messages)
    assert grouping.open_groups == ("g:bg",)
    assert grouping.group_of(2).members == (2, 4)
    # parallel results in one message still join both calls into one unit
    joined = group_messages(
        [
            *messages[:3],
            Message.tool([ToolResult("bg", "running", final=False), ToolResult("c2", "f")]),
        ]
    )
    assert joined.group_of(1).members == (1, 2, 3)


def test_a_job_reporting_beside_other_results_does_not_merge_the_session_into_one_unit() -> None:
    # the parallel-results shape [t(c_n), t(bg, final=False)]: the complete call's group stays
    # its own unit, the job's group holds its call and the message with its latest report
    messages = [
        Message.user("start"),
        Message.assistant("", [ToolUse("bg", "build", {})]),
        Message.tool([ToolResult("bg", "running", final=False)]),
        Message.user("q1"),
        Message.assistant("", [ToolUse("c1", "ls", {})]),
        Message.tool([ToolResult("c1", "files")]),  # its report superseded, dropped
        Message.user("q2"),
        Message.assistant("", [ToolUse("c2", "ls", {})]),
        Message.tool([ToolResult("bg", "running 20%", final=False), ToolResult("c2", "files")]),
    ]
    grouping = group_messages(messages)
    assert grouping.open_groups == ("g:bg",)
    assert grouping.group_of(1).members == (1, 2, 7, 8)
    assert grouping.group_of(4).members == (4, 5)
    assert not grouping.group_of(4).open
    # once the job has its final result, the interleaved span is one unit again
    done = group_messages([*messages, Message.tool([ToolResult("bg", "built")])])
    assert done.group_of(1).members == (1, 2, 4, 5, 7, 8, 9)
    assert done.open_groups == ()


def test_a_long_session_with_a_job_reporting_beside_each_result_compacts_without_refusal() -> None:
    # reviewer's case: 6,000 tokens, the job reports in every turn's results message; the
    # session died with RegionFullError by turn ~147 when every turn welded into the open unit
    engine = Engine.from_blueprint(conversation_blueprint("p", 6000))
    engine.add_user("start job")
    engine.add_assistant("ok", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    for n in range(250):
        engine.add_user(f"q{n} " + "word " * 30)
        engine.add_assistant(f"a{n}", [ToolUse(f"c{n}", "ls", {"n": n})])
        reply = [ToolResult(f"c{n}", "out " * 30), ToolResult("bg", f"running {n}%", final=False)]
        assert not isinstance(engine.add_message(Message.tool(reply)), Refusal)
        engine.add_assistant(f"so {n}")
        engine.request()
    conversation = engine.window.conversation
    assert conversation.used_tokens <= 6000
    assert engine.window.region("history").entries  # the work around the job was compacted
    blocks = _blocks(engine)
    reports = [b for b in blocks if isinstance(b, ToolResult) and b.tool_use_id == "bg"]
    assert [r.content for r in reports] == ["running 249%"]
    assert group_entries(conversation.entries).open_groups == ("g:bg",)


HISTORY = """
version: 1
name: background
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000}
tokenizer: heuristic
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 400, seed: "You are careful."}
  - {name: conversation, kind: sliding_window, budget: 60000, CAP}
"""


@pytest.mark.parametrize("cap", ["max_items: 30", "max_turns: 5", "max_tool_calls: 6"])
def test_history_windows_evict_around_an_open_background_job(cap: str) -> None:
    sizes = {}
    for open_job in (True, False):
        engine = Engine.from_blueprint(HISTORY.replace("CAP", cap))
        engine.add_user("start the build in the background")
        engine.add_assistant("starting", [ToolUse("bg", "build", {})])
        engine.add_tool_result("bg", "status: running", final=False)
        if not open_job:
            engine.add_tool_result("bg", "build finished")
        for i in range(200):
            engine.add_user(f"question {i}")
            engine.add_assistant("", [ToolUse(f"c{i}", "ls", {})])
            engine.add_tool_result(f"c{i}", "ok")
            if open_job:
                engine.add_tool_result("bg", f"status: running, {i}% done", final=False)
            engine.add_assistant(f"answer {i}")
        sizes[open_job] = len(engine.window.conversation.entries)
        if open_job:
            blocks = _blocks(engine)
            assert any(isinstance(b, ToolUse) and b.id == "bg" for b in blocks)
            reports = [b for b in blocks if isinstance(b, ToolResult) and b.tool_use_id == "bg"]
            assert [r.content for r in reports] == ["status: running, 199% done"]
    assert sizes[True] <= sizes[False] + 3  # the job's call and report (was 802 against 29)


# ----- property: random sessions with open background jobs -----------------------------------

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 40)),
        st.tuples(st.just("work"), st.integers(1, 40)),
        st.tuples(st.just("start"), st.integers(0, 3)),
        st.tuples(st.just("progress"), st.integers(0, 3)),
        st.tuples(st.just("combined"), st.integers(0, 3)),
        st.tuples(st.just("final"), st.integers(0, 3)),
        st.tuples(st.just("request"), st.integers(0, 3)),
        st.tuples(st.just("compact"), st.integers(0, 3)),
    ),
    min_size=1,
    max_size=60,
)


def _check_window(engine: Engine, latest: dict[str, str], finished: set[str]) -> None:
    seen: set[str] = set()
    for block in _blocks(engine):
        if isinstance(block, ToolUse):
            seen.add(block.id)
        elif isinstance(block, ToolResult):
            assert block.tool_use_id in seen, block.tool_use_id  # preceded by its tool_use
    blocks = _blocks(engine)
    for job, text in latest.items():
        if job in finished:
            continue
        assert any(isinstance(b, ToolUse) and b.id == job for b in blocks), job
        reports = [b for b in blocks if isinstance(b, ToolResult) and b.tool_use_id == job]
        assert reports and reports[-1].content == text, job
    _check_open_units(engine)


def _check_open_units(engine: Engine) -> None:
    """No complete call whose span (its call up to its final result) holds no open job's call or
    report and overlaps no other complete call's span is welded into an open group: an open
    job does not merge unrelated turns."""
    entries = engine.window.conversation.entries
    finals = {
        b.tool_use_id: i
        for i, e in enumerate(entries)
        for b in e.blocks
        if isinstance(b, ToolResult) and b.is_final
    }
    uses = {b.id: i for i, e in enumerate(entries) for b in e.blocks if isinstance(b, ToolUse)}
    pending = {c for c in uses if c not in finals}
    job_entries = [
        i
        for i, e in enumerate(entries)
        if any(
            (isinstance(b, ToolUse) and b.id in pending)
            or (isinstance(b, ToolResult) and b.tool_use_id in pending)
            for b in e.blocks
        )
    ]
    spans = {c: (u, finals[c]) for c, u in uses.items() if c in finals}
    grouping = group_entries(entries)
    for call, (use, end) in spans.items():
        if any(use <= i <= end for i in job_entries) or any(
            o != call and lo <= end and use <= hi for o, (lo, hi) in spans.items()
        ):
            continue  # a genuine interleave (or the job's report beside it) joins the units
        assert not grouping.group_of(use).open, (call, grouping.group_of(use))
        assert not grouping.group_of(end).open, (call, grouping.group_of(end))


_CONFIGS = st.sampled_from(
    [
        conversation_blueprint("background", 1500, items=12, compact_count=10),
        HISTORY.replace("CAP", "max_items: 8"),
        HISTORY.replace("CAP", "max_turns: 2"),
        HISTORY.replace("CAP", "max_tool_calls: 2").replace("60000", "600"),
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS, blueprint=_CONFIGS)
def test_open_jobs_keep_their_call_and_latest_report_through_every_compaction(
    ops: list[tuple[str, int]], blueprint: str
) -> None:
    """After every step of a random session with background jobs, under compaction, item,
    turn and tool-call windows and a token cap: every tool_result in the window is preceded
    by its tool_use, and each open job keeps its call and its latest report, whatever was
    compacted or evicted around them."""
    engine = Engine.from_blueprint(blueprint)
    jobs: list[str] = []
    latest: dict[str, str] = {}
    finished: set[str] = set()
    engine.add_user("begin")
    for n, (op, arg) in enumerate(ops, 1):
        if op == "user":
            engine.add_user(f"user {n} " + "word " * arg)
        elif op == "work":
            engine.add_assistant(f"work {n}", [ToolUse(f"w{n}", "ls", {})])
            engine.add_tool_result(f"w{n}", "files " * arg)
        elif op == "start":
            job = f"bg{n}"
            jobs.append(job)
            engine.add_assistant(f"start {n}", [ToolUse(job, "build", {})])
            latest[job] = f"running {n}"
            engine.add_tool_result(job, latest[job], final=False)
        elif op in ("progress", "final") and jobs:
            job = jobs[arg % len(jobs)]
            if job in finished:
                continue
            latest[job] = f"{op} {n}"
            engine.add_tool_result(job, latest[job], final=op == "final")
            if op == "final":
                finished.add(job)
        elif op == "combined" and jobs and jobs[arg % len(jobs)] not in finished:
            job = jobs[arg % len(jobs)]
            latest[job] = f"beside {n}"
            engine.add_assistant(f"work {n}", [ToolUse(f"w{n}", "ls", {})])
            reply = [ToolResult(f"w{n}", "files " * arg), ToolResult(job, latest[job], final=False)]
            engine.add_message(Message.tool(reply))
        elif op == "request":
            engine.request()
        elif op == "compact" and arg:
            engine.compact(keep_messages=arg)
        elif op == "compact":
            engine.compact(keep_tokens=0)
        _check_window(engine, latest, finished)
