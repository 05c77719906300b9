"""What the proxy changes on the way upstream: broken tool pairs repaired, captures applied, the
client's system prompt placed; what it never changes: the client's own parameters."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.engine._history import INTERRUPTED_RESULT
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


def _metric(client: Any, name: str, **labels: str) -> float:
    total = 0.0
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def _interrupted() -> list[dict[str, Any]]:
    return [
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


def test_orphaned_tool_calls_and_results_are_repaired_upstream_with_an_event_and_never_refused(
    tmp_path,
):
    upstream = ScriptedUpstream([Step("ok")] * 4, 8000, 500)
    messages = _interrupted()
    log = tmp_path / "requests.jsonl"
    with in_process(upstream, BLUEPRINT, _store(), request_log=str(log)) as client:
        _anthropic(client, messages)
        sent = upstream.requests[-1]
        assert check_anthropic(sent) == []
        text = str(sent["messages"])
        assert "ghost" not in text and "never mind, just say hi" in text
        closing = [
            b
            for m in sent["messages"]
            for b in (m["content"] if isinstance(m["content"], list) else [])
            if b.get("type") == "tool_result" and b["tool_use_id"] == "t1"
        ]
        assert len(closing) == 1 and closing[0]["is_error"] is True  # the agent reads it failed
        assert INTERRUPTED_RESULT in str(closing[0]["content"])
        # each change counted once, by what it did (Engine.repair's actions)
        assert _metric(client, "regio_repairs_total", action="orphan_result_dropped") == 1
        assert _metric(client, "regio_repairs_total", action="call_closed") == 1
        assert _metric(client, "regio_repairs_total") == 2
        # the next request resends the same broken start: repaired once, so nothing new counts
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": "thanks"},
        ]
        _anthropic(client, messages)
        assert check_anthropic(upstream.requests[-1]) == []
        assert "ghost" not in str(upstream.requests[-1]["messages"])
        assert _metric(client, "regio_repairs_total") == 2
        sessions = client.get("/status.json").json()["sessions"]
        assert [s["repairs"] for s in sessions] == [2]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["repairs"] for line in lines] == [
        {"orphan_result_dropped": 1, "call_closed": 1},
        {},
    ]


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
        assert _metric(client, "regio_repairs_total", action="orphan_result_dropped") == 1
        assert _metric(client, "regio_repairs_total", action="call_closed") == 1


#: One exchange of a generated history: the calls the assistant makes (ids), which of them get
#: a result, and results for calls never made (ghost ids).
EXCHANGE = st.tuples(
    st.integers(0, 3), st.lists(st.booleans(), min_size=3, max_size=3), st.integers(0, 2)
)


def _broken_history(exchanges: list[tuple[int, list[bool], int]]) -> tuple[list[Any], int, int]:
    """An Anthropic history from ``exchanges``, the calls left without a result and the
    results without a call."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    open_calls = ghosts = 0
    for n, (calls, answered, ghost) in enumerate(exchanges):
        ids = [f"c{n}_{k}" for k in range(calls)]
        uses = [{"type": "tool_use", "id": i, "name": "bash", "input": {"k": i}} for i in ids]
        text = {"type": "text", "text": f"a{n}"}
        messages.append({"role": "assistant", "content": [text, *uses]})
        content: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": i, "content": f"out {i}"}
            for i, yes in zip(ids, answered, strict=False)
            if yes
        ]
        content += [
            {"type": "tool_result", "tool_use_id": f"ghost{n}_{k}", "content": "stale"}
            for k in range(ghost)
        ]
        content.append({"type": "text", "text": f"u{n}"})
        messages.append({"role": "user", "content": content})
        open_calls += sum(1 for _, yes in zip(ids, answered, strict=False) if not yes)
        ghosts += ghost
    return messages, open_calls, ghosts


@settings(
    max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "80")) // 10 or 1,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(EXCHANGE, min_size=1, max_size=5))
def test_any_broken_history_goes_upstream_valid_with_every_call_closed_and_each_repair_counted(
    exchanges,
):
    """Property: whatever calls and results a client leaves unpaired, the upstream request is
    valid, holds every call the client made with exactly one result, no result of a call it
    never made, and each unpaired call or result counts one repair."""
    messages, open_calls, ghosts = _broken_history(exchanges)
    upstream = ScriptedUpstream([Step("ok")], 8000, 500)
    with in_process(upstream, BLUEPRINT, _store()) as client:
        _anthropic(client, messages)
        sent = upstream.requests[-1]
        assert check_anthropic(sent) == []
        blocks = [m["content"] for m in sent["messages"] if isinstance(m["content"], list)]
        blocks = [b for content in blocks for b in content]
        calls = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        made = [b["id"] for m in messages[1::2] for b in m["content"] if b["type"] == "tool_use"]
        assert calls == made and sorted(results) == sorted(made)
        assert _metric(client, "regio_repairs_total", action="call_closed") == open_calls
        assert _metric(client, "regio_repairs_total", action="orphan_result_dropped") == ghosts
        assert _metric(client, "regio_repairs_total") == open_calls + ghosts


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


PARK_BLUEPRINT = """
version: 1
name: proxy-park
model: {provider: anthropic, name: claude-x, context_window: 16000, max_output_tokens: 500}
tokenizer: o200k_base
tools: {context: none}
regions:
  - name: tool_output
    kind: temporary
    volatility: rewritten
    budget: 6000
    capture: [{rule: park, min_tokens: 300, keep: 1}]
  - {name: conversation, kind: sliding_window, budget: 8000}
"""


def test_two_large_results_of_one_message_are_parked_side_by_side_and_neither_is_lost():
    upstream = ScriptedUpstream([Step("ok")] * 2, 16000, 500)
    big = {k: "\n".join(f"{k} line {i}: " + "data " * 20 for i in range(40)) for k in "ab"}
    messages = [
        {"role": "user", "content": "read both files"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "ta", "name": "bash", "input": {"f": "a"}},
                {"type": "tool_use", "id": "tb", "name": "bash", "input": {"f": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "ta", "content": big["a"]},
                {"type": "tool_result", "tool_use_id": "tb", "content": big["b"]},
            ],
        },
    ]
    with in_process(upstream, PARK_BLUEPRINT, _store()) as client:
        _anthropic(client, messages)
    sent = json.dumps(upstream.requests[-1])
    for k in "ab":  # the agent reads both before its next call: neither displaces the other
        assert f"{k} line 39" in sent
    assert sent.count("tokens of output parked in region 'tool_output'") == 2
