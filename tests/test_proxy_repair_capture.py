"""What the proxy changes on the way upstream: broken tool pairs repaired, captures applied, the
client's system prompt placed; what it never changes: the client's own parameters."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.layout.repair import check_anthropic, check_openai_chat

BLUEPRINT = blueprint(
    "proxy-repair", "anthropic:claude-x", window=8000, output=500, conversation=6000
)
CAPTURE_BLUEPRINT = """
version: 1
name: proxy-capture
model: {provider: anthropic, name: claude-x, context_window: 12000, max_output_tokens: 500}
tokenizer: o200k_base
tools: {context: none}
regions:
  - name: system
    kind: pinned
    volatility: stable
    budget: 2000
    heading: false
    capture: [{rule: system_prompt}]
  - name: clock
    kind: pinned
    volatility: rewritten
    budget: 100
    capture: [{rule: system_prompt, pattern: '(?m)^Today is .*$'}]
  - name: env_state
    kind: keyed
    volatility: rewritten
    budget: 300
    max_entries: 1
    capture:
      - rule: footer
        key: environment
        pattern: '\\n*(?P<state>\\(Open file: .*\\)\\n\\(Current.*\\))\\n?(bash-\\$)?\\s*\\Z'
  - {name: conversation, kind: sliding_window, budget: 8000}
"""
TOOLS = [{"name": "bash", "description": "Run a command.", "input_schema": {"type": "object"}}]


def _store() -> str:
    return f"sqlite:{tempfile.mkdtemp()}/proxy.db"


def _anthropic(client: Any, messages: list[dict[str, Any]], **extra: Any) -> Any:
    body = {"model": "claude-x", "max_tokens": 50, "tools": TOOLS, "messages": messages, **extra}
    response = client.post("/v1/messages", json=body, headers={"x-api-key": "sk-ant-k"})
    assert response.status_code == 200, response.text
    return response


def _metric(client: Any, name: str) -> float:
    total = 0.0
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_orphaned_tool_calls_and_results_are_repaired_upstream_with_an_event_and_never_refused():
    upstream = ScriptedUpstream([Step("ok")] * 4, 8000, 500)
    messages = [
        {"role": "user", "content": "run the tests"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}],
        },
        # the client was interrupted: no result for t1, and a result for a call it never made
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "ghost", "content": "stale output"},
                {"type": "text", "text": "never mind, just say hi"},
            ],
        },
    ]
    with in_process(upstream, BLUEPRINT, _store()) as client:
        _anthropic(client, messages)
        sent = upstream.requests[-1]
        assert check_anthropic(sent) == []
        text = str(sent["messages"])
        assert "ghost" not in text and "never mind, just say hi" in text
        assert "t1" in text  # the call stays, with a neutral result
        assert _metric(client, "regio_repairs_total") >= 2


def test_an_orphaned_chat_tool_message_is_repaired_upstream():
    bp = BLUEPRINT.replace("provider: anthropic, name: claude-x", "provider: openai, name: gpt-5")
    upstream = ScriptedUpstream([Step("ok")] * 2, 8000, 500)
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "forget it"},
        {"role": "tool", "tool_call_id": "nobody", "content": "orphan"},
        {"role": "user", "content": "go on"},
    ]
    with in_process(upstream, bp, _store()) as client:
        response = client.post(
            "/v1/chat/completions", json={"model": "gpt-5", "messages": messages}
        )
        assert response.status_code == 200
        assert check_openai_chat(upstream.requests[-1]) == []
        assert "orphan" not in str(upstream.requests[-1]["messages"])


def test_captures_move_a_clock_line_to_the_tail_and_a_state_footer_out_of_the_conversation():
    upstream = ScriptedUpstream([Step("ok")] * 4, 12000, 500)
    system = "You are a shell agent.\nToday is 2026-12-02 10:41.\nWork carefully."
    footer = "\n(Open file: src/app.py)\n(Current directory: /repo)\nbash-$"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "look around"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"c": "ls"}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.py b.py" + footer}
            ],
        },
    ]
    with in_process(upstream, CAPTURE_BLUEPRINT, _store()) as client:
        _anthropic(client, messages, system=system)
        sent = upstream.requests[-1]
        system_text = " ".join(b["text"] for b in sent["system"])
        assert "You are a shell agent." in system_text and "Today is" not in system_text
        last = sent["messages"][-1]["content"]
        tail = " ".join(b.get("text", "") for b in last)
        assert "Today is 2026-12-02 10:41." in tail  # the rewritten region sits in the tail
        result = last[0]
        assert result["type"] == "tool_result" and result["content"] == "a.py b.py"
        assert "Current directory: /repo" in tail


def test_the_clients_own_parameters_and_unknown_tools_reach_the_upstream_as_sent():
    upstream = ScriptedUpstream([Step("ok")] * 2, 8000, 500)
    server_tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    own = {
        "name": "bash",
        "description": "Run.",
        "input_schema": {"type": "object"},
        "cache_control": {"type": "ephemeral"},
    }
    with in_process(upstream, BLUEPRINT, _store()) as client:
        body = {
            "model": "claude-x",
            "max_tokens": 77,
            "temperature": 0.3,
            "top_k": 5,
            "metadata": {"user_id": "u-1"},
            "stop_sequences": ["END"],
            "tools": [own, server_tool],
            "tool_choice": {"type": "auto"},
            "messages": [{"role": "user", "content": "hi"}],
        }
        response = client.post("/v1/messages", json=body, headers={"x-api-key": "sk-ant-k"})
        assert response.status_code == 200
    sent = upstream.requests[-1]
    for key in (
        "model",
        "max_tokens",
        "temperature",
        "top_k",
        "metadata",
        "stop_sequences",
        "tool_choice",
    ):
        assert sent[key] == body[key], key
    assert sent["tools"][-1] == server_tool
    mine = next(t for t in sent["tools"] if t.get("name") == "bash")
    assert {k: v for k, v in mine.items() if k != "cache_control"} == {
        k: v for k, v in own.items() if k != "cache_control"
    }
