"""pydantic-ai's tool definitions are sent with every request, so the engine counts them: the
request the model gets (system prompt, instructions, window and tool definitions) fits the
context window on every call of a run that compacts."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from adapter_drivers_support import from_pydantic
from adapter_harness_support import (
    FINAL,
    INSTRUCTIONS,
    SYSTEM_PROMPT,
    TASK,
    TOOL,
    WINDOW,
    Compactions,
    engine,
    reply,
    tool_output,
)

#: Helper tools whose long descriptions the agent sends on every call (about 2,500 tokens).
HELPERS = 4


def _description(n: int) -> str:
    return " ".join(
        f"Rule {n}.{i}: helper_{n} accepts option_{n}_{i} for case {i}." for i in range(60)
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_pydantic_agents_tool_definitions_are_counted_in_every_request(provider: str) -> None:
    """An agent with many long tool definitions: each call's messages, system text and tool
    definitions together fit the window. Before, the capability did not tell the engine
    about the tools pydantic-ai sends, so the window filled up to the limit without them and
    the requests went over it by the size of the definitions."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from regio.adapters.pydantic_ai import RegioCapability

    eng = engine()
    compactions = Compactions(eng)
    sizes: list[int] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        call = from_pydantic(messages, info.instructions)
        texts = [*call.system]
        for _, parts in call.messages:
            texts.extend(p.text for p in parts)
            texts.extend(json.dumps(p.args) for p in parts if p.kind == "call")
        tools = [
            {"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}
            for t in info.function_tools
        ]
        assert len(tools) == HELPERS + 1
        sizes.append(eng.counter.count("\n".join(texts)) + eng.counter.count(json.dumps(tools)))
        move = reply(len(sizes))
        if move is None:
            return ModelResponse(parts=[TextPart(FINAL)])
        call_id, name, path = move
        return ModelResponse(parts=[ToolCallPart(name, {"path": path}, tool_call_id=call_id)])

    def helper(option: str) -> str:
        return option

    tools = [
        Tool(helper, name=f"helper_{n}", description=_description(n), takes_ctx=False)
        for n in range(HELPERS)
    ]
    agent = Agent(
        FunctionModel(model),
        system_prompt=SYSTEM_PROMPT,
        instructions=INSTRUCTIONS,
        tools=tools,
        capabilities=[RegioCapability(eng, provider=provider)],
    )
    agent.tool_plain(name=TOOL)(tool_output)
    assert agent.run_sync(TASK).output == FINAL
    assert compactions.count >= 2
    over = [(n, s) for n, s in enumerate(sizes, 1) if s > WINDOW]
    assert not over, f"calls over the {WINDOW}-token window (call, tokens): {over[:5]}"
