"""One tool output larger than the whole conversation (about 300,000 tokens against a
conversation whose budget bends to the whole 184,000-token window), beside a small one, through
each framework's own loop over three
turns: the agent gets the large result cut, with a note saying so and what to ask for, on the
next model call; nothing is raised into the framework's loop, on that turn or any later one;
every message reaches the engine once (the cursor moves past each message as it is admitted).

Before the fix: LangChain raised ``RegionFullError`` into ``agent.invoke`` on this turn and
every later one (the checkpointer keeps the result, so every turn tried it again) and admitted
the small result again each time (the cursor moved only after the whole history was
admitted); pydantic-ai raised it out of ``run_sync``; the OpenAI Agents SDK out of
``Runner.run``; ADK out of the runner."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest

import regio
from adapter_harness_support import engine as harness_engine
from regio.adapters.admit import ToolResultTooLarge
from regio.content import ToolResult

HUGE = "big line of output\n" * 60_000
SMALL = "small file"
#: The note's opening, as the agent reads it.
NOTE = "[regio: the read_file result of call c2 is about"
TURNS = 3


def engine() -> regio.Engine:
    """The coding blueprint at its own window (a 92,000-token conversation, elastic up to what
    the window has free)."""
    return harness_engine(context_window=None)


def read(path: str) -> str:
    return HUGE if path == "HUGE" else SMALL


#: The model's calls on the first turn: a small read and a huge one, in parallel.
CALLS = [("c1", "small.py"), ("c2", "HUGE")]


class Seen:
    """The engine's results and fitted-result events."""

    def __init__(self, eng: regio.Engine) -> None:
        self.eng = eng
        self.events: list[ToolResultTooLarge] = []
        eng.subscribe(
            lambda e: self.events.append(e) if isinstance(e, ToolResultTooLarge) else None
        )

    def check(self, received: list[str]) -> None:
        """``received``: the text of c2's result on each model call that carried it."""
        results = Counter(
            b.tool_use_id
            for r in self.eng.transcript()
            if r.entry is not None
            for b in r.entry.blocks
            if isinstance(b, ToolResult)
        )
        assert results == {"c1": 1, "c2": 1}, results
        assert received, "the large result never reached the model"
        for text in received:
            assert NOTE in text and "Ask for a smaller part" in text, text[-300:]
            assert HUGE.startswith(text[:200]) and len(text) < len(HUGE) // 4
        (event,) = self.events
        assert (event.tool_use_id, event.action) == ("c2", "trimmed")
        assert event.tokens > event.cap > event.sent_tokens


def _results(calls: list[Any], call_id: str) -> list[str]:
    """The text of ``call_id``'s result on each recorded model call that carried it."""
    return [
        p.text
        for c in calls
        for _, ps in c.messages
        for p in ps
        if p.id == call_id and p.kind == "result"
    ]


def test_langchain_gets_a_large_result_cut_with_a_note_on_every_turn() -> None:
    pytest.importorskip("langchain_openai")
    import httpx2
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    from regio.adapters.langchain import RegioMiddleware

    bodies: list[dict[str, Any]] = []

    def server(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        message: dict[str, Any] = {"role": "assistant", "content": f"done {len(bodies)}"}
        if len(bodies) == 1:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps({"path": p})}}
                for i, p in CALLS
            ]}  # fmt: skip
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        body = {"id": "x", "object": "chat.completion", "created": 1, "model": "gpt-5",
                "choices": [choice], "usage": usage}  # fmt: skip
        return httpx2.Response(200, json=body)

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return read(path)

    eng = engine()
    seen = Seen(eng)
    http = httpx2.Client(transport=httpx2.MockTransport(server))
    model = ChatOpenAI(model="gpt-5", api_key="sk-offline", http_client=http)
    agent = create_agent(
        model, tools=[read_file], middleware=[RegioMiddleware(eng)], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    for turn in range(TURNS):
        agent.invoke({"messages": [{"role": "user", "content": f"USER {turn}"}]}, config)
    assert len(bodies) == TURNS + 1
    received = [
        m["content"] for b in bodies for m in b["messages"]
        if m["role"] == "tool" and m["tool_call_id"] == "c2"
    ]  # fmt: skip
    seen.check(received)
    for n, body in enumerate(bodies, 1):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert len(users) == len(set(users)), f"call {n}: {users}"


def test_pydantic_ai_gets_a_large_result_cut_with_a_note_on_every_turn() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from regio.adapters.pydantic_ai import RegioCapability

    received: list[str] = []
    calls: list[int] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        received.extend(
            p.model_response_str()
            for m in messages
            for p in m.parts
            if isinstance(p, ToolReturnPart) and p.tool_call_id == "c2"
        )
        if len(calls) == 1:
            return ModelResponse(
                parts=[ToolCallPart("read_file", {"path": p}, tool_call_id=i) for i, p in CALLS]
            )
        return ModelResponse(parts=[TextPart(f"done {len(calls)}")])

    eng = engine()
    seen = Seen(eng)
    agent = Agent(FunctionModel(model), capabilities=[RegioCapability(eng)])
    agent.tool_plain(name="read_file")(read)
    history: list[Any] = []
    for turn in range(TURNS):
        history = agent.run_sync(f"USER {turn}", message_history=history).all_messages()
    assert len(calls) == TURNS + 1
    seen.check(received)


def test_the_agents_sdk_gets_a_large_result_cut_with_a_note() -> None:
    pytest.importorskip("agents")
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    from adapter_drivers_support import agents_model
    from regio.adapters.openai_agents import RegioSession

    moves = iter([("c1", "read_file", "small.py"), ("c2", "read_file", "HUGE")])
    calls: list[Any] = []
    set_tracing_disabled(True)
    eng = engine()
    seen = Seen(eng)
    session = RegioSession(eng, "large")
    model = agents_model(calls, lambda n: next(moves, None))
    agent = Agent(name="l", model=model, tools=[function_tool(read, name_override="read_file")])
    for turn in range(TURNS):
        run = Runner.run(agent, f"USER {turn}", session=session, run_config=session.run_config())
        asyncio.run(run)
    seen.check(_results(calls, "c2"))


def test_adk_gets_a_large_result_cut_with_a_note() -> None:
    pytest.importorskip("google.adk")
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from adapter_drivers_support import adk_agent

    moves = iter([("c1", "read_file", "small.py"), ("c2", "read_file", "HUGE")])
    calls: list[Any] = []
    eng = engine()
    seen = Seen(eng)
    agent = adk_agent(eng, calls, lambda n: next(moves, None), read, name="large", ids=True)
    runner = InMemoryRunner(agent=agent, app_name="large")

    async def run() -> None:
        session = await runner.session_service.create_session(app_name="large", user_id="u")
        for turn in range(TURNS):
            message = types.Content(role="user", parts=[types.Part(text=f"USER {turn}")])
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                pass

    asyncio.run(run())
    seen.check(_results(calls, "c2"))
