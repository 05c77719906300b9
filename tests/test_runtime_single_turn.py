"""A single-task agent run is one user turn of many tool calls: the engine can still compact it
(manual, threshold and overflow recovery), keeping the task message and open calls; and a saved
engine carries its blueprint with seed files inlined."""

from __future__ import annotations

import json
from pathlib import Path

from regio.content import ToolUse
from regio.engine import Engine
from regio.layout import check_anthropic, check_openai_chat
from regio.regions import CompactHistory, Pinned, SlidingWindow
from regio.summarizers import ExtractiveSummarizer
from runtime_stubs import StubSummarizer, make_engine, words


def _loop_engine(stub: StubSummarizer, **options: object) -> Engine:
    return make_engine(
        [
            Pinned(name="S", budget=100),
            CompactHistory(name="hist", budget=2_000, source="conversation"),
            SlidingWindow(name="conversation", budget=60_000),
        ],
        summarizer=stub,
        max_tokens=100_000,
        **options,
    )  # type: ignore[arg-type]


def _run_loop(engine: Engine, rounds: int) -> None:
    engine.add_user(words(40, "task"), tokens=40)
    for i in range(rounds):
        engine.add_assistant("", [ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})], tokens=20)
        engine.add_tool_result(f"c{i}", words(200, f"out{i}_"), tokens=200)
    engine.add_assistant("", [ToolUse("open", "bash", {"cmd": "make test"})], tokens=20)


def test_a_single_turn_tool_loop_is_compacted_on_demand_keeping_the_task_and_open_call() -> None:
    stub = StubSummarizer(50)
    engine = _loop_engine(stub)
    _run_loop(engine, 100)
    conv = engine.window.region("conversation")
    task, pending = conv.entries[0], conv.entries[-1]
    result = engine.compact(keep_tokens=0)
    assert result is not None and len(result.replaced_ids) == 200
    assert conv.entries == [task, pending]
    assert task.id not in {e.id for inp in stub.inputs for e in inp}
    engine.add_tool_result("open", "all green", tokens=3)
    _, a = engine.request("anthropic", "claude-sonnet-4-5")
    _, o = engine.request("openai", "gpt-4o")
    assert check_anthropic(a) == [] and check_openai_chat(o) == []


def test_overflow_recovery_frees_tokens_inside_one_long_turn() -> None:
    stub = StubSummarizer(50)
    engine = _loop_engine(stub, context_window=40_000, output_reserve=0)
    _run_loop(engine, 100)
    before = engine.window.used_tokens
    error = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {before + 500} tokens > 40000 maximum",
        },
        "status_code": 400,
    }
    token = engine.recover_overflow(error)
    assert token is not None and token.tokens_after <= engine.limit
    assert engine.window.used_tokens <= engine.limit // 2 < before  # half the allowance
    conv = engine.window.region("conversation")
    assert conv.entries[0].role == "user" and conv.entries[-1].message.tool_calls


def test_a_saved_engine_stores_its_blueprint_with_seed_files_inlined(tmp_path: Path) -> None:
    engine = Engine.from_blueprint(
        "examples/blueprints/support-agent.yaml", summarizer=ExtractiveSummarizer()
    )
    path = engine.save(tmp_path / "state.json")
    text = json.loads(path.read_text())["config"]["blueprint_text"]
    policy = Path("examples/blueprints/support-agent/policy.md").read_text().strip()
    assert "policy.md" not in text and policy.splitlines()[0] in text
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "bp.yaml").write_text(text)
    moved = Engine.from_blueprint(elsewhere / "bp.yaml", summarizer=ExtractiveSummarizer())
    assert [r.name for r in moved.window.regions] == [r.name for r in engine.window.regions]
    loaded = Engine.load(path)
    assert loaded.request()[1] == engine.request()[1]
