"""Framework adapters against the real installed packages, each with a fake model (offline).

The runnable examples in examples/adapters are executed here as scripts, so CI runs them."""

from __future__ import annotations

import asyncio
import os
import runpy
from pathlib import Path

import pytest

import regio
from regio.content import ToolResult

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "adapters"
BLUEPRINT = ROOT / "examples" / "blueprints" / "coding-agent.yaml"
INSTRUCTIONS = "You are an autonomous software engineer"

# LiteLLM reads its model-price map from the installed package, never the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _example(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name), run_name="example")


def _tool_results(engine: regio.Engine) -> list[str]:
    return [
        b.content
        for r in engine.transcript()
        if r.entry is not None
        for b in r.entry.blocks
        if isinstance(b, ToolResult)
    ]


@pytest.mark.parametrize(
    ("script", "package"),
    [
        ("langchain_middleware.py", "langchain.agents"),
        ("pydantic_ai_history.py", "pydantic_ai"),
        ("openai_agents_session.py", "agents"),
        ("litellm_completion.py", "litellm"),
        ("google_adk_callbacks.py", "google.adk"),
    ],
)
def test_every_adapter_example_runs_as_a_script(script, package, capsys):
    pytest.importorskip(package)
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    assert "window:" in capsys.readouterr().out or script.startswith("litellm")


def test_langchain_model_sees_regios_window_and_the_reply_is_recorded():
    pytest.importorskip("langchain.agents")
    from langchain_core.messages import SystemMessage, ToolMessage

    engine, model = _example("langchain_middleware.py")["main"]()
    first, second = model.seen
    assert isinstance(first[0], SystemMessage) and INSTRUCTIONS in first[0].content
    assert any(isinstance(m, ToolMessage) for m in second)
    assert any("def test_api" in c for c in _tool_results(engine))
    roles = [r.entry.role for r in engine.transcript() if r.entry is not None]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_pydantic_ai_model_sees_regios_window():
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import SystemPromptPart, ToolReturnPart

    engine, seen = _example("pydantic_ai_history.py")["main"]()
    assert isinstance(seen[0][0].parts[0], SystemPromptPart)
    assert INSTRUCTIONS in seen[0][0].parts[0].content
    parts = [p for m in seen[1] for p in m.parts]
    assert any(isinstance(p, ToolReturnPart) for p in parts)
    assert any("def test_api" in c for c in _tool_results(engine))


def _session():
    pytest.importorskip("agents")
    from regio.adapters.openai_agents import RegioSession

    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    return engine, RegioSession(engine, "t")


ITEMS = [
    {"role": "user", "content": "Fix the test"},
    {"type": "function_call", "call_id": "c1", "name": "read", "arguments": '{"path": "a"}'},
    {"type": "function_call_output", "call_id": "c1", "output": "print(1)"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Fixed.", "annotations": []}],
    },
]


def test_agents_session_round_trips_items_through_the_window():
    _, session = _session()
    asyncio.run(session.add_items(ITEMS))
    items = asyncio.run(session.get_items())
    assert items[-4:] == [
        {"role": "user", "content": "Fix the test"},
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": '{"path":"a"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "print(1)"},
        {"role": "assistant", "content": "Fixed."},
    ]
    assert asyncio.run(session.get_items(limit=1)) == [items[-1]]


def test_agents_session_clear_drops_past_turns_and_keeps_the_transcript():
    engine, session = _session()
    asyncio.run(session.add_items([*ITEMS, {"role": "user", "content": "Next task"}]))
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == [{"role": "user", "content": "Next task"}]
    assert len(engine.transcript_log.messages()) == 5


def test_agents_session_pop_item_of_an_empty_session_is_none():
    _, session = _session()
    assert asyncio.run(session.pop_item()) is None


def test_agents_session_refuses_an_unknown_item_naming_it():
    from regio.sdk._objects import SDKInputError

    _, session = _session()
    with pytest.raises(SDKInputError, match=r"items\[0\].*computer_call"):
        asyncio.run(session.add_items([{"type": "computer_call", "call_id": "c", "action": {}}]))


def test_litellm_sends_regios_payload_and_records_reply_and_usage():
    pytest.importorskip("litellm")
    engine, sent = _example("litellm_completion.py")["main"]()
    assert len(sent) == 1
    texts = [m["content"] for m in sent[0]["messages"]]
    assert INSTRUCTIONS in texts[0] and texts[1] == "Fix the failing test"
    assert engine.ledger.last.cache_read_tokens == 512
    assert engine.ledger.last.prompt_tokens == 700
    assert engine.transcript()[-1].entry.role == "assistant"
