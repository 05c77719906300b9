"""The server-side context-editing model on hand-written vectors reproducing the documented
behaviour (https://platform.claude.com/docs/en/build-with-claude/context-editing), and its
invariants as property tests."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.cache.applied_edits import (
    apply_edits,
    edit_payload,
    payload_cache_request,
    simulate_edited,
)
from regio.cache.context_editing import (
    CLEAR_THINKING,
    CLEAR_TOOL_USES,
    PLACEHOLDER,
    ClearThinking,
    ClearToolUses,
    ContextEditingError,
    edits_payload,
    parse_edits,
)
from regio.errors import RegioError
from regio.providers import cache_model_for

RESULT = 1000  # tokens of every tool result in the vectors


def count(block: Any) -> int:
    """Tokens of a block in the vectors: characters of its text, 5 per tool_use plus 10 per
    input key, 100 per tool schema."""
    kind = block.get("type")
    if kind == "tool_result":
        return len(block["content"])
    if kind == "text":
        return len(block["text"])
    if kind == "thinking":
        return len(block["thinking"])
    if kind == "tool_use":
        return 5 + 10 * len(block["input"])
    return 100


def conversation(rounds: int, names: tuple[str, ...] = ("read",)) -> list[dict[str, Any]]:
    """A task message, then ``rounds`` of (assistant text + tool_use t<k>, user tool_result)."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "fix the failing test"}]
    for k in range(rounds):
        name = names[k % len(names)]
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "ok"},
                    {"type": "tool_use", "id": f"t{k}", "name": name, "input": {"path": f"f{k}"}},
                ],
            }
        )
        out.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{k}", "content": "x" * RESULT}
                ],
            }
        )
    return out


def results(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        b["tool_use_id"]: b["content"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    }


def uses(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        b["id"]: b["input"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    }


FREED = RESULT - len(PLACEHOLDER)


def test_below_trigger_nothing_is_cleared() -> None:
    msgs = conversation(6)
    out = apply_edits(msgs, (ClearToolUses(),), count)  # default trigger 100,000 tokens
    assert out.applied == ()
    assert out.messages == msgs
    assert out.first_edit is None
    assert out.input_tokens == out.original_input_tokens


def test_past_trigger_all_but_last_three_tool_uses_are_cleared() -> None:
    out = apply_edits(conversation(6), (ClearToolUses(trigger=2000),), count)
    got = results(out.messages)
    assert [k for k, v in got.items() if v == PLACEHOLDER] == ["t0", "t1", "t2"]
    assert all(got[k] == "x" * RESULT for k in ("t3", "t4", "t5"))
    assert out.cleared_ids == ("t0", "t1", "t2")
    assert out.first_edit == (2, 0)


def test_trigger_counts_tool_uses_when_typed_tool_uses() -> None:
    below = apply_edits(
        conversation(5), (ClearToolUses(trigger=5, trigger_type="tool_uses"),), count
    )
    above = apply_edits(
        conversation(6), (ClearToolUses(trigger=5, trigger_type="tool_uses"),), count
    )
    assert below.applied == ()
    assert above.cleared_ids == ("t0", "t1", "t2")


def test_clear_at_least_not_met_clears_nothing() -> None:
    edit = ClearToolUses(trigger=2000, clear_at_least=2 * FREED + 1)
    out = apply_edits(conversation(5), (edit,), count)  # two clearable: 2 * FREED tokens
    assert out.applied == ()
    assert out.messages == conversation(5)


def test_clear_at_least_met_clears_every_old_tool_use() -> None:
    edit = ClearToolUses(trigger=2000, clear_at_least=2 * FREED)
    out = apply_edits(conversation(5), (edit,), count)
    assert out.cleared_ids == ("t0", "t1")


def test_exclude_tools_are_never_cleared() -> None:
    msgs = conversation(8, names=("read", "search"))
    out = apply_edits(msgs, (ClearToolUses(trigger=2000, exclude_tools=("search",)),), count)
    # t0..t4 are old (keep 3 of 8); the odd ones are search calls
    assert out.cleared_ids == ("t0", "t2", "t4")
    assert all(results(out.messages)[k] == "x" * RESULT for k in ("t1", "t3"))


def test_clear_tool_inputs_empties_the_cleared_calls_input() -> None:
    out = apply_edits(
        conversation(5), (ClearToolUses(trigger=2000, clear_tool_inputs=True),), count
    )
    got = uses(out.messages)
    assert got["t0"] == {} and got["t1"] == {}
    assert got["t2"] == {"path": "f2"}
    assert out.applied[0].cleared_input_tokens == 2 * (FREED + 10)
    assert out.first_edit == (1, 1)  # the first call's input comes before its result


def test_clear_tool_inputs_by_name_empties_only_those_tools() -> None:
    edit = ClearToolUses(trigger=2000, clear_tool_inputs=("search",))
    out = apply_edits(conversation(6, names=("read", "search")), (edit,), count)
    got = uses(out.messages)
    assert got["t0"] == {"path": "f0"}
    assert got["t1"] == {}


def test_applied_edits_report_counts_and_net_tokens() -> None:
    out = apply_edits(conversation(6), (ClearToolUses(trigger=2000),), count)
    assert out.applied_edits() == {
        "applied_edits": [
            {"type": CLEAR_TOOL_USES, "cleared_tool_uses": 3, "cleared_input_tokens": 3 * FREED}
        ]
    }
    assert out.original_input_tokens - out.input_tokens == 3 * FREED


def thinking_conversation(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "plan it"}]
    for k in range(turns):
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t" * 50, "signature": f"s{k}"},
                    {"type": "text", "text": f"step {k}"},
                ],
            }
        )
        out.append({"role": "user", "content": f"next {k}"})
    return out


def has_thinking(message: dict[str, Any]) -> bool:
    return any(b["type"] == "thinking" for b in message["content"])


def test_clear_thinking_keeps_last_turn_by_default() -> None:
    out = apply_edits(thinking_conversation(4), (ClearThinking(),), count)
    kept = [m for m in out.messages if m["role"] == "assistant" and has_thinking(m)]
    assert len(kept) == 1 and kept[0]["content"][1]["text"] == "step 3"
    assert out.applied_edits()["applied_edits"] == [
        {"type": CLEAR_THINKING, "cleared_thinking_turns": 3, "cleared_input_tokens": 150}
    ]
    assert out.first_edit == (1, 0)


def test_clear_thinking_keep_all_clears_nothing() -> None:
    out = apply_edits(thinking_conversation(4), (ClearThinking(keep=None),), count)
    assert out.applied == () and out.first_edit is None


def test_thinking_enabled_without_the_edit_keeps_only_last_turn_unreported() -> None:
    out = apply_edits(thinking_conversation(3), (), count, thinking_enabled=True)
    assert out.applied == ()
    assert sum(has_thinking(m) for m in out.messages if m["role"] == "assistant") == 1


def payload(rounds: int, edits: list[dict[str, Any]] | None) -> dict[str, Any]:
    msgs = conversation(rounds)
    msgs[-1]["content"][-1]["cache_control"] = {"type": "ephemeral", "ttl": "5m"}
    out: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [
            {
                "type": "text",
                "text": "s" * 3000,
                "cache_control": {"type": "ephemeral", "ttl": "5m"},
            }
        ],
        "messages": msgs,
    }
    if edits is not None:
        out["context_management"] = {"edits": edits}
    return out


def test_cache_is_invalidated_from_the_first_cleared_position() -> None:
    edit = [{"type": CLEAR_TOOL_USES, "trigger": {"type": "input_tokens", "value": 8500}}]
    plain = cache_model_for("anthropic:claude-sonnet-4-5")
    edited = cache_model_for("anthropic:claude-sonnet-4-5")
    first, r1 = simulate_edited(plain, payload(5, edit), count, id="1", t_start=0.0)
    simulate_edited(edited, payload(5, edit), count, id="1", t_start=0.0)
    assert r1.applied == ()  # 3,000 + 5 rounds is under the 8,500-token trigger
    kept, r_kept = simulate_edited(plain, payload(6, None), count, id="2", t_start=10.0)
    cut, r_cut = simulate_edited(edited, payload(6, edit), count, id="2", t_start=10.0)
    assert r_kept.applied == () and kept.read == first.prompt_tokens
    assert r_cut.cleared_ids == ("t0", "t1", "t2") and r_cut.first_edit == (2, 0)
    # the only entry before the first cleared block is the system breakpoint's
    assert cut.read == 3000
    assert cut.write_5m == cut.prompt_tokens - 3000
    assert cut.prompt_tokens == kept.prompt_tokens - 3 * FREED


def test_edit_payload_removes_context_management_and_keeps_the_input() -> None:
    p = payload(6, [{"type": CLEAR_TOOL_USES, "trigger": {"type": "input_tokens", "value": 10}}])
    before = copy.deepcopy(p)
    edited, result = edit_payload(p, count)
    assert "context_management" not in edited
    assert p == before
    assert result.applied[0].cleared == 3


def test_payload_cache_request_carries_marks_and_kinds() -> None:
    req = payload_cache_request(payload(2, None), count, id="r", t_start=0.0)
    assert req.blocks[0].level == "system" and req.blocks[0].mark == "5m"
    assert [b.kind for b in req.blocks[1:]] == [
        "text",
        "text",
        "tool_use",
        "tool_result",
        "text",
        "tool_use",
        "tool_result",
    ]
    assert req.blocks[-1].mark == "5m"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"edits": [{"type": "clear_everything"}]}, "unknown edit"),
        ({"edits": [{"type": CLEAR_TOOL_USES, "keep": 3}]}, "edits[0].keep"),
        (
            {"edits": [{"type": CLEAR_TOOL_USES, "trigger": {"type": "tokens", "value": 1}}]},
            "trigger",
        ),
        ({"edits": [{"type": CLEAR_TOOL_USES, "keeps": {}}]}, "unknown key(s) keeps"),
        ({"edits": [{"type": CLEAR_TOOL_USES}, {"type": CLEAR_THINKING}]}, "listed first"),
        (
            {"edits": [{"type": CLEAR_THINKING, "keep": {"type": "thinking_turns", "value": 0}}]},
            "> 0",
        ),
        ([], "expected {edits"),
    ],
)
def test_malformed_context_management_is_a_clear_error(value: Any, fragment: str) -> None:
    with pytest.raises(ContextEditingError, match=None) as info:
        parse_edits(value)
    assert fragment in str(info.value)
    assert isinstance(info.value, RegioError)


# ---------------------------------------------------------------- properties

edits_st = st.builds(
    ClearToolUses,
    trigger=st.integers(0, 20_000),
    trigger_type=st.sampled_from(["input_tokens", "tool_uses"]),
    keep=st.integers(0, 6),
    clear_at_least=st.none() | st.integers(0, 5000),
    exclude_tools=st.sampled_from([(), ("search",), ("read", "search")]),
    clear_tool_inputs=st.sampled_from([False, True, ("read",)]),
)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    k = 0
    for _ in range(draw(st.integers(0, 8))):
        calls = draw(st.integers(1, 3))
        content: list[dict[str, Any]] = [{"type": "text", "text": "go"}]
        res = []
        for _ in range(calls):
            name = draw(st.sampled_from(["read", "search", "edit"]))
            content.append({"type": "tool_use", "id": f"c{k}", "name": name, "input": {"a": k}})
            size = draw(st.integers(0, 3000))
            res.append({"type": "tool_result", "tool_use_id": f"c{k}", "content": "y" * size})
            k += 1
        out.append({"role": "assistant", "content": content})
        out.append({"role": "user", "content": res})
    return out


def shape(messages: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    """Per message: (block type, tool id) — the pairing structure."""
    return [
        [
            (b["type"], str(b.get("id", b.get("tool_use_id", ""))))
            for b in (m["content"] if isinstance(m["content"], list) else [{"type": "text"}])
        ]
        for m in messages
    ]


@settings(max_examples=150, deadline=None)
@given(conversations(), st.lists(edits_st, min_size=1, max_size=2))
def test_edits_keep_pairs_are_deterministic_and_use_the_placeholder(
    msgs: list[dict[str, Any]], edits: list[ClearToolUses]
) -> None:
    before = copy.deepcopy(msgs)
    out = apply_edits(msgs, edits, count, fixed_tokens=50)
    assert msgs == before  # the client's history is never changed
    assert apply_edits(msgs, edits, count, fixed_tokens=50) == out
    # no tool_use is separated from its result: the same blocks and ids in the same places
    assert shape(out.messages) == shape(msgs)
    got, orig = results(out.messages), results(msgs)
    cleared = set(out.cleared_ids)
    for uid, content in got.items():
        assert content == (PLACEHOLDER if uid in cleared else orig[uid])
    last = {e.keep for e in edits}
    order = list(uses(msgs))
    for uid in cleared:
        assert order.index(uid) < len(order) - min(last)
    freed = sum(a.cleared_input_tokens for a in out.applied)
    assert out.original_input_tokens - out.input_tokens == freed


@settings(max_examples=100, deadline=None)
@given(edits_st, st.none() | st.integers(1, 5))
def test_edits_payload_parses_back_to_the_same_edits(edit: ClearToolUses, keep: int | None) -> None:
    edits = (ClearThinking(keep=keep), edit)
    assert parse_edits(edits_payload(edits)) == edits


@pytest.mark.parametrize("keep", ["all", {"type": "all"}])
def test_clear_thinking_keep_all_is_read_in_both_forms_the_api_takes(keep: Any) -> None:
    # the SDK's Keep: BetaThinkingTurnsParam | BetaAllThinkingTurnsParam ({"type": "all"}) | "all"
    edits = parse_edits({"edits": [{"type": CLEAR_THINKING, "keep": keep}]})
    assert edits == (ClearThinking(keep=None),)


def test_clear_thinking_keep_of_another_type_is_refused_naming_the_field() -> None:
    with pytest.raises(ContextEditingError, match="keep"):
        parse_edits(
            {"edits": [{"type": CLEAR_THINKING, "keep": {"type": "tool_uses", "value": 1}}]}
        )
