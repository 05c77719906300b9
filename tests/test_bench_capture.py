"""Capture rules: how replay turns recorded content into region writes."""

from __future__ import annotations

from types import SimpleNamespace

from _bench_fixtures import swe_trace, tau_trace
from regio.bench.capture import (
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
from regio.content import ToolUse


def _count(text: str) -> int:
    return len(text) // 4


def test_the_swe_agent_footer_is_stripped_and_written_to_the_state_region() -> None:
    items = list(capture_stream(swe_trace(steps=2), [FooterRule("env_state")], _count))
    observations = [
        i.message for i in items if isinstance(i, AddMessage) and i.message.role == "user"
    ][1:]
    assert observations and all("(Open file:" not in m.text for m in observations)
    ops = [i for i in items if isinstance(i, RegionOp)]
    assert [op.text.splitlines()[0] for op in ops] == ["(Open file: a.py)", "(Open file: b.py)"]
    assert all(op.action == "replace" and op.region == "env_state" for op in ops)


def test_an_unchanged_footer_is_not_written_again() -> None:
    items = list(capture_stream(swe_trace(steps=4, files=("a.py",)), [FooterRule("s")], _count))
    assert len([i for i in items if isinstance(i, RegionOp)]) == 1


def test_a_keyed_footer_target_is_written_under_its_key() -> None:
    items = list(
        capture_stream(swe_trace(2), [FooterRule("file_notes", key="environment")], _count)
    )
    ops = [i for i in items if isinstance(i, RegionOp)]
    assert {(op.action, op.key) for op in ops} == {("write", "environment")}


def test_footer_split_leaves_text_without_a_footer_alone() -> None:
    assert FooterRule("s").split("plain output") == ("plain output", None)


def test_lookup_results_go_to_the_keyed_region_and_stay_in_the_conversation() -> None:
    items = list(capture_stream(tau_trace(), [LookupRule("customer")], _count))
    ops = [i for i in items if isinstance(i, RegionOp)]
    assert [(op.region, op.key) for op in ops] == [
        ("customer", "user:mia_li_3668"),
        ("customer", "reservation:ABC123"),
    ]
    results = [i.message for i in items if isinstance(i, AddMessage) and i.message.role == "tool"]
    assert results[0].tool_results[0].content == '{"name": "Mia Li", "tier": "gold"}'


def test_lookup_key_is_none_for_other_tools() -> None:
    assert LookupRule("c").key(ToolUse("x", "book_flight", {"a": 1})) is None


def test_a_large_output_is_parked_and_replaced_by_a_stub() -> None:
    items = list(capture_stream(swe_trace(2), [ParkRule("tool_output", min_tokens=50)], _count))
    ops = [i for i in items if isinstance(i, RegionOp)]
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


def _region(name: str, kind: str = "keyed", volatility: str = "rewritten") -> SimpleNamespace:
    return SimpleNamespace(name=name, kind=kind, volatility=volatility)


def test_rules_are_chosen_by_region_name() -> None:
    rules = rules_for(
        [_region("policy", "pinned", "stable"), _region("customer"), _region("clock", "pinned")]
    )
    assert isinstance(rules[0], SystemPromptRule) and rules[0].extract[0].region == "clock"
    assert any(isinstance(r, LookupRule) and r.region == "customer" for r in rules)


def test_file_notes_gets_the_footer_only_without_an_env_state_region() -> None:
    alone = rules_for([_region("file_notes")])
    both = rules_for([_region("file_notes"), _region("env_state", "pinned")])
    assert [r.region for r in alone if isinstance(r, FooterRule)] == ["file_notes"]
    assert [r.region for r in both if isinstance(r, FooterRule)] == ["env_state"]
