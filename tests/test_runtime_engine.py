"""Engine basics: writes, conversation, requests, observe, tools, events."""

from __future__ import annotations

import pytest

from regio.content import ToolUse
from regio.engine import Engine
from regio.layout import check_anthropic, check_openai_chat
from regio.regions import (
    Checklist,
    CompactHistory,
    Compacting,
    Keyed,
    Pinned,
    SlidingWindow,
    Temporary,
)
from runtime_stubs import StubSummarizer, make_engine, words


def _engine(**options: object) -> Engine:
    regions = [
        Pinned(name="system", budget=500, volatility="stable"),
        Keyed(name="facts", budget=300),
        Checklist(name="plan", budget=300),
        Temporary(name="scratch", budget=300),
        Compacting(name="notes", budget=400, threshold_tokens=300),
        CompactHistory(name="notes_history", budget=400, source="notes"),
        SlidingWindow(name="conversation", budget=5_000),
    ]
    engine = make_engine(regions, max_tokens=8_000, **options)  # type: ignore[arg-type]
    engine.write("system", "You are a careful agent.")
    return engine


def test_a_request_renders_for_anthropic_and_openai_from_the_same_state() -> None:
    engine = _engine()
    engine.add_user("read a.py")
    engine.add_assistant("", [ToolUse("c1", "read_file", {"path": "a.py"})])
    engine.add_tool_result("c1", "print('hi')")
    _, anthropic = engine.request("anthropic", "claude-sonnet-4-5")
    _, openai = engine.request("openai", "gpt-4o")
    assert check_anthropic(anthropic) == []
    assert check_openai_chat(openai) == []
    assert "tools" in anthropic and any(t["name"] == "context_write" for t in anthropic["tools"])


def test_observe_calibrates_from_reported_prompt_tokens_and_records_usage() -> None:
    engine = _engine()
    engine.add_user(words(100))
    req, _ = engine.request()
    reported = int(engine.state.last_estimate * 1.5)
    record = engine.observe({"input_tokens": reported, "output_tokens": 5})
    assert (
        record.prompt_tokens == reported and record.estimated_tokens == engine.state.last_estimate
    )
    assert engine.calibration.factor(engine.budget.calibration_key()) == pytest.approx(
        1.5, abs=0.01
    )
    assert engine.events.of_kind("usage_observed") and engine.events.of_kind("calibration_updated")
    assert req.tokens > 0


def test_the_ceiling_subtracts_output_reserve_tool_schemas_and_overhead() -> None:
    engine = _engine(context_window=6_000, output_reserve=1_000)
    assert engine.limit == 5_000
    assert engine.budget.tools_tokens() > 0
    assert engine.ceiling() == 5_000 - engine.budget.tools_tokens() - engine.budget.system_overhead


def test_a_refused_tool_write_returns_instructive_text_not_an_exception() -> None:
    engine = _engine()
    engine.handle_tool_call("context_write", {"region": "scratch", "text": words(200)})
    out = engine.handle_tool_call("context_write", {"region": "system", "text": "x"})
    assert not out.ok and "not writable" in out.text and "facts" in out.text
    big = engine.handle_tool_call("context_write", {"region": "facts", "text": words(400)})
    assert not big.ok and "larger than the whole region" in big.text


def test_tool_mistakes_never_raise() -> None:
    engine = _engine()
    for name, args in [
        ("nope", {}),
        ("context_read", {"region": "missing"}),
        ("context_delete", {"region": "facts"}),
        ("todo_done", {"item_id": "9"}),
        ("context_write", "{not json"),
        ("context_read", {"region": "facts", "key": "k"}),
    ]:
        out = engine.handle_tool_call(name, args)
        assert not out.ok and out.text


def test_context_tools_write_read_list_delete_and_todos() -> None:
    engine = _engine()
    assert engine.handle_tool_call(
        "context_write", {"region": "facts", "key": "host", "text": "db-07.internal"}
    ).ok
    assert engine.handle_tool_call("context_read", {"region": "facts", "key": "host"}).text == (
        "db-07.internal"
    )
    assert "facts (keyed, writable)" in engine.handle_tool_call("context_list", {}).text
    added = engine.handle_tool_call("todo_add", {"text": "write tests"})
    assert added.ok and engine.handle_tool_call("todo_done", {"item_id": added.data["item_id"]}).ok
    assert engine.handle_tool_call(
        "todo_note", {"item_id": added.data["item_id"], "note": "done in t.py"}
    ).ok
    out = engine.handle_tool_call("context_delete", {"region": "facts", "key": "host"})
    assert out.ok and engine.window.region("facts").entries == []
    assert [s.name for s in engine.tools()][:2] == ["context_write", "context_append"]


def test_the_compact_tool_schedules_and_the_next_request_flushes_with_its_instructions() -> None:
    summarizer = StubSummarizer(5)
    engine = _engine(summarizer=summarizer)
    for i in range(4):
        engine.write("notes", words(60, f"n{i}_"))
    engine.add_user("go on")
    out = engine.handle_tool_call("compact", {"instructions": "keep the port numbers"})
    assert out.ok and summarizer.inputs == []
    engine.request()
    assert summarizer.extras == ["keep the port numbers"]


def test_subscribers_receive_runtime_events() -> None:
    seen: list[str] = []
    engine = _engine()
    engine.subscribe(lambda e: seen.append(e.kind))
    engine.add_user("hi")
    engine.request()
    engine.observe(None)
    assert "written" in seen and "usage_observed" in seen


def test_from_blueprint_builds_a_working_engine() -> None:
    engine = Engine.from_blueprint("examples/blueprints/coding-agent.yaml")
    assert engine.options.provider == "anthropic" and engine.options.output_reserve > 0
    scratch = engine.window.region("scratch")
    assert 0 < engine.options.targets["scratch"] < scratch.trigger_tokens  # type: ignore[attr-defined]
    engine.add_user("Fix the bug in src/app.py")
    req, payload = engine.request()
    assert payload["model"] == "claude-sonnet-4-6" and req.tokens < engine.limit
