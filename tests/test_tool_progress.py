"""Progress is not completion: a tool result that reports progress (``final=False``: a
long-running or background job, ``status: running``, a job id to poll) does not answer its
call. The call's group stays open until the final result, is never compacted, evicted apart or
cut into a kept tail, the latest result of a call is the one rendered, and every payload stays
valid for Anthropic and OpenAI (exactly one tool_result per tool_use)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from progress_support import call_is_open, conversation_blueprint
from regio.agent.tools import UserToolOutcome
from regio.content import ContentTypeError, Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout import RenderLog
from regio.layout.repair import RUNNING_RESULT, check_anthropic, check_openai_chat
from regio.turngroups import group_messages

BLUEPRINT = conversation_blueprint("progress", 3000)

PER_ITEM = """
version: 1
name: progress
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000}
tokenizer: heuristic
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 400, seed: "You are careful."}
  - {name: conversation, kind: sliding_window, budget: 3000, max_items: 6}
"""


def _results(payload: dict[str, Any], provider: str) -> dict[str, list[str]]:
    """Every rendered tool result content per call id."""
    out: dict[str, list[str]] = {}
    for m in payload["messages"]:
        if provider == "openai":
            if m["role"] == "tool":
                out.setdefault(m["tool_call_id"], []).append(m["content"])
            continue
        if isinstance(m["content"], str):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_result":
                content = b["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                out.setdefault(b["tool_use_id"], []).append(text)
    return out


def _reports(payload: dict[str, Any]) -> dict[str, list[str]]:
    """Every rendered progress report text per call id (the label taken off)."""
    out: dict[str, list[str]] = {}
    prefix = "[progress report of tool call "
    for m in payload["messages"]:
        content = m["content"]
        texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
        for text in texts:
            if isinstance(text, str) and text.startswith(prefix):
                label, _, body = text.partition("\n")
                out.setdefault(label.removeprefix(prefix).partition(";")[0], []).append(body)
    return out


def _calls(payload: dict[str, Any], provider: str) -> list[str]:
    ids: list[str] = []
    for m in payload["messages"]:
        if provider == "openai":
            ids.extend(c["id"] for c in m.get("tool_calls") or ())
        elif not isinstance(m["content"], str):
            ids.extend(b["id"] for b in m["content"] if b.get("type") == "tool_use")
    return ids


def _check(payload: dict[str, Any], provider: str) -> None:
    problems = check_openai_chat(payload) if provider == "openai" else check_anthropic(payload)
    assert problems == []
    results = _results(payload, provider)
    for cid in _calls(payload, provider):
        assert len(results.get(cid, [])) == 1, cid


# ----- the content model ---------------------------------------------------------------------


def test_progress_result_keeps_its_group_open() -> None:
    messages = [
        Message.user("build it"),
        Message.assistant("starting", [ToolUse("c1", "build", {})]),
        Message.tool([ToolResult("c1", "status: running, job 7", final=False)]),
    ]
    grouping = group_messages(messages)
    assert grouping.open_groups == ("g:c1",)
    assert grouping.group_of(2).id == "g:c1"
    done = group_messages([*messages, Message.tool([ToolResult("c1", "built")])])
    assert done.open_groups == ()
    assert done.group_of(3).id == "g:c1"


def test_final_result_encodes_as_before_and_progress_flag_is_kept() -> None:
    from regio.content import canonical_json

    assert b"final" not in canonical_json(ToolResult("c1", "x"))
    assert ToolResult("c1", "x", final=True) == ToolResult("c1", "x")
    progress = ToolResult("c1", "x", final=False)
    assert not progress.is_final and ToolResult("c1", "x").is_final
    assert b'"final":false' in canonical_json(progress)


def test_non_boolean_final_is_refused_naming_the_call() -> None:
    with pytest.raises(ContentTypeError, match=r"'c1'.*final"):
        ToolResult("c1", "x", final="no")  # type: ignore[arg-type]


# ----- rendering -----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_latest_of_two_results_is_rendered_once(provider: str) -> None:
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("run the job")
    engine.add_assistant("ok", [ToolUse("c1", "job", {})])
    engine.add_tool_result("c1", "first answer")
    engine.add_tool_result("c1", "second answer")
    _req, payload = engine.request(provider)
    _check(payload, provider)
    assert _results(payload, provider)["c1"] == ["second answer"]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_final_result_replaces_progress_across_requests(provider: str) -> None:
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("run the job")
    engine.add_assistant("ok", [ToolUse("c1", "job", {})])
    engine.add_tool_result("c1", "status: running, job 7", final=False)
    _req, payload = engine.request(provider)
    _check(payload, provider)
    assert _results(payload, provider)["c1"] == [RUNNING_RESULT]  # the report follows it
    assert "status: running, job 7" in json.dumps(payload["messages"][-1])
    engine.add_user("is it done?")  # the job is still running when the user speaks
    engine.add_assistant("polling", [ToolUse("c2", "poll", {"job": 7})])
    engine.add_tool_result("c2", "job 7 still running")
    _req, payload = engine.request(provider)
    _check(payload, provider)
    engine.add_tool_result("c1", "job 7 finished: 3 files built")
    _req, payload = engine.request(provider)
    _check(payload, provider)
    assert _results(payload, provider)["c1"] == ["job 7 finished: 3 files built"]


def test_progress_flag_survives_save_and_load(tmp_path: Any) -> None:
    for suffix in ("json", "msgpack"):
        engine = Engine.from_blueprint(BLUEPRINT)
        engine.add_user("run the job")
        engine.add_assistant("ok", [ToolUse("c1", "job", {})])
        engine.add_tool_result("c1", "status: running", final=False)
        before = json.dumps(engine.request()[1], sort_keys=True)
        loaded = Engine.load(engine.save(tmp_path / f"state.{suffix}"))
        blocks = [b for e in loaded.window.conversation.entries for b in e.blocks]
        result = next(b for b in blocks if isinstance(b, ToolResult))
        assert result.final is False
        assert loaded.window.conversation.analysis().open_groups == ("g:c1",)
        assert json.dumps(loaded.request()[1], sort_keys=True) == before


def test_agent_tool_outcome_can_report_progress() -> None:
    result = UserToolOutcome("status: running, job 9", final=False).result("c9")
    assert result == ToolResult("c9", "status: running, job 9", final=False)
    assert UserToolOutcome("done").result("c9").is_final


# ----- never compacted or evicted apart ------------------------------------------------------


def _group_entry_ids(engine: Engine, call_id: str) -> set[str]:
    conv = engine.window.conversation
    out = set()
    for e in conv.entries:
        for b in e.blocks:
            if (isinstance(b, ToolUse) and b.id == call_id) or (
                isinstance(b, ToolResult) and b.tool_use_id == call_id
            ):
                out.add(e.id)
    return out


def test_open_progress_group_is_never_compacted() -> None:
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("start the long build")
    engine.add_assistant("starting", [ToolUse("c1", "build", {})])
    engine.add_tool_result("c1", "status: running, job 1", final=False)
    held = _group_entry_ids(engine, "c1")
    for n in range(30):
        engine.add_user(f"meanwhile question {n} " + "word " * 60)
        engine.add_assistant(f"answer {n} " + "word " * 60)
        engine.request()
    assert engine.window.region("history").entries  # compaction ran
    assert _group_entry_ids(engine, "c1") == held
    engine.compact(keep_tokens=0)
    assert _group_entry_ids(engine, "c1") == held
    engine.compact(keep_messages=1)  # a kept tail never cuts into the open group
    assert _group_entry_ids(engine, "c1") == held
    engine.add_tool_result("c1", "build finished")
    engine.compact(keep_tokens=0)
    assert _group_entry_ids(engine, "c1") == set()  # closed: now it may be summarized


def test_open_progress_group_is_never_evicted() -> None:
    engine = Engine.from_blueprint(PER_ITEM)
    engine.add_user("start the long build")
    engine.add_assistant("starting", [ToolUse("c1", "build", {})])
    engine.add_tool_result("c1", "status: running", final=False)
    held = _group_entry_ids(engine, "c1")
    for n in range(12):
        engine.add_user(f"question {n}")
        engine.add_assistant(f"answer {n}")
    assert _group_entry_ids(engine, "c1") == held
    _req, payload = engine.request()
    _check(payload, "anthropic")


# ----- property: any interleaving of calls, progress and final results ------------------------

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 80)),
        st.tuples(st.just("call"), st.integers(1, 2)),
        st.tuples(st.just("progress"), st.integers(0, 5)),
        st.tuples(st.just("final"), st.integers(0, 5)),
        st.tuples(st.just("request"), st.sampled_from(["anthropic", "openai"])),
    ),
    max_size=30,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(ops=_OPS)
def test_every_call_renders_its_latest_result_once(ops: list[tuple[str, Any]]) -> None:
    """After any sequence, in both payload shapes: well formed, one result per call, the
    latest result of each call rendered, a call without a final result keeps its group open
    and in the window, and a fresh render log renders the same messages as the one reused at
    every step."""
    engine = Engine.from_blueprint(BLUEPRINT)
    calls: list[str] = []
    latest: dict[str, str] = {}
    finished: set[str] = set()
    running: set[str] = set()  # the calls whose latest result is a progress report

    def add(message: Message) -> None:
        engine.add_message(message)

    add(Message.user("begin"))
    for n, (op, arg) in enumerate(ops, 1):
        if op == "user":
            add(Message.user(f"user {n} " + "word " * arg))
        elif op == "call":
            ids = [f"c{n}_{i}" for i in range(arg)]
            calls.extend(ids)
            add(Message.assistant(f"calling {n}", [ToolUse(i, "job", {}) for i in ids]))
        elif op in ("progress", "final") and calls:
            cid = calls[arg % len(calls)]
            text = f"{op} {n} of {cid}"
            add(Message.tool([ToolResult(cid, text, final=op == "final")]))
            latest[cid] = text
            if op == "final":
                finished.add(cid)
                running.discard(cid)
            else:
                running.add(cid)
        elif op == "request":
            _req, payload = engine.request(arg)
            _check(payload, arg)
    for cid in calls:
        if cid not in finished:  # an open group is never summarized or evicted away
            assert call_is_open(engine, cid), cid
    for provider in ("anthropic", "openai"):
        _req, payload = engine.request(provider)
        _check(payload, provider)
        rendered = _results(payload, provider)
        reports = _reports(payload)
        for cid in _calls(payload, provider):
            if cid in running:  # the call's bytes stay; the latest report is shown apart
                assert rendered[cid] == [RUNNING_RESULT], cid
                assert reports[cid] == [latest[cid]], cid
            elif cid in latest:
                assert rendered[cid] == [latest[cid]], cid
        assert set(reports) <= running
        # the incremental render (a front reused across requests) equals a fresh one
        engine.render_log = RenderLog()
        _req, again = engine.request(provider)
        assert _unmarked(again) == _unmarked(payload)


def _unmarked(payload: dict[str, Any]) -> str:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(payload["messages"]), sort_keys=True)


# ----- MCP progress notifications ------------------------------------------------------------


def test_mcp_progress_notification_becomes_a_progress_report() -> None:
    from regio.sdk._progress import mcp_progress_result

    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "abc", "progress": 50, "total": 100, "message": "indexing"},
    }
    assert mcp_progress_result("c1", note) == ToolResult(
        "c1", "progress 50/100: indexing", final=False
    )
    assert mcp_progress_result("c1", {"progress": 0.5}).content == "progress 0.5"
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("index the repo")
    engine.add_assistant("ok", [ToolUse("c1", "index", {})])
    engine.add_message(Message.tool([mcp_progress_result("c1", note)]))
    assert engine.window.conversation.analysis().open_groups == ("g:c1",)


@pytest.mark.parametrize(
    "bad",
    [
        {"method": "tools/call", "params": {"progress": 1}},
        {"params": {"total": 3}},
        {"progress": "half"},
        {"progress": True},
        ["progress", 1],
    ],
)
def test_malformed_mcp_progress_is_refused_naming_the_field(bad: Any) -> None:
    from regio.sdk._objects import SDKInputError
    from regio.sdk._progress import mcp_progress_result

    with pytest.raises(SDKInputError, match="MCP progress"):
        mcp_progress_result("c1", bad)
