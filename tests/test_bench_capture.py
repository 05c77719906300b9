"""Capture rules: how replay turns recorded content into region writes."""

from __future__ import annotations

import pytest

from _bench_fixtures import swe_trace, tau_trace, tiny_blueprint
from regio.bench.capture import (
    SWE_AGENT_FOOTER,
    TIME_LINE,
    AddMessage,
    Call,
    Extract,
    FooterRule,
    LookupRule,
    ParkRule,
    RegionOp,
    SystemPromptRule,
    capture_stream,
    rules_for,
)
from regio.blueprint import load_blueprint
from regio.content import ToolUse


def _count(text: str) -> int:
    return len(text) // 4


def _writes(items: list) -> list[RegionOp]:  # type: ignore[type-arg]
    """The region operations of a stream, those a message carries as moves included, without
    the repeats of an unchanged footer state."""
    ops: list[RegionOp] = []
    for i in items:
        if isinstance(i, RegionOp):
            ops.append(i)
        elif isinstance(i, AddMessage):
            ops.extend(op for op in i.moves if not op.repeat)
    return ops


def test_the_swe_agent_footer_is_stripped_and_written_to_the_state_region() -> None:
    items = list(capture_stream(swe_trace(steps=2), [FooterRule("env_state")], _count))
    observations = [
        i.message for i in items if isinstance(i, AddMessage) and i.message.role == "user"
    ][1:]
    assert observations and all("(Open file:" not in m.text for m in observations)
    ops = _writes(items)
    assert [op.text.splitlines()[0] for op in ops] == ["(Open file: a.py)", "(Open file: b.py)"]
    assert all(op.action == "replace" and op.region == "env_state" for op in ops)


def test_an_unchanged_footer_is_not_written_again() -> None:
    items = list(capture_stream(swe_trace(steps=4, files=("a.py",)), [FooterRule("s")], _count))
    assert len(_writes(items)) == 1


def test_a_keyed_footer_target_is_written_under_its_key() -> None:
    items = list(
        capture_stream(swe_trace(2), [FooterRule("file_notes", key="environment")], _count)
    )
    ops = _writes(items)
    assert {(op.action, op.key) for op in ops} == {("write", "environment")}


def test_footer_split_leaves_text_without_a_footer_alone() -> None:
    assert FooterRule("s").split("plain output") == ("plain output", None)


def test_lookup_results_go_to_the_keyed_region_and_stay_in_the_conversation() -> None:
    rules = [
        LookupRule("customer", ("get_user_details",), key="user:{user_id}"),
        LookupRule("customer", ("get_reservation_details",), key="reservation:{reservation_id}"),
    ]
    items = list(capture_stream(tau_trace(), rules, _count))
    ops = [i for i in items if isinstance(i, RegionOp)]
    assert [(op.region, op.key) for op in ops] == [
        ("customer", "user:mia_li_3668"),
        ("customer", "reservation:ABC123"),
    ]
    results = [i.message for i in items if isinstance(i, AddMessage) and i.message.role == "tool"]
    assert results[0].tool_results[0].content == '{"name": "Mia Li", "tier": "gold"}'


def test_a_lookup_rule_ignores_other_tools_and_calls_missing_a_key_argument() -> None:
    rule = LookupRule("c", ("get_user_details",), key="user:{user_id}")
    assert not rule.applies(ToolUse("x", "book_flight", {"user_id": "u1"}))
    assert not rule.applies(ToolUse("x", "get_user_details", {"name": "Mia"}))
    assert rule.key_of(ToolUse("x", "get_user_details", {"user_id": "u1"})) == "user:u1"


def test_an_unkeyed_lookup_writes_without_a_key() -> None:
    items = list(capture_stream(tau_trace(), [LookupRule("notes", ("get_user_details",))], _count))
    ops = [i for i in items if isinstance(i, RegionOp)]
    assert [(op.region, op.key, op.action) for op in ops] == [("notes", None, "write")]


def test_a_footer_without_strip_stays_in_the_observation() -> None:
    rule = FooterRule("env_state", strip=False)
    text = "out\n(Open file: a.py)\n(Current directory: /repo)\nbash-$"
    kept, state = rule.split(text)
    assert kept == text and state == "(Open file: a.py)\n(Current directory: /repo)"


def test_a_footer_pattern_without_a_state_group_writes_the_whole_match() -> None:
    assert FooterRule("s", pattern=r"\[cwd=[^\]]*\]\s*\Z").split("ls\n[cwd=/a]") == (
        "ls\n",
        "[cwd=/a]",
    )


def test_a_large_output_is_parked_and_replaced_by_a_stub() -> None:
    items = list(capture_stream(swe_trace(2), [ParkRule("tool_output", min_tokens=50)], _count))
    ops = _writes(items)
    assert ops and all(op.action == "trim" and op.keep == 1 for op in ops)
    stubs = [i.message.text for i in items if isinstance(i, AddMessage)][2:]
    assert any("parked in region 'tool_output'" in s for s in stubs)


def test_the_system_prompt_replaces_the_pinned_seed_and_moves_the_clock_out() -> None:
    rule = SystemPromptRule("policy", (Extract(TIME_LINE, "clock"),))
    ops = [i for i in capture_stream(tau_trace(), [rule], _count) if isinstance(i, RegionOp)]
    assert [op.region for op in ops] == ["policy", "clock"]
    assert "current time" not in ops[0].text
    assert ops[1].text == "The current time is 2024-05-15 15:00:00 EST."


def test_one_call_item_per_assistant_step_with_trace_times() -> None:
    calls = [i for i in capture_stream(tau_trace(), [], _count) if isinstance(i, Call)]
    assert [c.index for c in calls] == [0, 1, 2, 3]
    assert [(c.t, c.t_end) for c in calls] == [(0.0, 2.0), (4.0, 6.0), (16.0, 18.0), (20.0, 22.0)]


CAPTURING = """
version: 1
name: capturing
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 60000}
regions:
  - {name: policy, kind: pinned, volatility: stable, budget: 8000,
     capture: [{rule: system_prompt}]}
  - name: clock
    kind: pinned
    budget: 100
    capture: [{rule: system_prompt, pattern: '(?m)^The current time is [^\\n]*\\n*'}]
  - name: file_notes
    kind: keyed
    budget: 2000
    capture: [{rule: footer, key: environment, pattern: 'x\\Z', strip: false}]
  - name: customer
    kind: keyed
    budget: 2000
    capture: [{rule: lookup, tools: [get_user_details, get_flight_status], key: "{tool}"}]
  - {name: parked, kind: temporary, budget: 4000, capture: [{rule: park, keep: 2}]}
  - {name: conversation, kind: sliding_window, budget: "50%"}
"""


def test_rules_come_from_the_blueprint_capture_lists() -> None:
    rules = rules_for(load_blueprint(CAPTURING))
    first = rules[0]
    assert isinstance(first, SystemPromptRule) and first.region == "policy"
    assert first.extract == (Extract(TIME_LINE, "clock"),)
    assert rules[1:] == (
        FooterRule("file_notes", key="environment", pattern=r"x\Z", strip=False),
        LookupRule("customer", ("get_user_details", "get_flight_status"), key="{tool}"),
        ParkRule("parked", min_tokens=1500, keep=2),
    )


def test_a_blueprint_without_capture_lists_captures_nothing() -> None:
    bp = load_blueprint(
        "version: 1\nname: plain\n"
        "model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 60000}\n"
        "regions:\n"
        "  - {name: policy, kind: pinned, volatility: stable, budget: 8000}\n"
        "  - {name: customer, kind: keyed, budget: 2000}\n"
        '  - {name: conversation, kind: sliding_window, budget: "50%"}\n'
    )
    assert rules_for(bp) == ()


def test_the_fixture_blueprint_strips_the_swe_agent_footer() -> None:
    rules = rules_for(tiny_blueprint())
    footer = next(r for r in rules if isinstance(r, FooterRule))
    assert footer.pattern == SWE_AGENT_FOOTER and footer.key is None


@pytest.mark.parametrize("count", [1, 3])
def test_the_system_prompt_rule_without_a_target_only_extracts(count: int) -> None:
    rule = SystemPromptRule(None, (Extract(TIME_LINE, "clock"),) * count)
    ops = rule.system("a\nThe current time is now.\nb")
    assert [op.region for op in ops] == ["clock"]
