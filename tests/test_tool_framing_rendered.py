"""Tool definitions are counted in the shape, and with the framing, their provider's renderer
sends them in: vLLM, SGLang and Google's endpoint speak Chat Completions, so their tools cost
what OpenAI's do; Responses tools are counted in the Responses shape; a plain-text prompt
carries no tool definitions, so they cost nothing (before, each module kept its own list of
providers, and these were counted as bare ``[name, description, schema]`` JSON)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from progress_support import conversation_blueprint
from regio.engine import Engine
from regio.layout import ToolSpec
from regio.tokens import get_counter

TOOLS = [
    ToolSpec(
        f"tool_{n}",
        "Read a file of the repository and return its lines.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "path from the root"},
                "limit": {"type": "integer", "description": "lines to return"},
            },
            "required": ["path"],
        },
    )
    for n in range(4)
]


def _engine() -> Engine:
    counter = get_counter("o200k_base")  # a real tokenizer: the two OpenAI shapes differ in it
    engine = Engine.from_blueprint(conversation_blueprint("framing", 20000), token_counter=counter)
    engine.add_user("hello")
    return engine


def _json_tokens(engine: Engine, values: list[Any]) -> int:
    return sum(engine.budget.count_text(msgspec.json.encode(v).decode()) for v in values)


@pytest.mark.parametrize("provider", ["vllm", "sglang", "google"])
def test_chat_completions_servers_count_tool_definitions_as_openai_renders_them(
    provider: str,
) -> None:
    engine = _engine()
    _, payload = engine.request(provider, tools=TOOLS)
    _, openai = engine.request("openai", tools=TOOLS)
    assert payload["tools"] == openai["tools"]  # rendered alike ...
    counted = engine.budget.tools_tokens(TOOLS, provider)
    assert counted == engine.budget.tools_tokens(TOOLS, "openai")  # ... so counted alike
    assert counted > _json_tokens(engine, payload["tools"])  # with the function framing


def test_responses_tool_definitions_are_counted_in_the_responses_shape() -> None:
    engine = _engine()
    _, responses = engine.request("openai_responses", tools=TOOLS)
    _, chat = engine.request("openai", tools=TOOLS)
    assert responses["tools"] != chat["tools"]
    difference = engine.budget.tools_tokens(TOOLS, "openai_responses") - engine.budget.tools_tokens(
        TOOLS, "openai"
    )
    shape = _json_tokens(engine, responses["tools"]) - _json_tokens(engine, chat["tools"])
    assert shape != 0 and difference == shape  # the same framing, each in its own shape


def test_a_plain_text_prompt_sends_no_tool_definitions_and_counts_none() -> None:
    engine = _engine()
    _, with_tools = engine.request("text", tools=TOOLS)
    _, without = engine.request("text")
    assert with_tools == without
    assert engine.budget.tools_tokens(TOOLS, "text") == 0
