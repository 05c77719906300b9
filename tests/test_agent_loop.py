"""Acceptance tests of the agent loop with the scripted provider (offline)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.agent import (
    AgentConfigError,
    AgentLoop,
    LoopPricing,
    ProviderHTTPError,
    ScriptedProvider,
    Tool,
    reply,
)
from regio.agent.providers import INVALID_ARGUMENTS_KEY
from regio.content import ToolUse
from regio.engine._engine import Engine
from regio.errors import ContextOverflowError

BLUEPRINT = """
version: 1
name: agent-test
model: {provider: openai, name: gpt-4o, context_window: 8000, max_output_tokens: 500}
tokenizer: o200k_base
layout: {strategy: regio}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: You are a careful agent.}
  - {name: notes, kind: keyed, volatility: rewritten, budget: 60, admission: reject}
  - {name: log, kind: temporary, volatility: grows, budget: 1500}
  - {name: history, kind: compact_history, source: conversation, volatility: grows, budget: 1500}
  - name: conversation
    kind: sliding_window
    budget: 5000
    max_items: MAX_ITEMS
    eviction: {strategy: compact, compact_count: COMPACT_COUNT}
"""


def make_engine(max_items: int = 200, compact_count: int = 20) -> Engine:
    text = BLUEPRINT.replace("MAX_ITEMS", str(max_items)).replace(
        "COMPACT_COUNT", str(compact_count)
    )
    return Engine.from_blueprint(text)


def add_tool() -> Tool:
    return Tool(
        "add",
        "Add two numbers.",
        {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        lambda a, b: a + b,
    )


def look_tool(size: int = 150) -> Tool:
    counter = itertools.count()
    return Tool(
        "look",
        "Show a file.",
        {"type": "object", "properties": {}},
        lambda: f"file {next(counter)}: " + "alpha beta " * size,
    )


def overflow_error(reported: int, maximum: int) -> ProviderHTTPError:
    return ProviderHTTPError(
        400,
        {
            "error": {
                "code": "context_length_exceeded",
                "message": f"This model's maximum context length is {maximum} tokens. However, "
                f"your messages resulted in {reported} tokens.",
            }
        },
    )


def tool_messages(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in payload["messages"] if m["role"] == "tool"]


def test_a_tool_calling_loop_runs_tools_feeds_results_back_and_stops_on_the_final_answer():
    engine = make_engine()
    provider = ScriptedProvider(
        [
            reply("", [("c1", "add", {"a": 1, "b": 2})], prompt_tokens=400, output_tokens=9),
            reply("It is 3.", prompt_tokens=430, cached_tokens=400, output_tokens=4),
        ]
    )
    seen: list[str] = []
    engine.subscribe(lambda e: seen.append(e.kind) if e.kind.startswith(("step", "run")) else None)
    result = AgentLoop(engine, provider, [add_tool()]).run("What is 1 + 2?")

    assert result.stop_reason == "final_answer"
    assert result.final_text == "It is 3."
    assert [s.tool_calls for s in result.steps] == [("add",), ()]
    assert (result.usage.prompt_tokens, result.usage.cached_tokens) == (830, 400)
    assert result.usage.output_tokens == 13
    assert tool_messages(provider.calls[1]) == [
        {"role": "tool", "tool_call_id": "c1", "content": "3"}
    ]
    assert seen == [
        "step_started",
        "step_completed",
        "step_started",
        "step_completed",
        "run_finished",
    ]
    # the engine saw the usage of both calls
    assert [r.prompt_tokens for r in engine.ledger.records] == [400, 430]


def test_parallel_tool_calls_are_all_answered_in_order_before_the_next_request():
    engine = make_engine()
    calls = [
        ("p1", "add", {"a": 1, "b": 1}),
        ("p2", "add", {"a": 2, "b": 2}),
        ("p3", "context_list", {}),
    ]
    provider = ScriptedProvider(
        [reply("", calls, prompt_tokens=100), reply("2, 4 and the regions.", prompt_tokens=150)]
    )
    result = AgentLoop(engine, provider, [add_tool()]).run("Add twice and list regions.")

    assert result.steps[0].tool_calls == ("add", "add", "context_list")
    messages = provider.calls[1]["messages"]
    assistant = next(i for i, m in enumerate(messages) if m.get("tool_calls"))
    answered = [m["tool_call_id"] for m in messages[assistant + 1 : assistant + 4]]
    assert answered == ["p1", "p2", "p3"]
    contents = [m["content"] for m in messages[assistant + 1 : assistant + 3]]
    assert contents == ["2", "4"]
    assert "notes" in messages[assistant + 3]["content"]  # context_list names the regions


def test_a_refused_context_write_comes_back_as_instructive_text_and_the_loop_continues():
    engine = make_engine()
    before = list(engine.window.region("notes").entries)
    too_big = "word " * 200  # far over the 60-token reject region
    provider = ScriptedProvider(
        [
            reply("", [("w1", "context_write", {"region": "notes", "key": "k", "text": too_big})]),
            reply("", [("w2", "context_write", {"region": "notes", "key": "k", "text": "short"})]),
            reply("Saved a short note instead."),
        ]
    )
    result = AgentLoop(engine, provider, []).run("Remember this.")

    assert result.stop_reason == "final_answer"
    refusal = tool_messages(provider.calls[1])[0]["content"]
    assert "notes" in refusal and "60" in refusal  # names the region and its budget
    assert engine.window.region("notes").entries[0].text.endswith("short")
    assert len(before) == 0 and len(engine.window.region("notes").entries) == 1


def test_a_compaction_queued_mid_session_is_flushed_at_the_next_turn_boundary():
    engine = make_engine(max_items=6, compact_count=4)
    look = look_tool(150)
    order: list[str] = []
    engine.subscribe(
        lambda e: (
            order.append(e.kind)
            if e.kind in ("step_started", "compaction_finished", "compaction_queued")
            else None
        )
    )
    for task in range(3):
        script = [reply("", [(f"t{task}c{i}", "look", {})], prompt_tokens=300) for i in range(2)]
        script.append(reply(f"done {task}", prompt_tokens=300))
        result = AgentLoop(engine, ScriptedProvider(script), [look]).run(f"task {task}")
        assert result.stop_reason == "final_answer"

    assert "compaction_finished" in order
    finished = order.index("compaction_finished")
    assert order[finished + 1] == "step_started"  # flushed right before a request
    assert engine.window.region("history").entries, "the summary went to the history region"
    # the full transcript keeps every message although the prompt view was compacted
    assert len(engine.transcript()) > len(engine.window.region("conversation").entries)


def _fill(engine: Engine, turns: int = 4) -> None:
    look = look_tool()
    for task in range(turns):
        script = [reply("", [(f"t{task}c{i}", "look", {})], prompt_tokens=500) for i in range(3)]
        script.append(reply(f"done {task}", prompt_tokens=500))
        AgentLoop(engine, ScriptedProvider(script), [look]).run(f"task {task}")


def test_an_overflow_refusal_compacts_once_and_the_retry_succeeds():
    engine = make_engine()
    _fill(engine)
    used_before = engine.window.used_tokens

    def refuse(payload: dict[str, Any]) -> ProviderHTTPError:
        return overflow_error(int(engine.state.last_estimate * 1.05), 3000)

    provider = ScriptedProvider([refuse, reply("ok", prompt_tokens=200)])
    result = AgentLoop(engine, provider, []).run("one more task")

    assert result.stop_reason == "final_answer"
    assert result.steps[0].overflow_retries == 1
    assert engine.events.of_kind("overflow_recovered")
    assert engine.window.used_tokens < used_before
    assert len(provider.calls[1]["messages"]) < len(provider.calls[0]["messages"])


def test_a_second_overflow_refusal_raises_with_the_numbers():
    engine = make_engine()
    _fill(engine)

    def refuse(payload: dict[str, Any]) -> ProviderHTTPError:
        return overflow_error(int(engine.state.last_estimate * 1.05), 3000)

    provider = ScriptedProvider([refuse, refuse])
    with pytest.raises(ContextOverflowError) as caught:
        AgentLoop(engine, provider, []).run("one more task")
    assert caught.value.maximum == 3000
    assert caught.value.reported is not None
    assert len(provider.calls) == 2


def test_a_provider_error_that_is_not_an_overflow_propagates_unchanged():
    engine = make_engine()
    rate_limited = ProviderHTTPError(429, {"error": {"message": "rate limited"}})
    with pytest.raises(ProviderHTTPError) as caught:
        AgentLoop(engine, ScriptedProvider([rate_limited]), []).run("task")
    assert caught.value is rate_limited
    assert not engine.events.of_kind("overflow_recovered")


def test_the_step_limit_stops_a_loop_that_never_answers():
    engine = make_engine()
    script = [reply("", [(f"c{i}", "add", {"a": i, "b": 0})], prompt_tokens=10) for i in range(5)]
    result = AgentLoop(engine, ScriptedProvider(script), [add_tool()], max_steps=3).run("loop")
    assert result.stop_reason == "max_steps"
    assert len(result.steps) == 3


def test_the_prompt_token_budget_stops_the_run_before_it_is_overspent():
    engine = make_engine()
    script = [reply("", [(f"c{i}", "add", {"a": i, "b": 0})], prompt_tokens=1000) for i in range(5)]
    result = AgentLoop(engine, ScriptedProvider(script), [add_tool()], max_prompt_tokens=2500).run(
        "loop"
    )
    assert result.stop_reason == "max_prompt_tokens"
    assert result.usage.prompt_tokens <= 2500


def test_the_usd_budget_stops_the_run_and_prices_every_step():
    engine = make_engine()
    script = [
        reply(
            "",
            [(f"c{i}", "add", {"a": i, "b": 0})],
            prompt_tokens=500,
            cached_tokens=250,
            output_tokens=10,
        )
        for i in range(5)
    ]
    pricing = LoopPricing(input=300.0, output=1500.0, cached=30.0)
    loop = AgentLoop(engine, ScriptedProvider(script), [add_tool()], max_usd=0.15, pricing=pricing)
    result = loop.run("loop")
    assert result.stop_reason == "max_usd"
    per_step = (250 * 300.0 + 250 * 30.0 + 10 * 1500.0) / 1e6
    assert result.steps[0].cost_usd == pytest.approx(per_step)
    assert len(result.steps) == 2  # 0.0975 after one step, 0.195 >= 0.15 after two
    assert result.usage.cost_usd == pytest.approx(2 * per_step)


def test_unknown_tools_and_bad_arguments_come_back_as_error_results():
    engine = make_engine()
    bad_json = ToolUse("b1", "add", {INVALID_ARGUMENTS_KEY: "{oops"})
    provider = ScriptedProvider(
        [
            reply("", [("u1", "no_such_tool", {}), bad_json, ("m1", "add", {"a": 1})]),
            reply("giving up"),
        ]
    )
    result = AgentLoop(engine, provider, [add_tool()]).run("task")
    contents = [m["content"] for m in tool_messages(provider.calls[1])]
    assert "no tool named 'no_such_tool'" in contents[0] and "add" in contents[0]
    assert "not a valid JSON object" in contents[1]
    assert "missing required argument(s) b" in contents[2]
    assert result.stop_reason == "final_answer"


def test_a_tool_that_raises_does_not_stop_the_loop():
    engine = make_engine()

    def broken() -> str:
        raise RuntimeError("disk on fire")

    tool = Tool("broken", "Always fails.", {"type": "object", "properties": {}}, broken)
    provider = ScriptedProvider([reply("", [("x1", "broken", {})]), reply("noted")])
    result = AgentLoop(engine, provider, [tool]).run("task")
    assert "disk on fire" in tool_messages(provider.calls[1])[0]["content"]
    assert result.final_text == "noted"


def test_a_user_tool_may_not_shadow_a_context_tool():
    with pytest.raises(AgentConfigError, match="context_write"):
        AgentLoop(
            make_engine(),
            ScriptedProvider([]),
            [Tool("context_write", "x", {"type": "object"}, lambda: "")],
        )
    with pytest.raises(AgentConfigError, match="pricing"):
        AgentLoop(make_engine(), ScriptedProvider([]), [], max_usd=1.0)


def test_user_tools_are_sent_after_the_context_tools():
    engine = make_engine()
    provider = ScriptedProvider([reply("done")])
    AgentLoop(engine, provider, [add_tool()]).run("task")
    names = [t["function"]["name"] for t in provider.calls[0]["tools"]]
    assert names[-1] == "add" and "context_write" in names


def test_the_async_loop_awaits_async_tools_and_gives_the_same_result():
    engine = make_engine()

    async def slow_add(a: float, b: float) -> float:
        await asyncio.sleep(0)
        return a + b

    tool = Tool(
        "add", "Add.", {"type": "object", "properties": {}, "required": ["a", "b"]}, slow_add
    )
    provider = ScriptedProvider(
        [reply("", [("c1", "add", {"a": 2, "b": 5})], prompt_tokens=10), reply("7")]
    )
    result = asyncio.run(AgentLoop(engine, provider, [tool]).arun("2 + 5?"))
    assert result.final_text == "7"
    assert tool_messages(provider.calls[1])[0]["content"] == "7"


class _Predictor:
    def __init__(self) -> None:
        self.seen = 0

    def predict(self, request: Any, payload: dict[str, Any], completion: Any) -> int:
        self.seen += 1
        return 100 * self.seen


def test_an_attached_predictor_fills_the_predicted_cached_tokens_of_each_step():
    engine = make_engine()
    provider = ScriptedProvider([reply("", [("c1", "add", {"a": 1, "b": 1})]), reply("2")])
    result = AgentLoop(engine, provider, [add_tool()], predictor=_Predictor()).run("1+1")
    assert [s.predicted_cached_tokens for s in result.steps] == [100, 200]
    completed = engine.events.of_kind("step_completed")
    assert [e.predicted_cached_tokens for e in completed] == [100, 200]


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(st.integers(min_value=0, max_value=3), min_size=0, max_size=5),
    prompt=st.integers(min_value=0, max_value=5000),
)
def test_every_tool_call_is_answered_before_the_next_request(turns, prompt):
    engine = make_engine()
    script = [
        reply(
            "", [(f"s{n}c{k}", "add", {"a": k, "b": n}) for k in range(calls)], prompt_tokens=prompt
        )
        if calls
        else reply(f"thinking {n}", [("z" + str(n), "add", {"a": 0, "b": 0})], prompt_tokens=prompt)
        for n, calls in enumerate(turns)
    ]
    script.append(reply("final", prompt_tokens=prompt))
    provider = ScriptedProvider(script)
    result = AgentLoop(engine, provider, [add_tool()], max_steps=20).run("go")

    assert result.stop_reason == "final_answer"
    assert len(result.steps) == len(script)
    assert result.usage.prompt_tokens == prompt * len(script)
    for payload in provider.calls:
        pending: set[str] = set()
        for message in payload["messages"]:
            if message["role"] == "assistant":
                assert not pending, "a tool call was left unanswered"
                pending = {c["id"] for c in message.get("tool_calls") or []}
            elif message["role"] == "tool":
                pending.discard(message["tool_call_id"])
        assert not pending
