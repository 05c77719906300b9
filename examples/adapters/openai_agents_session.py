"""OpenAI Agents SDK: a regio engine as the agent's Session (runs offline with a fake model).

pip install 'regio[openai-agents]'
python examples/adapters/openai_agents_session.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

import regio
from regio.adapters.openai_agents import RegioSession

BLUEPRINT = Path(__file__).resolve().parents[1] / "blueprints" / "coding-agent.yaml"


class EchoModel(Model):
    """A fake model: answers with the number of input items regio handed it."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.inputs.append(input)
        text = f"I see {len(input)} items."
        message = ResponseOutputMessage(
            id="msg_1",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise NotImplementedError


async def main() -> RegioSession:
    set_tracing_disabled(True)
    engine = regio.Engine.from_blueprint(BLUEPRINT, provider="openai", model="gpt-5")
    session = RegioSession(engine, "demo")
    agent = Agent(name="coder", instructions="Be brief.", model=EchoModel())
    for task in ("Find the failing test", "Now fix it"):
        # run_config: the window is laid out again before every model call of the run
        result = await Runner.run(agent, task, session=session, run_config=session.run_config())
        print(f"{task!r} -> {result.final_output!r}")
    print(f"window: {engine.window.used_tokens} tokens, transcript: {len(engine.transcript())}")
    return session


if __name__ == "__main__":
    asyncio.run(main())
