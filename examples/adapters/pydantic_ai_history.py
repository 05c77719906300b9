"""pydantic-ai: a capability that hands the model regio's window (offline, fake model).

pip install 'regio[pydantic-ai]'
python examples/adapters/pydantic_ai_history.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import regio
from regio.adapters.pydantic_ai import RegioCapability

BLUEPRINT = Path(__file__).resolve().parents[1] / "blueprints" / "coding-agent.yaml"


def main() -> tuple[regio.Engine, list[Any]]:
    seen: list[Any] = []

    def fake_model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "tests/test_api.py"})])
        return ModelResponse(parts=[TextPart("add() is wrong; fixed.")])

    engine = regio.Engine.from_blueprint(BLUEPRINT)
    agent = Agent(
        FunctionModel(fake_model),
        system_prompt="You fix failing tests.",
        capabilities=[RegioCapability(engine)],
    )

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return f"contents of {path}: def test_api(): assert add(1, 1) == 2"

    result = agent.run_sync("Fix the failing test")
    print("answer:", result.output)
    print("model calls:", len(seen), "; first part:", type(seen[0][0].parts[0]).__name__)
    print(f"window: {engine.window.used_tokens} tokens, transcript: {len(engine.transcript())}")
    return engine, seen


if __name__ == "__main__":
    main()
