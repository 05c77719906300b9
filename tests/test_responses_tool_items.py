"""Responses custom tool calls and local shell calls (Codex CLI's ``apply_patch`` and shell) are
tool-call pairs like function calls: read from the client's items, laid out and rendered back as
the client sent them when nothing is compacted (same fields, same order, same bytes), counted,
cleared like any result (the item keeps its fields; its ``output`` is the placeholder) and
repaired as the API requires (an unanswered custom call gets a ``custom_tool_call_output``).

(Before, any of these items made the proxy pass the whole request upstream unmanaged.)
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.adapters.chat import response_items
from regio.content import canonical_json
from regio.layout.render.openai import check_openai_responses
from regio.proxy.readers import merge_calls
from regio.regions import Pinned, SlidingWindow
from regio.tokens import get_counter
from runtime_stubs import make_engine
from test_relief_placeholder_extract import _engine as relieved_engine

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "40"))
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)
_ID = st.from_regex(r"[a-z]{2}_[A-Za-z0-9]{1,8}", fullmatch=True)


@st.composite
def _pair(draw: Any, n: int) -> list[dict[str, Any]]:
    """A call and its output of a random kind, with the optional fields clients send."""
    call_id = f"{draw(_ID)}_{n}"
    kind = draw(st.sampled_from(["function", "custom", "shell", "shell_fn"]))
    output = draw(_TEXT)
    if kind == "function":
        args = canonical_json(draw(st.dictionaries(_TEXT, _TEXT, max_size=3))).decode()
        call = {"type": "function_call", "call_id": call_id, "name": "read", "arguments": args}
        return [call, {"type": "function_call_output", "call_id": call_id, "output": output}]
    if kind == "custom":
        call = {"type": "custom_tool_call"}
        if draw(st.booleans()):
            call["status"] = "completed"
        call.update(call_id=call_id, name="apply_patch", input=draw(_TEXT))
        if draw(st.booleans()):
            call["id"] = f"ctc_{n}"
        return [call, {"type": "custom_tool_call_output", "call_id": call_id, "output": output}]
    action: dict[str, Any] = {"type": "exec", "command": draw(st.lists(_TEXT, min_size=1))}
    for key, value in (("timeout_ms", 1000), ("working_directory", "/repo"), ("env", {})):
        choice = draw(st.sampled_from(["absent", "null", "set"]))
        if choice != "absent":
            action[key] = None if choice == "null" else value
    call = {"type": "local_shell_call", "id": f"lsh_{n}", "call_id": call_id}
    call.update(status="completed", action=action)
    if kind == "shell_fn":  # Codex CLI answers a local shell call with a function_call_output
        return [call, {"type": "function_call_output", "call_id": call_id, "output": output}]
    answer = {"type": "local_shell_call_output", "id": call_id, "output": output}
    if draw(st.booleans()):
        answer["status"] = "completed"
    return [call, answer]


@st.composite
def _history(draw: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": draw(_TEXT)}]
    for turn in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            items.append({"role": "assistant", "content": draw(_TEXT)})
        pairs = [draw(_pair(f"{turn}{k}")) for k in range(draw(st.integers(1, 3)))]
        items.extend(p[0] for p in pairs)  # parallel calls, then their outputs
        items.extend(p[1] for p in pairs)
    items.append({"role": "user", "content": draw(_TEXT)})
    return items


def _engine(**options: Any) -> Any:
    regions = [
        Pinned(name="system", budget=2_000),
        SlidingWindow(name="conversation", budget=400_000),
    ]
    engine = make_engine(regions, max_tokens=500_000, **options)
    return engine


def _admit(engine: Any, items: list[dict[str, Any]]) -> None:
    for message in merge_calls(response_items(items)):
        engine.add_message(message)


@settings(max_examples=EXAMPLES, deadline=None)
@given(_history())
def test_a_history_of_function_custom_and_local_shell_pairs_renders_back_byte_for_byte(items):
    engine = _engine()
    _admit(engine, items)
    _, payload = engine.request("openai", "gpt-5", api="openai_responses")
    assert json.dumps(payload["input"]) == json.dumps(items)
    assert check_openai_responses(payload) == []


def test_a_custom_call_is_counted_with_its_input_and_a_shell_call_with_its_command():
    patch = "*** Begin Patch\n*** Update File: a.py\n" + "+x = 1\n" * 200 + "*** End Patch"
    items = [
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch},
        {
            "type": "local_shell_call",
            "call_id": "c2",
            "status": "completed",
            "action": {"type": "exec", "command": ["grep", "-rn", "needle_" * 50]},
        },
    ]
    counter = get_counter("o200k_base")
    (message,) = merge_calls(response_items(items))
    counted = counter.count_message(message)
    assert counted >= counter.count(patch) + counter.count("needle_" * 50)


def _codex_turn(i: int) -> list[dict[str, Any]]:
    out = " ".join(f"out{i}x{k}" for k in range(120))
    if i % 2:
        action = {"type": "exec", "command": ["make", f"t{i}"], "env": None}
        call = {
            "type": "local_shell_call",
            "call_id": f"s{i}",
            "status": "completed",
            "action": action,
        }
        answer = {"type": "local_shell_call_output", "id": f"s{i}", "output": out}
        return [call, answer]
    call = {
        "type": "custom_tool_call",
        "call_id": f"p{i}",
        "name": "apply_patch",
        "input": f"patch {i}",
    }
    return [call, {"type": "custom_tool_call_output", "call_id": f"p{i}", "output": out}]


def test_custom_and_local_shell_outputs_are_cleared_in_their_own_item_and_restored():
    engine = relieved_engine(0)  # the relief tests' engine, a placeholder without extract
    engine.add_user("fix the bug")
    sent: dict[str, dict[str, Any]] = {}
    cleared: dict[str, dict[str, Any]] = {}
    for i in range(24):
        turn = _codex_turn(i)
        sent[turn[1].get("call_id") or turn[1]["id"]] = turn[1]
        _admit(engine, turn)
        _, payload = engine.request("openai", "gpt-5", api="openai_responses")
        assert check_openai_responses(payload) == []
        calls = [
            i for i in payload["input"] if i.get("type") in ("custom_tool_call", "local_shell_call")
        ]
        outputs = [i for i in payload["input"] if str(i.get("type")).endswith("_output")]
        assert [c["call_id"] for c in calls] == [o.get("call_id") or o["id"] for o in outputs]
        for item in outputs:
            theirs = sent[item.get("call_id") or item["id"]]
            assert list(item) == list(theirs)  # the client's fields, in its order
            if item["output"] != theirs["output"]:
                assert "cleared to save context" in item["output"]
                cleared[item.get("call_id") or item["id"]] = item
    assert {k[0] for k in cleared} == {"p", "s"}  # both kinds were cleared
    call_id = next(iter(cleared))
    outcome = engine.handle_tool_call("context_restore", {"call_id": call_id})
    assert outcome.ok and outcome.text == sent[call_id]["output"]


def test_an_unanswered_custom_call_gets_a_custom_output_and_an_orphaned_output_is_dropped():
    engine = _engine()
    items = [
        {"role": "user", "content": "patch it"},
        {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": "x"},
        {
            "type": "local_shell_call",
            "call_id": "s1",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls"]},
        },
        {"type": "custom_tool_call_output", "call_id": "gone", "output": "orphan"},
        {"role": "user", "content": "go on"},
    ]
    _admit(engine, items)
    engine.repair()
    _, payload = engine.request("openai", "gpt-5", api="openai_responses")
    assert check_openai_responses(payload) == []
    kinds = [(i.get("type") or i["role"], i.get("call_id")) for i in payload["input"]]
    assert kinds == [
        ("user", None),
        ("custom_tool_call", "p1"),
        ("local_shell_call", "s1"),
        ("custom_tool_call_output", "p1"),
        ("function_call_output", "s1"),
        ("user", None),
    ]


def test_a_custom_call_in_another_api_is_a_call_whose_input_holds_its_text():
    engine = _engine()
    _admit(
        engine,
        [
            {"role": "user", "content": "patch it"},
            {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": "x"},
            {"type": "custom_tool_call_output", "call_id": "p1", "output": "done"},
        ],
    )
    _, payload = engine.request("anthropic", "claude-sonnet-4-6")
    blocks = [b for m in payload["messages"] for b in m["content"] if isinstance(b, dict)]
    assert {"type": "tool_use", "id": "p1", "name": "apply_patch", "input": {"input": "x"}} in [
        {k: v for k, v in b.items() if k != "cache_control"} for b in blocks
    ]
