"""regio's cache marks through pydantic-ai's Anthropic model, checked on the HTTP request
(src/regio/adapters/pydantic_ai_marks.py): each mark the layout planned reaches the wire where
pydantic-ai can carry it (a message block's own mark on that block, a result's on the last
result of its message, an assistant block's at the end of that message or on the results that
answer it, the system prompt's at its end), no other mark is sent, and nothing of the window
is lost or moved. The requests go through the real ``AnthropicModel`` and the ``anthropic``
client to an HTTP mock.

CI runs a bounded number of examples; ``REGIO_FUZZ_EXAMPLES=N`` runs N."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("anthropic")

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter_drivers_support import pydantic_anthropic_model, run_pydantic_ai
from adapter_harness_support import ANTHROPIC_TOOL_ID, Call, engine
from regio.adapters.pydantic_ai_marks import anthropic_tool_id

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))

#: A block of the window: ("system", index) or (message index, block index).
Where = tuple[Any, int]

#: An engine stand-in for a mock server that records no plan (the payloads are hand-made).
_UNPLANNED = SimpleNamespace(state=SimpleNamespace(last_request=None))


def _wire(body: dict[str, Any], instructions: str = "") -> dict[str, Any]:
    """The HTTP request pydantic-ai's ``AnthropicModel`` sends for regio's Anthropic payload
    ``body`` (through :func:`marked_window` and :func:`cache_settings`)."""
    from pydantic_ai.messages import InstructionPart
    from pydantic_ai.models import ModelRequestParameters

    from regio.adapters.pydantic_ai_marks import cache_settings, marked_window

    calls: list[Call] = []
    model = pydantic_anthropic_model(calls, _UNPLANNED, lambda n: None)
    messages, system_ttl = marked_window(body, "CALLER SYSTEM")
    parts = [InstructionPart(instructions)] if instructions else []
    params = ModelRequestParameters(instruction_parts=parts)
    asyncio.run(model.request(messages, cache_settings(None, system_ttl), params))
    assert calls[-1].raw is not None
    return calls[-1].raw


def _marks(wire: dict[str, Any]) -> tuple[set[Where], list[int]]:
    """(The marked message blocks of a request, the indices of its marked system blocks)."""
    system = wire.get("system")
    marked_system = [
        n for n, b in enumerate(system if isinstance(system, list) else []) if "cache_control" in b
    ]
    at = {
        (m, b)
        for m, message in enumerate(wire["messages"])
        for b, block in enumerate(message["content"])
        if "cache_control" in block
    }
    return at, marked_system


def _carried(body: dict[str, Any], where: Where) -> Where | None:
    """Where the mark planned at ``where`` is carried (module doc); ``("system", -1)`` for the
    end of the system prompt."""
    m, b = where
    if m == "system":
        return ("system", -1)
    messages = body["messages"]

    def last_result(k: int) -> int | None:
        kinds = [x["type"] for x in messages[k]["content"]]
        return max((i for i, t in enumerate(kinds) if t == "tool_result"), default=None)

    if messages[m]["role"] == "user":
        if messages[m]["content"][b]["type"] == "tool_result":
            return (m, last_result(m))  # type: ignore[return-value]
        return (m, b)
    if m + 1 == len(messages):
        return None
    after = last_result(m + 1)
    return (m + 1, after) if after is not None else (m, len(messages[m]["content"]) - 1)


@st.composite
def windows(draw: Any) -> tuple[dict[str, Any], list[Where]]:
    """An Anthropic payload as regio renders one (system blocks; messages alternating, the
    user's first and last; each call answered in the next message, results first) and up to
    four marked blocks."""
    system = [{"type": "text", "text": f"system block {i}"} for i in range(draw(st.integers(1, 3)))]
    texts = draw(st.integers(1, 2))
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"task {i}"} for i in range(texts)]}
    ]
    for turn in range(draw(st.integers(1, 4))):
        calls = draw(st.integers(0, 3))
        blocks: list[dict[str, Any]] = []
        if calls == 0 or draw(st.booleans()):
            blocks.append({"type": "text", "text": f"assistant {turn}"})
        ids = [f"call_{turn}_{k}" + draw(st.sampled_from(["", "~1", ".x:0"])) for k in range(calls)]
        blocks += [
            {"type": "tool_use", "id": i, "name": "read_file", "input": {"path": i}} for i in ids
        ]
        messages.append({"role": "assistant", "content": blocks})
        user: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": i, "content": f"output of {i}"} for i in ids
        ]
        for k in range(draw(st.integers(0 if ids else 1, 2))):
            user.append({"type": "text", "text": f"user {turn}.{k}"})
        messages.append({"role": "user", "content": user})
    places: list[Where] = [("system", n) for n in range(len(system))]
    places += [(m, b) for m, msg in enumerate(messages) for b in range(len(msg["content"]))]
    marked = sorted(
        draw(st.lists(st.sampled_from(places), unique=True, max_size=4)),
        key=lambda w: (-1, w[1]) if w[0] == "system" else w,
    )
    long = draw(st.integers(0, len(marked)))  # 1h marks before 5m ones
    for n, (m, b) in enumerate(marked):
        target = system[b] if m == "system" else messages[m]["content"][b]
        target["cache_control"] = {"type": "ephemeral", **({"ttl": "1h"} if n < long else {})}
    return {"system": system, "messages": messages}, marked


def _content(messages: list[dict[str, Any]], ids: Any = str) -> list[tuple[str, list[Any]]]:
    """What a message list says: per message its role and blocks (text, call id, result id
    and text; each id as ``ids`` of it), marks left out."""
    out = []
    for message in messages:
        blocks = []
        for block in message["content"]:
            if block["type"] == "text":
                blocks.append(block["text"])
            elif block["type"] == "tool_use":
                blocks.append(("call", ids(block["id"]), block["input"]))
            else:
                content = block.get("content")
                text = content if isinstance(content, str) else content[0]["text"]
                blocks.append(("result", ids(block["tool_use_id"]), text))
        out.append((message["role"], blocks))
    return out


@settings(max_examples=EXAMPLES, deadline=None)
@given(windows())
def test_each_planned_mark_reaches_the_wire_where_pydantic_ai_can_carry_it(
    window: tuple[dict[str, Any], list[Where]],
) -> None:
    body, marked = window
    wire = _wire(body)
    assert _content(wire["messages"]) == _content(body["messages"], anthropic_tool_id)
    ids = [
        i
        for _, blocks in _content(wire["messages"])
        for b in blocks
        if isinstance(b, tuple)
        for i in b[1:2]
    ]
    assert all(ANTHROPIC_TOOL_ID.match(i) for i in ids), ids
    carried = {c for c in (_carried(body, w) for w in marked) if c is not None}
    at, marked_system = _marks(wire)
    assert at == {c for c in carried if c[0] != "system"}
    system = wire.get("system")
    last = len(system) - 1 if isinstance(system, list) else None
    assert marked_system == ([last] if ("system", -1) in carried else [])
    assert not wire.get("cache_control")
    assert not any("cache_control" in t for t in wire.get("tools") or [])
    assert len(at) + len(marked_system) <= 4


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12))
def test_a_tool_id_goes_to_anthropic_as_it_accepts_it_and_two_never_become_one(
    one: str, other: str
) -> None:
    assert ANTHROPIC_TOOL_ID.match(anthropic_tool_id(one))
    assert anthropic_tool_id(one) == anthropic_tool_id(one)
    if ANTHROPIC_TOOL_ID.match(one):
        assert anthropic_tool_id(one) == one
    if one != other:
        assert anthropic_tool_id(one) != anthropic_tool_id(other)


def test_a_system_mark_ends_the_system_prompt_after_the_agents_instructions() -> None:
    body = {
        "system": [
            {"type": "text", "text": "stable", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "settled", "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "task"}]}],
    }
    wire = _wire(body, instructions="INSTRUCTIONS")
    system = wire["system"]
    assert "CALLER SYSTEM\n\nstable\n\nsettled" in system[0]["text"]
    assert system[-1]["text"] == "INSTRUCTIONS"
    assert _marks(wire) == (set(), [len(system) - 1])  # two planned, one carried: the end
    without = _wire(body)["system"]
    assert [("cache_control" in b) for b in without] == [True]
    body["system"] = [{"type": "text", "text": "small"}]  # no mark planned: none sent
    assert _marks(_wire(body, instructions="INSTRUCTIONS")) == (set(), [])


def test_the_agents_own_cache_settings_give_way_to_the_planned_marks() -> None:
    """pydantic-ai's ``anthropic_cache_messages`` / ``anthropic_cache_tool_definitions`` would
    add marks the layout did not plan; on the wire only the planned ones are sent."""
    pytest.importorskip("pydantic_ai.models.anthropic")
    settings = {"anthropic_cache_messages": True, "anthropic_cache_tool_definitions": True}
    calls, _, _ = run_pydantic_ai("capability-anthropic", model_settings=settings)
    assert [c.marks for c in calls] == [c.planned for c in calls]
    assert any(c.marks for c in calls)


def test_an_agent_on_anthropic_is_detected_through_its_wrappers() -> None:
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentedModel

    from regio.adapters.pydantic_ai import RegioCapability
    from regio.adapters.pydantic_ai_marks import anthropic_bound

    model = pydantic_anthropic_model([], _UNPLANNED, lambda n: None)
    assert anthropic_bound(model)
    assert anthropic_bound(InstrumentedModel(model))
    assert not anthropic_bound(FunctionModel(lambda messages, info: None))
    with pytest.raises(ValueError, match="provider='gemini'"):
        RegioCapability(engine(), provider="gemini")


def test_a_history_carrying_cache_points_is_admitted_without_them() -> None:
    """A ``message_history`` that kept an earlier window's ``CachePoint`` s: the marks are not
    content (no empty user message reaches the engine, no text is lost)."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        CachePoint,
        ModelRequest,
        ModelResponse,
        TextPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import FunctionModel

    from regio.adapters.pydantic_ai import RegioCapability

    eng = engine()
    history = [
        ModelRequest(parts=[UserPromptPart(["first question", CachePoint()])]),
        ModelResponse(parts=[TextPart("first answer")]),
        ModelRequest(parts=[UserPromptPart([CachePoint()])]),
    ]
    agent = Agent(
        FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("done")])),
        capabilities=[RegioCapability(eng)],
    )
    agent.run_sync("second question", message_history=history)
    users = [
        r.entry.text
        for r in eng.transcript()
        if r.entry is not None and r.entry.role == "user" and r.kind == "message"
    ]
    assert users == ["first question", "second question"]
