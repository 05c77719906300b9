"""Live check through the proxy: a real llama.cpp server behind ``regio proxy``, the official
OpenAI SDK in front. The server's reported cached tokens equal the proxy's own prediction
(``predicted`` beside ``read`` on the status page and in ``/metrics``) on every request.

Run (docs/proxy.md, docs/live.md)::

    ../shared/tools/local-llm.sh start
    export REGIO_LIVE_BASE_URL=http://127.0.0.1:18080/v1
    .venv/bin/pytest -m live tests/test_proxy_live_llamacpp.py -s

The model writes the text; the tool calls are scripted by the loop between turns (Gemma 3
270M does not call tools reliably), so the client's assistant messages differ from what the
model generated, and a 900-token window makes the blueprint compact midway: both change the
prompt far from its end, where only a per-token slot model can say how much is reused.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("openai", reason="the openai SDK is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx
import openai

from live_support import BASE_URL, LIVE
from proxy_support import blueprint, running

pytestmark = LIVE


BLUEPRINT = blueprint(
    "live-proxy",
    "llamacpp:gemma-3-270m",
    window=900,
    output=24,
    conversation=700,
    history=300,
    system=200,
    extra="summarizer: {max_summary_tokens: 200}\n",
    tokenizer="heuristic",
)
STEPS = 8
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_log",
            "description": "Show a build log.",
            "parameters": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }
]


def _log(step: int) -> str:
    return "\n".join(f"[phase {step}] target {i}: ok ({3 * i + step} files)" for i in range(6))


def _ask(client: Any, system: str, history: list[dict[str, Any]]) -> Any:
    return client.chat.completions.create(
        model="gemma-3-270m",
        messages=[{"role": "system", "content": system}, *history],
        tools=TOOLS,
        max_tokens=24,
        temperature=0.0,
        extra_body={"logprobs": True, "cache_prompt": True},
    )


def _turn(client: Any, system: str, history: list[dict[str, Any]], step: int) -> None:
    """One step: the model's text, the scripted ``read_log`` call and its result."""
    reply = _ask(client, system, history)
    text = reply.choices[0].message.content or "(no text)"
    call = {
        "id": f"c{step}",
        "type": "function",
        "function": {"name": "read_log", "arguments": json.dumps({"phase": str(step)})},
    }
    history.append({"role": "assistant", "content": text, "tool_calls": [call]})
    history.append({"role": "tool", "tool_call_id": f"c{step}", "content": _log(step)})


def test_the_servers_cached_tokens_equal_the_proxys_prediction_on_every_request(tmp_path):
    from regio.agent.llamacpp import server_root
    from regio.proxy import ProxyConfig, create_app

    assert BASE_URL is not None
    system = f"Session {uuid.uuid4().hex[:12]}. You are a build assistant. Say what to do next."
    app = create_app(ProxyConfig(BLUEPRINT, server_root(BASE_URL), store=f"sqlite:{tmp_path}/p.db"))
    with running(app) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0, timeout=300)
        # priming: one request of another session through the same path makes the slot's content
        # known to the proxy's slot model (its own figure is not compared)
        primer = [{"role": "user", "content": "Ready?"}]
        client.chat.completions.create(
            model="gemma-3-270m",
            messages=[{"role": "system", "content": system}, *primer],
            max_tokens=24,
            temperature=0.0,
            extra_body={"logprobs": True, "cache_prompt": True},
            extra_headers={"x-regio-session": "primer"},
        )
        history: list[dict[str, Any]] = [
            {"role": "user", "content": "Build kestrel, phase by phase."}
        ]
        for step in range(STEPS):
            _turn(client, system, history, step)
        status = httpx.get(url + "/status.json").json()
    session = next(s for s in status["sessions"] if s["id"] != "primer")
    reported = [p["read"] for p in session["chart"]]
    predicted = [p["predicted"] for p in session["chart"]]
    print(
        json.dumps(
            {"reported": reported, "predicted": predicted, "compactions": session["compactions"]}
        )
    )
    assert len(reported) == STEPS
    assert session["compactions"] > 0, "the window never compacted: the check is too easy"
    assert reported == predicted


def test_the_llamacpp_server_writes_the_summaries_through_the_proxy(tmp_path):
    """``--summarizer upstream``: the compactions' summaries are requests to the same server
    (the client's model, its key header), answered by the model; every client request
    succeeds."""
    from regio.agent.llamacpp import server_root
    from regio.proxy import ProxyConfig, create_app

    assert BASE_URL is not None
    system = f"Session {uuid.uuid4().hex[:12]}. You are a build assistant. Say what to do next."
    log = tmp_path / "requests.jsonl"
    config = ProxyConfig(
        BLUEPRINT,
        server_root(BASE_URL),
        store=f"sqlite:{tmp_path}/p.db",
        request_log=str(log),
        summarizer="upstream",
        summary_timeout=300,
    )
    with running(create_app(config)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0, timeout=600)
        history: list[dict[str, Any]] = [
            {"role": "user", "content": "Build kestrel, phase by phase."}
        ]
        for step in range(STEPS):
            _turn(client, system, history, step)
        metrics = httpx.get(url + "/metrics").text
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    written = [
        line for line in metrics.splitlines()
        if line.startswith("regio_summary_requests_total") and 'result="ok"' in line
    ]  # fmt: skip
    print(json.dumps([{k: v for k, v in r.items() if k.startswith("summary_")} for r in rows]))
    assert len(rows) == STEPS and all(r["status"] == 200 and r["committed"] for r in rows)
    assert sum(r["summary_calls"] for r in rows) > 0, "no compaction: the check is too easy"
    assert sum(r["summary_input_tokens"] for r in rows) > 0
    assert sum(r["summary_output_tokens"] for r in rows) > 0
    assert written and sum(float(line.rsplit(" ", 1)[1]) for line in written) > 0
