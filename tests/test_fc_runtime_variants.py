""" "Also cover" variants of field cases FC-06 (clearable below its trigger), FC-15 (a batch of
keyed writes is all or nothing), FC-18 (CJK / JSON-heavy content, schemas and arguments counted,
per provider+model calibration through the Engine), plus context-tool argument validation and
the orphan-tool-result warning."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.engine import Engine
from regio.engine._tools import TOOL_NAMES
from regio.layout import ToolSpec
from regio.policies.relief import ReliefPolicy
from regio.regions import Checklist, Clearable, Keyed, Pinned, Refusal, SlidingWindow, Temporary
from regio.tokens import HeuristicCounter
from runtime_stubs import StubSummarizer, make_engine, words


# --- FC-06 also cover: a clearable region below its trigger ----------------------------
def _clearable_engine() -> Engine:
    return make_engine(
        [
            Pinned(name="S", budget=100),
            Clearable(name="scratch", budget=2_000),
            SlidingWindow(name="conversation", budget=9_500),
        ],
        max_tokens=10_000,  # reclaim (phase 1 wipes clearable) fires at 90% = 9,000
    )


def _fill_scratch(engine: Engine) -> None:
    for i in range(5):
        engine.write("scratch", words(100, f"tool_output{i}_"))
    engine.add_user("question")


def test_fc_06_a_clearable_region_below_its_trigger_applies_no_placeholders() -> None:
    engine = _clearable_engine()
    _fill_scratch(engine)
    scratch = engine.window.region("scratch")
    before = (list(scratch.entries), scratch.content_hash(), scratch.version)
    _, first = engine.request("anthropic", "m")
    mark = len(engine.events.history)
    for _ in range(2):
        assert engine.flush() is None
        engine.window.reclaim()
    _, second = engine.request("anthropic", "m")
    assert (list(scratch.entries), scratch.content_hash(), scratch.version) == before
    assert first == second
    kinds = {e.kind for e in engine.events.history[mark:]}
    assert not kinds & {"cleared", "evicted", "reclaimed", "compaction_completed"}


def test_fc_06_the_same_clearable_region_over_its_trigger_is_wiped() -> None:
    # the control: the check above can fail, because over the trigger the region does change
    engine = _clearable_engine()
    _fill_scratch(engine)
    engine.write("conversation", words(8_600, "big"), strict=True)
    assert engine.window.region("scratch").entries == []


# --- FC-15 also cover: a batch of keyed operations is all or nothing --------------------
def _keyed_engine() -> Engine:
    return make_engine(
        [Keyed(name="facts", budget=200, admission="reject", max_entry_tokens=50)],
        max_tokens=1_000,
    )


def test_fc_15_a_batch_with_one_refused_write_changes_nothing() -> None:
    engine = _keyed_engine()
    engine.write("facts", "likes spicy food", key="food.spicy")
    facts = engine.window.region("facts")
    before = (list(facts.entries), facts.content_hash(), facts.version)
    mark = len(engine.events.history)
    out = engine.window.write_many(
        "facts",
        [
            ("food.spicy", "dislikes spicy food"),
            ("project.deadline", "2025-03-14"),
            ("too.long", words(60)),  # over the 50-token entry limit
        ],
    )
    assert isinstance(out, Refusal) and out.reason == "entry_limit"
    assert (list(facts.entries), facts.content_hash(), facts.version) == before
    assert engine.events.history[mark:] == []
    assert engine.window.pending_compactions() == []


def test_fc_15_an_admitted_batch_applies_every_write_with_its_events() -> None:
    engine = _keyed_engine()
    engine.write("facts", "likes spicy food", key="food.spicy")
    mark = len(engine.events.history)
    out = engine.window.write_many(
        "facts", [("food.spicy", "dislikes spicy food"), ("project.deadline", "2025-03-14")]
    )
    assert isinstance(out, list) and len(out) == 2 and out[0].replaced
    facts = engine.window.region("facts")
    assert {e.key: e.text for e in facts.entries} == {
        "food.spicy": "dislikes spicy food",
        "project.deadline": "2025-03-14",
    }
    assert len(engine.events.history) > mark


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(1, 70)), min_size=1, max_size=6))
def test_fc_15_batches_are_all_or_nothing_for_any_mix(writes: list[tuple[str, int]]) -> None:
    engine = _keyed_engine()
    engine.write("facts", words(10, "seed"), key="a")
    facts = engine.window.region("facts")
    before = (list(facts.entries), facts.content_hash(), facts.version)
    history = list(engine.events.history)
    out = engine.window.write_many("facts", [(k, words(n, k)) for k, n in writes])
    if isinstance(out, Refusal):
        assert (list(facts.entries), facts.content_hash(), facts.version) == before
        assert engine.events.history == history
    else:
        expected = {"a": words(10, "seed")} | {k: words(n, k) for k, n in writes}
        assert {e.key: e.text for e in facts.entries} == expected


# --- FC-18 also cover -------------------------------------------------------------------
CJK = "上下文窗口的压缩必须保持工具调用完整。" * 40
JSON_ARGS = {"path": "src/app/main.py", "edits": [{"line": i, "text": f"x_{i}"} for i in range(40)]}


def _heuristic_engine() -> Engine:
    window_regions = [
        Temporary(name="notes", budget=50_000),
        SlidingWindow(name="conversation", budget=100_000),
    ]
    return make_engine(
        window_regions,
        max_tokens=200_000,
        counter=HeuristicCounter(),
        summarizer=StubSummarizer(10),
    )


def test_fc_18_cjk_and_json_heavy_requests_are_corrected_by_the_observed_factor() -> None:
    engine = _heuristic_engine()
    engine.add_user(CJK)
    engine.add_assistant("", [ToolUse("c1", "edit", JSON_ARGS)])
    engine.add_tool_result("c1", json.dumps(JSON_ARGS))
    engine.request("anthropic", "claude-sonnet-4-5")
    estimate = engine.state.last_estimate
    reported = round(estimate * 1.45)  # the heuristic under-counts CJK + JSON by 45%
    engine.observe({"input_tokens": reported}, provider="anthropic", model="claude-sonnet-4-5")
    key = engine.budget.calibration_key("anthropic", "claude-sonnet-4-5")
    assert engine.calibration.factor(key) == pytest.approx(1.45, abs=0.002)
    before_raw = engine.budget.estimate()
    engine.add_user(CJK)
    added_raw = engine.budget.estimate() - before_raw
    sized = engine.size("anthropic", "claude-sonnet-4-5")
    assert sized >= reported + int(added_raw * 1.45) - 2
    assert sized > engine.budget.estimate()  # the raw estimate would under-count


def test_fc_18_tool_schemas_and_tool_call_arguments_are_counted() -> None:
    engine = _heuristic_engine()
    with_args = engine.add_assistant("", [ToolUse("c1", "edit", JSON_ARGS)])
    without = engine.add_assistant("", [ToolUse("c2", "edit", {})])
    assert with_args.tokens > without.tokens > 0
    assert with_args.tokens - without.tokens >= len(json.dumps(JSON_ARGS)) // 8
    engine.add_tool_result("c1", "ok")
    engine.add_tool_result("c2", "ok")
    engine.add_user("next")
    assert engine.budget.tools_tokens() > 0
    schema = {
        "type": "object",
        "properties": {
            f"field_{i}": {"type": "string", "description": "x" * 40} for i in range(20)
        },
    }
    big_tool = ToolSpec("big_tool", "A tool with a large schema.", schema)
    req_plain, _ = engine.request("anthropic", "m")
    req_tools, _ = engine.request("anthropic", "m", tools=[big_tool])
    assert engine.budget.tools_tokens([big_tool]) - engine.budget.tools_tokens(()) > 100
    assert engine.budget.tools_tokens() == engine.budget.tools_tokens([big_tool])  # last sent
    assert req_tools.tokens > req_plain.tokens


def test_fc_18_each_provider_and_model_keeps_its_own_factor_through_the_engine() -> None:
    engine = _heuristic_engine()
    engine.add_user(CJK)
    factors = {
        ("anthropic", "claude-sonnet-4-5"): 1.45,
        ("openai", "gpt-4o"): 1.1,
        ("anthropic", "claude-haiku-4-5"): 1.2,  # factors are never below 1 (only tightened)
    }
    for (provider, model), f in factors.items():
        engine.request(provider, model)
        usage_key = "input_tokens" if provider == "anthropic" else "prompt_tokens"
        engine.observe({usage_key: round(engine.state.last_estimate * f)})
    for (provider, model), f in factors.items():
        raw = engine.budget.estimate(provider, model)  # tool framing is per provider
        assert engine.calibration.factor(f"{provider}:{model}") == pytest.approx(f, abs=0.002)
        assert engine.size(provider, model) >= int(raw * f) - 1
    raw = engine.budget.estimate("openai", "gpt-4.1")
    assert engine.size("openai", "gpt-4.1") == engine.budget.calibrated(raw, "openai", "gpt-4.1")
    assert engine.size("openai", "gpt-4.1") < engine.size("anthropic", "claude-sonnet-4-5")


# --- context tool arguments are checked against each tool's JSON schema -----------------
def _tools_engine() -> Engine:
    return make_engine(
        [
            Pinned(name="S", budget=100),
            Keyed(name="facts", budget=500),
            Checklist(name="plan", budget=500),
            SlidingWindow(name="conversation", budget=5_000),
        ],
        relief=ReliefPolicy(),  # offers context_restore too: every context tool is checked
    )


def _bad_value(prop: dict) -> object:
    return 3 if prop["type"] == "string" else "three"


def test_every_context_tool_names_an_unknown_argument_and_says_how_to_fix_it() -> None:
    engine = _tools_engine()
    specs = {s.name: s for s in engine.tools()}
    assert set(specs) == set(TOOL_NAMES)
    for name, spec in specs.items():
        good = {k: "x" for k in spec.input_schema.get("required", [])}
        before = engine.window.snapshot_state()
        out = engine.handle_tool_call(name, {**good, "bogus": 1})
        assert not out.ok and "unknown argument 'bogus'" in out.text, name
        assert "Remove 'bogus'" in out.text
        assert engine.window.snapshot_state() == before


def test_every_required_argument_is_named_when_missing() -> None:
    engine = _tools_engine()
    for spec in engine.tools():
        required = spec.input_schema.get("required", [])
        for missing in required:
            args = {k: "x" for k in required if k != missing}
            out = engine.handle_tool_call(spec.name, args)
            assert not out.ok and f"missing required argument '{missing}'" in out.text
            assert spec.name in out.text


def test_every_typed_argument_of_the_wrong_type_is_named_with_its_type() -> None:
    engine = _tools_engine()
    for spec in engine.tools():
        props = spec.input_schema.get("properties", {})
        for arg, prop in props.items():
            args = {k: "x" for k in spec.input_schema.get("required", [])}
            args[arg] = _bad_value(prop)
            out = engine.handle_tool_call(spec.name, args)
            assert not out.ok, (spec.name, arg)
            assert f"argument '{arg}' must be" in out.text and prop["type"][:3] in out.text


def test_todo_done_without_item_id_is_not_answered_with_an_empty_id() -> None:
    engine = _tools_engine()
    engine.handle_tool_call("todo_add", {"text": "write tests"})
    out = engine.handle_tool_call("todo_done", {})
    assert not out.ok and "''" not in out.text.splitlines()[0]
    assert "missing required argument 'item_id'" in out.text
    neg = engine.handle_tool_call("context_delete", {"region": "facts", "index": -1})
    assert not neg.ok and "'index' must be >= 0" in neg.text


# --- orphan tool results are accepted with a typed warning ------------------------------
def test_a_tool_result_for_an_unknown_call_emits_a_warning_naming_the_id() -> None:
    engine = _tools_engine()
    engine.add_user("go")
    engine.add_assistant("", [ToolUse("c1", "run", {})])
    engine.add_tool_result("c1", "fine")
    assert engine.events.of_kind("orphan_tool_result") == []
    orphan = engine.add_tool_result("c404", "lost")
    warnings = engine.events.of_kind("orphan_tool_result")
    assert [(w.tool_use_id, w.entry_id) for w in warnings] == [("c404", orphan.id)]  # type: ignore[attr-defined]
    # kept in the log as received (append-only); the rendered request drops it
    assert orphan.id in [r.entry.id for r in engine.transcript() if r.entry is not None]
    _, payload = engine.request("anthropic", "m")
    assert "c404" not in json.dumps(payload)
