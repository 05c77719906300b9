"""LiteLLM: regio never prices or sizes a window from a price map LiteLLM downloaded, whichever
of the two was imported first, and an Anthropic route carries regio's cache marks on the wire.

The import-order test runs in a fresh interpreter (the map is read at ``import litellm``), with
``httpx.get`` (LiteLLM's fetch client) answering with a doctored "remote" map, so no network is
touched and the fetch is visible. Before issue 25, importing LiteLLM first left the fetched map
in use."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("litellm")

ROOT = Path(__file__).resolve().parents[1]

#: The child: a fake remote map (the installed one with Claude Sonnet 4.6 at $1 per input
#: token), LiteLLM and the adapter imported in the order given, one completion, the figures.
CHILD = """
import json, os, sys
os.environ.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)
import httpx
import importlib.util
spec = importlib.util.find_spec("litellm")
backup = os.path.join(os.path.dirname(spec.origin), "model_prices_and_context_window_backup.json")
remote = json.load(open(backup))
remote["claude-sonnet-4-6"]["input_cost_per_token"] = 1.0
fetched = []
def fake_get(url, *args, **kwargs):
    fetched.append(url)
    return httpx.Response(200, json=remote, request=httpx.Request("GET", url))
httpx.get = fake_get
order = sys.argv[1]
if order == "litellm-first":
    import litellm
    from regio.adapters import litellm as regio_litellm
else:
    from regio.adapters import litellm as regio_litellm
    import litellm
before = litellm.model_cost["claude-sonnet-4-6"]["input_cost_per_token"]
import regio
engine = regio.Engine.from_blueprint("examples/blueprints/coding-agent.yaml")
engine.add_user("hello")
regio_litellm.completion(engine, model="anthropic/claude-sonnet-4-6", mock_response="hi")
after = litellm.model_cost["claude-sonnet-4-6"]["input_cost_per_token"]
print(json.dumps({"fetched": len(fetched), "before": before, "after": after}))
"""


def _child(order: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", CHILD, order],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def test_importing_an_adapter_switches_litellm_to_its_installed_price_map(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What makes a later ``import litellm`` read no map online (LiteLLM's documented switch,
    read at its import); a value the user set is kept."""
    import importlib

    import regio.adapters

    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    importlib.reload(regio.adapters)
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "False")
    importlib.reload(regio.adapters)
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "False"


def test_with_litellm_imported_first_the_installed_price_map_is_put_back() -> None:
    figures = _child("litellm-first")
    assert figures["fetched"] == 1 and figures["before"] == 1.0  # LiteLLM's own import
    assert figures["after"] != 1.0  # regio's calls price from the installed map


def test_acompletion_records_the_reply_like_completion() -> None:
    import regio
    from regio.adapters import litellm as regio_litellm

    engine = regio.Engine.from_blueprint(ROOT / "examples" / "blueprints" / "coding-agent.yaml")
    engine.add_user("Fix the failing test")
    run = regio_litellm.acompletion(engine, model="openai/gpt-5", mock_response="Reading it.")
    reply = asyncio.run(run)
    assert reply.choices[0].message.content == "Reading it."
    assert engine.transcript()[-1].entry.text == "Reading it."


def test_an_anthropic_route_carries_every_planned_mark_on_tool_calls_and_tools() -> None:
    """A breakpoint on a ``tool_use`` block and on the tools reaches LiteLLM as
    ``cache_control`` on the tool call and the tool (LiteLLM then sends it to the API)."""
    from regio.adapters.litellm import messages_of_anthropic

    marker = {"type": "ephemeral"}
    marked = {"cache_control": marker}
    text, call = {"type": "text"}, {"type": "tool_use", "id": "c1", "name": "r", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "c1", "content": "out"}
    body = {
        "system": [{**text, "text": "S", **marked}],
        "messages": [
            {"role": "user", "content": [{**text, "text": "Q"}]},
            {"role": "assistant", "content": [{**text, "text": "reading"}, {**call, **marked}]},
            {"role": "user", "content": [{**result, **marked}, {**text, "text": "tail"}]},
        ],
    }
    messages = messages_of_anthropic(body)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[2]["tool_calls"][0]["cache_control"] == marker
    assert messages[3]["content"] == [{"type": "text", "text": "out", "cache_control": marker}]
    assert json.dumps(messages).count("cache_control") == 3


def _sse_server(bodies: list[dict[str, object]]) -> object:
    """An OpenAI client over an HTTP mock streaming a Chat Completions reply: a call of
    ``read_file`` in three chunks, then the call's usage."""
    import httpx
    from openai import OpenAI

    def chunk(delta: object, finish: str | None = None, usage: object = None) -> str:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5",
                "choices": choices, **({"usage": usage} if usage else {})}  # fmt: skip
        return "data: " + json.dumps(body) + "\n\n"

    def server(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        call = {"index": 0, "id": "call_9", "type": "function",
                "function": {"name": "read_file", "arguments": ""}}  # fmt: skip
        events = [
            chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": '}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"a.py"}'}}]}),
            chunk({}, "tool_calls"),
        ]
        usage = {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127}
        events.append(chunk(None, usage=usage))
        content = "".join([*events, "data: [DONE]\n\n"]).encode()
        return httpx.Response(200, content=content, headers={"content-type": "text/event-stream"})

    return OpenAI(
        api_key="sk-offline", http_client=httpx.Client(transport=httpx.MockTransport(server))
    )


def test_a_streamed_reply_is_recorded_when_the_stream_ends() -> None:
    """``stream=True``: the caller gets LiteLLM's chunks as they come; when the stream ends the
    reply (here a tool call sent in pieces) is assembled by LiteLLM's chunk builder and recorded,
    and the usage the provider reported observed. Before, LiteLLM sent (and
    billed) the request and the adapter then raised ``SDKInputError: cannot read a
    CustomStreamWrapper``: the reply was lost."""
    import regio
    from regio.adapters import litellm as regio_litellm
    from regio.content import ToolUse

    engine = regio.Engine.from_blueprint(ROOT / "examples" / "blueprints" / "coding-agent.yaml")
    observed: list[object] = []
    engine.subscribe(lambda e: observed.append(e) if e.kind == "usage_observed" else None)
    engine.add_user("Read a.py")
    bodies: list[dict[str, object]] = []
    client = _sse_server(bodies)
    stream = regio_litellm.completion(engine, model="openai/gpt-5", client=client, stream=True)
    chunks = list(stream)
    assert bodies[0]["stream"] is True and len(chunks) >= 4
    (call,) = engine.transcript()[-1].entry.blocks
    assert call == ToolUse("call_9", "read_file", {"path": "a.py"})
    assert stream.response.choices[0].message.tool_calls[0].id == "call_9"
    (usage,) = observed
    assert (usage.prompt_tokens, usage.output_tokens) == (120, 7)
    assert stream.finish() is stream.response  # recorded once
    assert len(engine.transcript()) == 2


def test_a_streamed_acompletion_is_recorded_when_the_async_stream_ends() -> None:
    import regio
    from regio.adapters import litellm as regio_litellm

    engine = regio.Engine.from_blueprint(ROOT / "examples" / "blueprints" / "coding-agent.yaml")
    engine.add_user("Fix the failing test")

    async def run() -> str:
        stream = await regio_litellm.acompletion(
            engine, model="openai/gpt-5", mock_response="Reading it now.", stream=True
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    assert asyncio.run(run()) == "Reading it now."
    assert engine.transcript()[-1].entry.text == "Reading it now."
