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
