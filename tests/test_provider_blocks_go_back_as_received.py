"""A provider's block regio cannot read (Anthropic ``redacted_thinking``, a server tool's call and
result) is kept with its message and sent back exactly as received, in its place, in every
Anthropic request; other APIs' payloads leave it out; a proxy session that holds one is managed,
not passed through."""

from __future__ import annotations

import json
import tempfile
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.adapters.chat import response_items
from regio.content import (
    ANTHROPIC_PROVIDER_BLOCKS,
    ANTHROPIC_SERVER_CALLS,
    RESPONSES_PROVIDER_ITEMS,
    ContentTypeError,
    Message,
    ProviderBlock,
    Text,
    ToolUse,
    canonical_json,
)
from regio.engine import Engine
from regio.providers.wire import anthropic_completion
from regio.sdk._media import message_of
from regio.tokens import get_counter

REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"}
SEARCH = {
    "type": "server_tool_use",
    "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
    "name": "web_search",
    "input": {"query": "claude shannon birth date"},
}
RESULTS = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
            "title": "Claude Shannon - Wikipedia",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y",
            "page_age": "April 30, 2025",
        }
    ],
}
BLUEPRINT = """\
version: 1
name: provider-blocks
model:
  {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000, max_output_tokens: 1000}
tools: {context: none}
regions:
  - {name: conversation, kind: sliding_window, budget: 150000}
"""


def _engine() -> Engine:
    return Engine.from_blueprint(BLUEPRINT)


def _assistant_content(payload: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in payload["messages"] if m["role"] == "assistant"]


def test_a_response_with_redacted_thinking_and_a_web_search_goes_back_as_it_came() -> None:
    response = {
        "content": [REDACTED, SEARCH, RESULTS, {"type": "text", "text": "April 30, 1916."}],
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "stop_reason": "end_turn",
    }
    engine = _engine()
    engine.add_message(Message.user("When was Claude Shannon born?"))
    engine.add_message(anthropic_completion(response).message)
    engine.add_message(Message.user("And where?"))
    payload = engine.request("anthropic", "claude-sonnet-4-6")[1]
    (sent,) = _assistant_content(payload)
    assert sent == [REDACTED, SEARCH, RESULTS, {"type": "text", "text": "April 30, 1916."}]
    assert all("cache_control" not in b for b in sent[:3])


def test_an_sdk_message_with_provider_blocks_reads_them_as_received_and_chat_leaves_them_out() -> (
    None
):
    message = message_of(
        {"role": "assistant", "content": [REDACTED, SEARCH, RESULTS, {"type": "text", "text": "x"}]}
    )
    assert message.blocks[:3] == (
        ProviderBlock("anthropic", REDACTED),
        ProviderBlock("anthropic", SEARCH),
        ProviderBlock("anthropic", RESULTS),
    )
    engine = _engine()
    engine.add_message(Message.user("q"))
    engine.add_message(message)
    engine.add_message(Message.user("next"))
    chat = engine.request("openai", "gpt-5")[1]
    assert [m for m in chat["messages"] if m["role"] == "assistant"] == [
        {"role": "assistant", "content": "x"}
    ]


@pytest.mark.parametrize(
    ("call", "result"),
    [("server_tool_use", "web_search_tool_result"), ("mcp_tool_use", "mcp_tool_result")],
)
def test_a_paused_turn_names_its_open_server_or_mcp_call_and_never_an_answered_one(
    call: str, result: str
) -> None:
    """A turn the API paused (``pause_turn``) ends with a call it runs itself; the open one is
    the call no result block of the same turn answers (regio.proxy.readers.paused_call)."""
    from regio.proxy.readers import paused_call

    def turn(*blocks: dict[str, Any]) -> list[Message]:
        return [Message("assistant", tuple(ProviderBlock("anthropic", b) for b in blocks))]

    done = {"type": call, "id": "a1", "name": "t", "input": {}}
    answer = {"type": result, "tool_use_id": "a1", "content": []}
    open_ = {"type": call, "id": "a2", "name": "t", "input": {}}
    assert paused_call(turn(done, answer, open_)) == "a2"
    assert paused_call(turn(done, answer)) is None
    assert ANTHROPIC_SERVER_CALLS <= ANTHROPIC_PROVIDER_BLOCKS


@pytest.mark.parametrize(
    ("api", "block", "fix"),
    [
        ("openai", REDACTED, "'anthropic'"),
        ("anthropic", {"type": "compaction", "content": "s"}, "redacted_thinking"),
        ("anthropic", {"data": "no type"}, "server_tool_use"),
    ],
)
def test_a_provider_block_of_another_api_or_type_is_refused_naming_what_is_kept(
    api: str, block: dict[str, Any], fix: str
) -> None:
    with pytest.raises(ContentTypeError, match="provider_block") as caught:
        ProviderBlock(api, block)
    assert fix in str(caught.value)


def test_a_provider_block_counts_as_its_json_text_and_gives_summaries_no_text() -> None:
    counter = get_counter("o200k_base")
    block = ProviderBlock("anthropic", RESULTS)
    assert counter.count_block(block) == counter.count(canonical_json(RESULTS).decode()) > 0
    from regio.content import block_text

    assert block_text(block) == ""


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
PROVIDER_BLOCKS = st.builds(
    lambda kind, extra: ProviderBlock("anthropic", {**extra, "type": kind}),
    st.sampled_from(sorted(ANTHROPIC_PROVIDER_BLOCKS)),
    st.dictionaries(
        st.text(min_size=1, max_size=8).filter(lambda k: k != "type"), JSON, max_size=3
    ),
)


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(
        st.lists(
            PROVIDER_BLOCKS | st.builds(Text, st.text(min_size=1, max_size=30)),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_every_provider_block_is_sent_as_received_in_its_place_and_survives_a_save(
    turns: list[list[Any]],
) -> None:
    """Property: whatever the provider blocks and their payloads, each assistant message is
    rendered with its blocks in order, a provider block as the very object it was, and a saved
    and decoded message is equal to the one admitted."""
    engine = _engine()
    sent_turns = []
    for n, blocks in enumerate(turns):
        engine.add_message(Message.user(f"question {n}"))
        message = Message("assistant", tuple(blocks))
        assert msgspec.json.decode(msgspec.json.encode(message), type=Message) == message
        engine.add_message(message)
        sent_turns.append(blocks)
    engine.add_message(Message.user("go on"))
    payload = engine.request("anthropic", "claude-sonnet-4-6")[1]
    rendered = _assistant_content(payload)
    assert len(rendered) == len(sent_turns)
    for blocks, content in zip(sent_turns, rendered, strict=True):
        expected = [
            b.block if isinstance(b, ProviderBlock) else {"type": "text", "text": b.text}
            for b in blocks
        ]
        assert [{k: v for k, v in c.items() if k != "cache_control"} for c in content] == expected
        assert all(
            "cache_control" not in c
            for c, b in zip(content, blocks, strict=True)
            if isinstance(b, ProviderBlock)
        )


def test_a_tool_call_beside_provider_blocks_still_needs_its_result() -> None:
    engine = _engine()
    engine.add_message(Message.user("search, then read"))
    engine.add_message(
        Message(
            "assistant",
            (
                ProviderBlock("anthropic", SEARCH),
                ProviderBlock("anthropic", RESULTS),
                ToolUse("toolu_1", "read", {"path": "a.py"}),
            ),
        )
    )
    payload = engine.request("anthropic", "claude-sonnet-4-6")[1]
    last = payload["messages"][-1]
    assert last["role"] == "user"
    assert any(
        b.get("type") == "tool_result" and b["tool_use_id"] == "toolu_1" for b in last["content"]
    )


WEB_SEARCH_CALL = {
    "type": "web_search_call",
    "id": "ws_68b",
    "status": "completed",
    "action": {"type": "search", "query": "claude shannon birth date"},
}


def test_a_responses_web_search_call_is_its_own_item_and_goes_back_as_received() -> None:
    messages = response_items(
        [
            {"role": "user", "content": "When was Claude Shannon born?"},
            WEB_SEARCH_CALL,
            {"type": "message", "role": "assistant", "content": "April 30, 1916."},
            {"role": "user", "content": "And where?"},
        ]
    )
    assert messages[1] == Message(
        "assistant", (ProviderBlock("openai_responses", WEB_SEARCH_CALL),)
    )
    engine = _engine()
    for m in messages:
        engine.add_message(m)
    responses = engine.request("openai_responses", "gpt-5")[1]
    assert [i for i in responses["input"] if i.get("type") == "web_search_call"] == [
        WEB_SEARCH_CALL
    ]
    order = [i.get("type", i.get("role")) for i in responses["input"]]
    assert order.index("web_search_call") < order.index("assistant")
    anthropic = engine.request("anthropic", "claude-sonnet-4-6")[1]
    assert "web_search_call" not in str(anthropic["messages"])


def test_a_responses_item_that_another_item_answers_is_still_refused_by_name() -> None:
    from regio.errors import SDKInputError

    with pytest.raises(SDKInputError, match="computer_call") as caught:
        response_items([{"type": "computer_call", "call_id": "c1", "action": {}}])
    assert "web_search_call" in str(caught.value)
    assert "computer_call" not in RESPONSES_PROVIDER_ITEMS


# -- through the proxy ------------------------------------------------------------------------

starlette = pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

from proxy_support import ScriptedUpstream, Step, blueprint, in_process, metric_families  # noqa: E402

PROXY_BLUEPRINT = blueprint(
    "proxy-provider-blocks", "anthropic:claude-x", window=8000, output=500, conversation=6000,
    history=1000,
)  # fmt: skip


def test_a_proxy_session_with_redacted_thinking_and_searches_is_managed() -> None:
    steps = [Step(f"answer {i} " + "word " * 150) for i in range(24)]
    upstream = ScriptedUpstream(steps, 8000, 500)
    store = f"sqlite:{tempfile.mkdtemp()}/p.db"
    with in_process(upstream, PROXY_BLUEPRINT, store) as client:
        headers = {"x-api-key": "k", "x-regio-session": "s1"}
        messages: list[dict[str, Any]] = [{"role": "user", "content": "find things"}]
        for step in range(24):
            body = {"model": "claude-x", "max_tokens": 50, "messages": messages}
            response = client.post("/v1/messages", json=body, headers=headers)
            assert response.status_code == 200, response.text
            reply = response.json()["content"]
            search = {**SEARCH, "id": f"srvtoolu_{step}"}
            results = {**RESULTS, "tool_use_id": f"srvtoolu_{step}"}
            messages += [
                {"role": "assistant", "content": [REDACTED, search, results, *reply]},
                {"role": "user", "content": f"step {step} " + "more " * 120},
            ]
        families = metric_families(client.get("/metrics").text)
    passed = [s for s in families["regio_passthrough"].samples if s.name.endswith("_total")]
    assert sum(s.value for s in passed) == 0
    assert len(upstream.requests) == 24
    sent_by_search = {
        b["id"]: m["content"]
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "server_tool_use"
    }
    newest = upstream.requests[-1]["messages"]
    assert len(newest) < len(messages) - 1  # older turns were compacted away
    for n, request in enumerate(upstream.requests):  # every call, as the model received it
        kept = [
            m["content"]
            for m in request["messages"]
            if isinstance(m["content"], list)
            and any(b.get("type") == "server_tool_use" for b in m["content"])
        ]
        for content in kept:
            search_id = next(b["id"] for b in content if b["type"] == "server_tool_use")
            unmarked = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
            assert unmarked == sent_by_search[search_id], n
        assert n < 2 or len(kept) >= 2  # the newest turns went up with their blocks


def test_a_responses_proxy_session_with_web_search_calls_is_managed() -> None:
    steps = [Step(f"answer {i} " + "word " * 150) for i in range(16)]
    upstream = ScriptedUpstream(steps, 8000, 500)
    bp = blueprint(
        "proxy-ws", "openai:gpt-5", window=8000, output=500, conversation=6000, history=1000
    )
    with in_process(upstream, bp, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        headers = {"authorization": "Bearer k", "x-regio-session": "r1"}
        items: list[dict[str, Any]] = [{"role": "user", "content": "find things"}]
        for step in range(16):
            body = {"model": "gpt-5", "input": items}
            response = client.post("/v1/responses", json=body, headers=headers)
            assert response.status_code == 200, response.text
            call = {**WEB_SEARCH_CALL, "id": f"ws_{step}"}
            items += [
                call,
                *[o for o in response.json()["output"] if o.get("type") == "message"],
                {"role": "user", "content": f"step {step} " + "more " * 120},
            ]
        families = metric_families(client.get("/metrics").text)
    passed = [s for s in families["regio_passthrough"].samples if s.name.endswith("_total")]
    assert sum(s.value for s in passed) == 0
    newest = upstream.requests[-1]["input"]
    assert len(newest) < len(items) - 1  # older turns were compacted away
    calls = [i for i in newest if i.get("type") == "web_search_call"]
    assert calls and calls[-1] == {**WEB_SEARCH_CALL, "id": "ws_14"}
    assert all(c == {**WEB_SEARCH_CALL, "id": c["id"]} for c in calls)


# -- defects a review found (each failed before its fix) --------------------------------------

R_SEARCH = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "q"},
}
R_RESULTS = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
R_WS = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "q"},
}


def _served(path: str, model: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    """One request through a proxy of an 8,000-token window; returns (the upstream, the
    proxy's pass-through counts by reason)."""
    up = ScriptedUpstream([Step("a")], 8000, 500)
    bp = blueprint("pb", model, window=8000, output=500, conversation=6000)
    with in_process(up, bp, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        assert client.post(path, json=body, headers=headers).status_code == 200
        samples = metric_families(client.get("/metrics").text)["regio_passthrough"].samples
    passed = {s.labels["reason"]: s.value for s in samples if s.name.endswith("_total")}
    return up, passed


def test_a_paused_turn_sent_back_to_continue_goes_upstream_as_sent() -> None:
    msgs = [
        {"role": "user", "content": "search"},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}, R_SEARCH]},
    ]
    body = {"model": "claude-x", "max_tokens": 50, "messages": msgs}
    up, passed = _served("/v1/messages", "anthropic:claude-x", body, {"x-api-key": "k"})
    # Anthropic: "web_search tool use with id ... was found without a corresponding
    # web_search_tool_result block" when anything follows the paused assistant turn
    assert up.requests[-1]["messages"] == msgs
    assert passed.get("paused_turn") == 1


def test_the_reasoning_item_before_a_web_search_call_goes_upstream_with_it() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "x"}],
    }
    items = [
        {"role": "user", "content": "q"},
        reasoning,
        R_WS,
        answer,
        {"role": "user", "content": "n"},
    ]
    body = {"model": "gpt-5", "input": items}
    up, passed = _served("/v1/responses", "openai:gpt-5", body, {"authorization": "Bearer k"})
    sent = up.requests[-1]["input"]
    # "Item 'ws_1' of type 'web_search_call' was provided without its required 'reasoning' item"
    assert [i.get("type", i.get("role")) for i in sent] == [
        "user", "reasoning", "web_search_call", "assistant", "user"
    ]  # fmt: skip
    assert sent[1] == reasoning and sent[2] == R_WS
    assert sum(passed.values()) == 0


def test_a_clients_moved_cache_marker_on_a_provider_block_is_never_sent_again() -> None:
    up = ScriptedUpstream([Step(f"a{i}") for i in range(12)], 16000, 500)
    bp = blueprint("pb", "anthropic:claude-x", window=16000, output=500, conversation=12000)
    headers = {"x-api-key": "k", "x-regio-session": "s"}
    with in_process(up, bp, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        for step in range(10):
            for m in msgs:  # the client moves its one marker to the newest assistant turn
                for b in m["content"] if isinstance(m["content"], list) else []:
                    b.pop("cache_control", None)
            if len(msgs) > 1:
                msgs[-2]["content"][-1]["cache_control"] = {"type": "ephemeral"}
            body = {"model": "claude-x", "max_tokens": 50, "messages": msgs}
            assert client.post("/v1/messages", json=body, headers=headers).status_code == 200
            s = {**R_SEARCH, "id": f"srvtoolu_{step}"}
            res = {**R_RESULTS, "tool_use_id": f"srvtoolu_{step}"}
            msgs += [
                {"role": "assistant", "content": [{"type": "text", "text": "x"}, s, res]},
                {"role": "user", "content": f"more {step}"},
            ]
    for request in up.requests:
        blocks = [
            b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]
        ]
        assert sum("cache_control" in b for b in blocks) <= 4
        assert not any(
            "cache_control" in b for b in blocks if b["type"] in ANTHROPIC_PROVIDER_BLOCKS
        )  # the layout places markers, never on a block kept as received


def test_responses_items_kept_as_received_keep_their_place_between_texts():
    from regio.adapters.chat import response_items
    from regio.proxy.readers import merge_calls

    items = [
        {"role": "user", "content": "q"},
        {"type": "message", "role": "assistant", "content": "I'll search."},
        R_WS,
        {"type": "message", "role": "assistant", "content": "Found it."},
        {"role": "user", "content": "next"},
    ]
    e = Engine.from_blueprint(BLUEPRINT)
    for m in merge_calls(response_items(items)):
        e.add_message(m)
    got = [i.get("type", i.get("role")) for i in e.request("openai_responses", "gpt-5")[1]["input"]]
    assert got == ["user", "assistant", "web_search_call", "assistant", "user"], got


def test_an_anthropic_payload_has_no_message_made_only_of_another_apis_blocks():
    e = Engine.from_blueprint(BLUEPRINT)
    e.add_message(Message.user("q"))
    e.add_message(Message("assistant", (ProviderBlock("openai_responses", R_WS),)))
    e.add_message(Message.user("next"))
    msgs = e.request("anthropic", "claude-sonnet-4-6")[1]["messages"]
    assert all(m["content"] for m in msgs), msgs


def test_litellm_leaves_server_tool_blocks_out_instead_of_raising():
    from regio.adapters import litellm as L

    e = Engine.from_blueprint(BLUEPRINT)
    e.add_message(Message.user("q"))
    e.add_response(
        {
            "type": "message",
            "role": "assistant",
            "id": "m",
            "model": "claude-sonnet-4-6",
            "content": [R_SEARCH, R_RESULTS, {"type": "text", "text": "ans"}],
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "stop_reason": "end_turn",
        }
    )
    e.add_message(Message.user("next"))
    sent = L.payload(e, model="anthropic/claude-sonnet-4-6")["messages"]
    assistant = [m for m in sent if m["role"] == "assistant"]
    assert assistant and "server_tool_use" not in str(assistant) and "ans" in str(assistant)


def test_a_provider_blocks_layout_share_follows_its_own_size():
    big = {
        **R_RESULTS,
        "content": [
            {
                "type": "web_search_result",
                "url": "u",
                "title": "t",
                "encrypted_content": "".join(
                    chr(97 + (i * 7919) % 26) + str(i % 10) for i in range(4000)
                ),
            }
        ],
    }
    e = Engine.from_blueprint(BLUEPRINT)
    e.add_message(Message.user("q"))
    e.add_message(
        Message(
            "assistant",
            (ProviderBlock("anthropic", R_SEARCH), ProviderBlock("anthropic", big), Text("short")),
        )
    )
    e.add_message(Message.user("next"))
    req, _ = e.request("anthropic", "claude-sonnet-4-6")
    for b in req.blocks:
        if isinstance(b.block, ProviderBlock) and b.block.kind == "web_search_tool_result":
            assert b.tokens >= e.counter.count_block(b.block) // 2, (
                b.tokens,
                e.counter.count_block(b.block),
            )


def test_a_streamed_mcp_tool_use_keeps_its_input():
    from regio.proxy.sse import SSEEvent
    from regio.proxy.streams import AnthropicRelay

    evs = [
        {"type": "message_start", "message": {"usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "mcp_tool_use",
                "id": "mcptoolu_1",
                "name": "echo",
                "server_name": "s",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"text": "hi"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    relay = AnthropicRelay(regio_tools=frozenset())
    for d in evs:
        relay.feed(SSEEvent(b"data: " + json.dumps(d).encode() + b"\n\n", d["type"], json.dumps(d)))
    assert relay.reply().message.blocks[0].block["input"] == {"text": "hi"}


def test_a_streamed_block_whose_type_is_not_a_string_never_raises_in_the_relay() -> None:
    """An upstream's malformed content block (a ``type`` that is a list) is passed through
    and read as nothing, never a ``TypeError`` in the middle of the client's stream."""
    from regio.proxy.sse import SSEEvent
    from regio.proxy.streams import AnthropicRelay

    evs = [
        {"type": "message_start", "message": {"usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": ["odd"]}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    relay = AnthropicRelay(regio_tools=frozenset())
    for d in evs:
        relay.feed(SSEEvent(b"data: " + json.dumps(d).encode() + b"\n\n", d["type"], json.dumps(d)))
    reply = relay.reply()
    assert reply.message.blocks == () and reply.raw["content"] == [{"type": ["odd"]}]
