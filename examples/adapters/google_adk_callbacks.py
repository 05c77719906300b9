"""Google ADK: regio lays out every model call of an LlmAgent (offline, a scripted model).

pip install 'regio[google-adk]'
python examples/adapters/google_adk_callbacks.py
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydantic import Field

import regio
from regio.adapters.google_adk import RegioCallbacks

BLUEPRINT = Path(__file__).resolve().parents[1] / "blueprints" / "coding-agent.yaml"


class ScriptedModel(BaseLlm):
    """Reads the test once, then answers; keeps every request it was sent."""

    model: str = "gemini-2.5-flash"
    seen: list[Any] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: Any, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.seen.append(llm_request.model_copy(deep=True))
        if len(self.seen) == 1:
            call = types.FunctionCall(
                id="call_1", name="read_file", args={"path": "tests/test_api.py"}
            )
            part = types.Part(function_call=call)
        else:
            part = types.Part(text="add() is wrong; fixed.")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"contents of {path}: def test_api(): assert add(1, 1) == 2"


async def main() -> tuple[regio.Engine, ScriptedModel]:
    engine = regio.Engine.from_blueprint(BLUEPRINT)
    callbacks = RegioCallbacks(engine)
    model = ScriptedModel()
    agent = LlmAgent(
        name="coder",
        model=model,
        instruction="You fix failing tests.",
        tools=[read_file],
        before_model_callback=callbacks.before_model,
        after_model_callback=callbacks.after_model,
    )
    runner = InMemoryRunner(agent=agent, app_name="coder")
    session = await runner.session_service.create_session(app_name="coder", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Fix the failing test")])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            print("answer:", event.content.parts[0].text)
    print("model calls:", len(model.seen))
    print(f"window: {engine.window.used_tokens} tokens, transcript: {len(engine.transcript())}")
    return engine, model


if __name__ == "__main__":
    asyncio.run(main())
