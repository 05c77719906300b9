"""LangChain v1: regio builds every model request of a create_agent agent (offline, fake model).

pip install 'regio[langchain]'
python examples/adapters/langchain_middleware.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from pydantic import Field

import regio
from regio.adapters.langchain import RegioMiddleware

BLUEPRINT = Path(__file__).resolve().parents[1] / "blueprints" / "coding-agent.yaml"


class FakeModel(GenericFakeChatModel):
    """Answers from a list; keeps what it was sent; tools bind to itself."""

    seen: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"contents of {path}: def test_api(): assert add(1, 1) == 2"


def main() -> tuple[regio.Engine, FakeModel]:
    engine = regio.Engine.from_blueprint(BLUEPRINT)
    call = {"name": "read_file", "args": {"path": "tests/test_api.py"}, "id": "call_1"}
    model = FakeModel(
        messages=iter([AIMessage("", tool_calls=[call]), AIMessage("add() is wrong; fixed.")])
    )
    agent = create_agent(model, tools=[read_file], middleware=[RegioMiddleware(engine)])
    result = agent.invoke({"messages": [{"role": "user", "content": "Fix the failing test"}]})
    print("answer:", result["messages"][-1].content)
    print("model saw", [len(m) for m in model.seen], "messages; first is", model.seen[0][0].type)
    print(f"window: {engine.window.used_tokens} tokens, transcript: {len(engine.transcript())}")
    return engine, model


if __name__ == "__main__":
    main()
