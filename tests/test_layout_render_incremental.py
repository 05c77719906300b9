"""Incremental rendering (regio.layout.rendercache, regio.layout.wellformed): payloads rendered
with warm caches are byte-identical to payloads rendered with every cache cleared, and the
resumable W/L checks give exactly the problems of the whole-payload checks."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import ToolResult, ToolUse
from regio.layout import (
    LayoutError,
    check_anthropic,
    check_openai_chat,
    render_anthropic,
    render_openai_chat,
    render_openai_responses,
)
from regio.layout.fork import fork_for_summary
from regio.layout.memo import clear_memos
from regio.layout.wellformed import (
    ChatState,
    anthropic_first_message,
    anthropic_range,
    openai_chat_end,
    openai_chat_range,
)

BLUEPRINT = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000,
        max_output_tokens: 1000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, seed: "You help."}
  - {name: env_state, kind: keyed, volatility: rewritten, budget: 500}
  - {name: notes, kind: pinned, volatility: grows, budget: 4000}
  - {name: conversation, kind: sliding_window, budget: 1500}
"""

#: BLUEPRINT plus a compact_history region the conversation's evictions are compacted into.
COMPACTING = BLUEPRINT.replace(
    "  - {name: conversation, kind: sliding_window, budget: 1500}",
    "  - {name: history, kind: compact_history, source: conversation, volatility: grows,\n"
    "     budget: 1500}\n"
    "  - name: conversation\n"
    "    kind: sliding_window\n"
    "    budget: 1500\n"
    "    max_items: 36\n"
    "    eviction: {strategy: compact, compact_count: 20}",
)


def _renders(req: Any) -> list[bytes]:
    return [
        json.dumps(render_anthropic(req, model="m", max_tokens=100)).encode(),
        json.dumps(render_openai_chat(req, model="m")).encode(),
        json.dumps(render_openai_responses(req, model="m")).encode(),
    ]


def _play(
    turns: int, clear_each_turn: bool, blueprint: str = BLUEPRINT
) -> tuple[list[bytes], dict[str, int]]:
    from regio.runtime import Engine, ExtractiveSummarizer
    from regio.runtime.events import CompactionFinished
    from regio.tokens import get_counter

    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        blueprint,
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter, max_summary_tokens=120),
        clock=lambda: 0.0,
    )
    out: list[bytes] = []
    seen = {
        "note": 0,
        "frozen": 0,
        "tool_use": 0,
        "parallel": 0,
        "env_changed": 0,
        "prefix_rewritten": 0,
        "compaction": 0,
    }

    def on_event(event: object) -> None:
        seen["compaction"] += isinstance(event, CompactionFinished)

    engine.subscribe(on_event)
    first_id = None
    for i in range(turns):
        if clear_each_turn:
            clear_memos()
        engine.add_user(f"turn {i}: look at item {i} " + "word " * (i % 7))
        if i % 5 == 0:
            engine.write("env_state", f"step={i}", key="env")
            seen["env_changed"] += 1
        if i % 4 == 1:
            engine.append("notes", f"note {i}")
        req, payload = engine.request("anthropic", "claude-sonnet-4-5")
        out.append(json.dumps(payload).encode())
        if clear_each_turn:
            clear_memos()
        out.extend(_renders(req))
        # the precomputed total is the sum of the blocks' tokens, and a fork keeps it so
        assert req.tokens == sum(b.tokens for b in req.blocks)
        forked = fork_for_summary(req, "summarize")
        assert forked.tokens == sum(b.tokens for b in forked.blocks)
        sources = [b.source for b in req.blocks]
        seen["note"] += bool(req.state.notes) and any(
            "[context note" in getattr(b.block, "text", "") for b in req.blocks
        )
        seen["frozen"] += any(s.startswith("frozen:") for s in sources)
        conv = engine.window.conversation
        assert conv is not None
        if first_id is not None and conv.entries and conv.entries[0].id != first_id:
            seen["prefix_rewritten"] += 1
        first_id = conv.entries[0].id if conv.entries else None
        if i % 6 == 3:  # parallel calls, answered in order
            engine.add_assistant(
                f"two looks {i}", [ToolUse(f"p{i}", "ls", {"p": i}), ToolUse(f"q{i}", "cat", {})]
            )
            engine.add_tool_result(f"p{i}", f"listing {i} " + "z " * 10)
            engine.add_tool_result(f"q{i}", f"content {i}")
            seen["parallel"] += 1
        elif i % 2:
            engine.add_assistant("", [ToolUse(f"c{i}", "ls", {"p": i})])
            engine.add_tool_result(f"c{i}", f"files {i} " + "x " * 20)
            seen["tool_use"] += 1
        else:
            engine.add_assistant(f"done {i} " + "y " * 15)
    return out, seen


@pytest.mark.parametrize("blueprint", [BLUEPRINT, COMPACTING], ids=["evicting", "compacting"])
def test_payloads_with_warm_render_caches_are_byte_identical_to_cold_ones(blueprint: str) -> None:
    """Anthropic, OpenAI Chat and OpenAI Responses payloads of every turn, warm vs cold."""
    warm, seen = _play(60, clear_each_turn=False, blueprint=blueprint)
    cold, seen_cold = _play(60, clear_each_turn=True, blueprint=blueprint)
    assert seen == seen_cold
    # the session really exercises notes, a changing rewritten region, frozen tail copies,
    # single and parallel tool calls and a rewritten conversation prefix
    assert seen["note"] > 0
    assert seen["env_changed"] > 0
    assert seen["frozen"] > 0
    assert seen["tool_use"] > 0
    assert seen["parallel"] > 0
    assert seen["prefix_rewritten"] > 0
    if blueprint is COMPACTING:
        assert seen["compaction"] > 0
    assert len(warm) == len(cold)
    for n, (w, c) in enumerate(zip(warm, cold, strict=True)):
        assert w == c, (
            f"payload {n} ({('engine', 'anthropic', 'chat', 'responses')[n % 4]}) differs"
        )


def test_the_unchanged_front_is_shared_and_a_moved_marker_renders_its_message_fresh() -> None:
    from regio.runtime import Engine, ExtractiveSummarizer
    from regio.tokens import get_counter

    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        BLUEPRINT.replace("budget: 1500", 'budget: "80%"'),
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter),
    )
    payloads: list[dict[str, Any]] = []
    snaps: list[str] = []
    for i in range(6):
        engine.add_user(f"u{i} " + "word " * 400)
        _, p = engine.request("anthropic", "claude-sonnet-4-5")
        payloads.append(p)
        snaps.append(json.dumps(p))
        engine.add_assistant(f"a{i}")
    a, b = payloads[-2]["messages"], payloads[-1]["messages"]
    # the unchanged front is shared, the marked newest message is rendered fresh
    assert a[0] is b[0]
    marked = [m for m in b if any("cache_control" in c for c in m["content"])]
    assert marked
    assert all(all(m is not x for x in a) for m in marked)
    # nothing reused was mutated by later renders: every payload still has its bytes
    assert [json.dumps(p) for p in payloads] == snaps


@pytest.mark.parametrize("kind", ["chat", "responses"])
def test_openai_payloads_share_their_unchanged_front_and_never_mutate_it(kind: str) -> None:
    from regio.runtime import Engine, ExtractiveSummarizer
    from regio.tokens import get_counter

    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        BLUEPRINT, token_counter=counter, summarizer=ExtractiveSummarizer(counter=counter)
    )
    render = render_openai_chat if kind == "chat" else render_openai_responses
    field = "messages" if kind == "chat" else "input"
    payloads: list[dict[str, Any]] = []
    snaps: list[str] = []
    for i in range(6):
        engine.add_user(f"u{i}")
        req, _ = engine.request("anthropic", "claude-sonnet-4-5")
        payloads.append(render(req, model="m"))
        snaps.append(json.dumps(payloads[-1]))
        engine.add_assistant(f"a{i}", [ToolUse(f"c{i}", "ls", {"i": i})])
        engine.add_tool_result(f"c{i}", f"r{i}")
    a, b = payloads[-2][field], payloads[-1][field]
    assert len(b) > len(a) > 3
    # the first conversation message is the same dict; the tail (changed) is a new one
    start = 1 if kind == "chat" else 0
    assert a[start] is b[start]
    assert b[-1] is not a[-1]
    assert [json.dumps(p) for p in payloads] == snaps


def test_a_warm_chat_render_still_rejects_a_changed_tail_that_breaks_w_o() -> None:
    from regio.layout.model import LayoutBlock
    from regio.runtime import Engine, ExtractiveSummarizer
    from regio.tokens import get_counter

    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        BLUEPRINT, token_counter=counter, summarizer=ExtractiveSummarizer(counter=counter)
    )
    for i in range(4):
        engine.add_user(f"u{i}")
        engine.add_assistant(f"a{i}")
    req, _ = engine.request("anthropic", "claude-sonnet-4-5")
    render_openai_chat(req, model="m")  # warms the slot
    last = max(b.message for b in req.blocks if b.message is not None)
    orphan = LayoutBlock(
        level="messages",
        role="tool",
        tokens=3,
        digest="d",
        prefix_hash="h",
        block=ToolResult("nope", "r"),
        message=last + 1,
        source="x",
    )
    bad = msgspec.structs.replace(req, blocks=(*req.blocks, orphan), total_tokens=-1)
    with pytest.raises(LayoutError, match=r"W-O\.1"):
        render_openai_chat(bad, model="m")


# ----------------------------------------------------------------- resumable checks (property)

_ids = st.sampled_from(["a", "b", "c"])
_anthropic_block = st.one_of(
    st.builds(lambda: {"type": "text", "text": "t"}),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "n", "input": {}}, _ids),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, _ids),
)
_anthropic_messages = st.lists(
    st.builds(
        lambda r, c: {"role": r, "content": c},
        st.sampled_from(["user", "assistant"]),
        st.lists(_anthropic_block, min_size=1, max_size=3),
    ),
    max_size=8,
)


@settings(max_examples=80, deadline=None)
@given(_anthropic_messages, st.integers(0, 8))
def test_a_resumed_anthropic_check_equals_the_whole_payload_check(
    messages: list[dict[str, Any]], split: int
) -> None:
    split = min(split, len(messages))
    seen: dict[str, int] = {}
    head = anthropic_range(messages, 0, seen, stop=split)
    tail = anthropic_range(messages, split, seen)
    assert head + tail + anthropic_first_message(messages) == check_anthropic(
        {"messages": messages}
    )


_chat_messages = st.lists(
    st.one_of(
        st.builds(lambda: {"role": "user", "content": "u"}),
        st.builds(lambda: {"role": "system", "content": "s"}),
        st.builds(
            lambda ids: {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": i, "type": "function"} for i in ids],
            },
            st.lists(_ids, max_size=2),
        ),
        st.builds(lambda i: {"role": "tool", "tool_call_id": i, "content": "r"}, _ids),
    ),
    max_size=8,
)


@settings(max_examples=80, deadline=None)
@given(_chat_messages, st.integers(0, 8))
def test_a_resumed_openai_chat_check_equals_the_whole_payload_check(
    messages: list[dict[str, Any]], split: int
) -> None:
    split = min(split, len(messages))
    head, states = openai_chat_range(messages[:split], 0, ChatState())
    state = states[-1] if states else ChatState()
    tail, states2 = openai_chat_range(messages, split, state)
    end = states2[-1] if states2 else state
    assert head + tail + openai_chat_end(end) == check_openai_chat({"messages": messages})
