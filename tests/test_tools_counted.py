"""Everything that is sent is counted: the tool schemas passed per request
(``engine.request(tools=...)``) and the context tools regio adds count, rendered as each
provider receives them with its hidden framing, in the whole-context trigger and its fixed
floor, in the ceiling and in the request's ceiling check."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from progress_support import conversation_blueprint
from regio.engine import Engine
from regio.layout import ToolSpec
from regio.providers import provider_for, tool_framing_for
from regio.session._events import TriggerBelowFloor
from regio.tokens.tooldefs import NEUTRAL_FRAMING, tool_definition_tokens


def _big_tool(name: str = "big_tool", fields: int = 40) -> ToolSpec:
    schema = {
        "type": "object",
        "properties": {
            f"field_{i}": {"type": "string", "description": "describe the field " * 4}
            for i in range(fields)
        },
    }
    return ToolSpec(name, "A tool with a large schema.", schema)


def _engine(**options: Any) -> Engine:
    return Engine.from_blueprint(conversation_blueprint("counted", 20000), **options)


def _fill(engine: Engine, turns: int) -> None:
    for n in range(turns):
        engine.add_user(f"question {n} " + "word " * 40)
        engine.add_assistant(f"answer {n} " + "word " * 40)


def test_request_tools_count_in_the_ceiling() -> None:
    engine = _engine()
    engine.add_user("hello")
    before = engine.ceiling()
    tool = _big_tool()
    engine.request(tools=[tool])
    assert engine.ceiling() == before - (
        engine.budget.tools_tokens([tool]) - engine.budget.tools_tokens(())
    )
    assert engine.ceiling() < before - 300
    engine.request()  # a request without tools sends none: nothing more is counted
    assert engine.ceiling() == before


def test_request_tools_count_in_the_whole_context_trigger() -> None:
    plain = _engine()
    _fill(plain, 12)
    size = plain.size()
    trigger = size + 200  # the window alone stays under it
    engine = _engine(compact_trigger=trigger)
    _fill(engine, 12)
    engine.request()
    assert not engine.window.region("history").entries
    tool = _big_tool(fields=8)  # about 600 tokens with the framing: past the trigger
    engine.request(tools=[tool])
    engine.add_user("next")
    engine.request(tools=[tool])
    assert engine.window.region("history").entries  # compacted at the boundary


def test_request_tools_count_in_the_trigger_floor() -> None:
    engine = _engine(compact_trigger=3000)
    seen: list[TriggerBelowFloor] = []
    engine.subscribe(lambda e: seen.append(e) if isinstance(e, TriggerBelowFloor) else None)
    engine.add_user("hello")
    engine.request()
    assert seen == []
    tools = [_big_tool(f"tool_{i}") for i in range(4)]  # a fixed cost above the trigger
    engine.request(tools=tools)
    engine.request(tools=tools)
    assert len(seen) == 1 and seen[0].floor >= 3000


def test_anthropic_tool_system_prompt_is_counted_in_the_request_estimate() -> None:
    engine = _engine()
    engine.add_user("hello")
    engine.request("anthropic")
    without = engine.state.last_estimate
    tool = _big_tool(fields=2)
    engine.request("anthropic", tools=[tool])
    framing = provider_for("anthropic").tool_framing
    shaped = tool_definition_tokens([tool], framing, engine.budget.count_text)
    assert engine.state.last_estimate >= without + shaped
    assert shaped > framing.per_request


def test_openai_shaped_providers_share_the_function_framing() -> None:
    chat = provider_for("openai").tool_framing
    for provider in ("openai_compatible", "llamacpp", "vllm", "sglang", "deepseek", "google"):
        assert tool_framing_for(provider) is chat
    responses = tool_framing_for("openai_responses")
    assert (responses.per_request, responses.per_tool) == (chat.per_request, chat.per_tool)
    assert tool_framing_for("someone-else") is NEUTRAL_FRAMING
    assert tool_definition_tokens([], provider_for("anthropic").tool_framing, len) == 0


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


_TOOLS = st.lists(
    st.tuples(
        st.text(alphabet="abcdefgh_", min_size=1, max_size=12),
        st.text(max_size=200),
        st.integers(0, 12),
    ),
    max_size=5,
    unique_by=lambda t: t[0],
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools=_TOOLS, provider=st.sampled_from(["anthropic", "openai"]))
def test_every_tool_sent_is_counted(tools: list[tuple[str, str, int]], provider: str) -> None:
    """For any tool list, each definition in the payload (as sent, markers aside) counts no
    more tokens than the estimate gives the tools, the request estimate covers them, and the
    ceiling leaves room for them."""
    engine = _engine()
    engine.add_user("hello")
    specs = [
        ToolSpec(
            name,
            desc,
            {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(n)}},
        )
        for name, desc, n in tools
    ]
    _req, payload = engine.request(provider, tools=specs)
    count = engine.budget.count_text
    sent = [_strip(t) for t in payload.get("tools", [])]
    counted = engine.budget.tools_tokens(None, provider)
    as_sent = [json.dumps(t, separators=(",", ":"), ensure_ascii=False) for t in sent]
    assert sum(count(text) for text in as_sent) <= counted
    assert engine.state.last_estimate >= engine.window.used_tokens + counted
    default = engine.budget.tools_tokens()  # the ceiling is the engine's provider's
    assert engine.ceiling() + default + engine.budget.system_overhead == engine.limit


# ----- at load time: the context tools are known from the blueprint --------------------------

ROOM = """
version: 1
name: room
model: {{provider: anthropic, name: claude-sonnet-4-5, context_window: 10000,
         max_output_tokens: 1000}}
tokenizer: heuristic
tools: {{context: {context}}}
regions:
  - {{name: system, kind: pinned, budget: {pinned}, seed: hi}}
  - {{name: notes, kind: keyed, budget: 500}}
  - name: conversation
    kind: sliding_window
    budget: {conversation}
    eviction: {{strategy: compact, compact_count: 6, trigger: {trigger}}}
  - {{name: history, kind: compact_history, source: conversation, budget: 500}}
"""


def _room(context: str = "auto", pinned: int = 2000, conversation: int = 3000, trigger: int = 0):
    from regio.blueprint import load_blueprint

    return load_blueprint(
        ROOM.format(
            context=context,
            pinned=pinned,
            conversation=conversation,
            trigger=trigger or conversation * 9 // 10,
        )
    )


def _tool_warnings(bp: Any) -> list[Any]:
    return [w for w in bp.warnings if "context tools' schemas" in w.message]


def test_blueprint_tools_are_counted_as_the_runtime_counts_them() -> None:
    from regio.blueprint.toolroom import blueprint_tools_tokens

    bp = _room()
    engine = Engine.from_blueprint(bp)
    assert blueprint_tools_tokens(bp) == engine.budget.tools_tokens(()) > 0
    assert blueprint_tools_tokens(_room("none")) == 0


def test_validate_warns_when_tool_schemas_take_the_fixed_regions_past_the_window() -> None:
    from regio.blueprint.toolroom import blueprint_tools_tokens

    tools = blueprint_tools_tokens(_room())
    window = _room().window_tokens
    pinned = window - 1000 - tools // 2  # the fixed regions fit, not with the tool schemas
    bp = _room(pinned=pinned, conversation=400)
    [warning] = [w for w in _tool_warnings(bp) if w.path == "tools.context"]
    assert f"{tools} tokens" in warning.message and warning.line is not None
    assert not _tool_warnings(_room("none", pinned=pinned, conversation=400))


def test_validate_warns_when_tool_schemas_put_a_trigger_above_the_room_left() -> None:
    from regio.blueprint.toolroom import blueprint_tools_tokens

    tools = blueprint_tools_tokens(_room())
    room = _room().window_tokens - 2000 - 1000  # pinned, keyed and compact_history are fixed
    bp = _room(conversation=room, trigger=room - tools // 2)
    [warning] = _tool_warnings(bp)
    assert warning.path == "regions[2].eviction"
    assert not _tool_warnings(_room(conversation=room, trigger=room - tools - 10))
    assert not _tool_warnings(_room("none", conversation=room, trigger=room - tools // 2))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    context=st.sampled_from(["auto", "none", "all"]),
    pinned=st.integers(100, 8000),
    trigger_share=st.floats(0.05, 1.0),
)
def test_tool_room_warning_iff_the_schemas_make_the_difference(
    context: str, pinned: int, trigger_share: float
) -> None:
    """The load-time warnings fire exactly when the fixed regions or a trigger fit the window
    without the tool schemas and do not fit with them."""
    from regio.blueprint.toolroom import blueprint_tools_tokens

    conversation = 3000
    trigger = max(1, int(conversation * trigger_share))
    bp = _room(context, pinned=pinned, conversation=conversation, trigger=trigger)
    tools = blueprint_tools_tokens(bp)
    need, window = pinned + 500 + 500, bp.window_tokens
    paths = {w.path for w in _tool_warnings(bp)}
    assert ("tools.context" in paths) == (need <= window < need + tools)
    room = window - need
    assert ("regions[2].eviction" in paths) == (room - tools < trigger <= room)
