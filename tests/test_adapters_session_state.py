"""An agent server loads the engine per request (``Engine.load_from``) and builds a new adapter
each time, with the framework keeping its own history (a LangChain checkpointer, pydantic-ai's
``message_history``, the Agents SDK session). The adapter's place in that history lives in the
engine's session, so the new adapter admits only what is new: the model never gets the history
twice. Before issue 25 the LangChain middleware and the pydantic-ai history processor kept it in
the adapter object and re-admitted every earlier message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import regio
from adapter_harness_support import SYSTEM_PROMPT, engine
from regio.persistence.store import SessionNotFoundError, SQLiteStore

QUESTIONS = ["QUESTION ONE", "QUESTION TWO", "QUESTION THREE"]


def _serve(store: SQLiteStore, handle: Any) -> None:
    """One request of an agent server: load (or start) the session, run, save."""
    try:
        eng = regio.Engine.load_from(store, "user-42")
    except SessionNotFoundError:
        eng = engine(session_id="user-42")
    handle(eng)
    eng.save_to(store, "user-42")


def _engine_users(store: SQLiteStore) -> list[str]:
    eng = regio.Engine.load_from(store, "user-42")
    return [
        r.entry.text for r in eng.transcript() if r.entry is not None and r.entry.role == "user"
    ]


def test_a_new_langchain_middleware_over_a_loaded_engine_continues_the_thread(
    tmp_path: Path,
) -> None:
    pytest.importorskip("langchain_anthropic")
    import anthropic
    import httpx2
    from langchain.agents import create_agent
    from langchain_anthropic import ChatAnthropic
    from langgraph.checkpoint.memory import InMemorySaver

    from regio.adapters.langchain import RegioMiddleware

    sent: list[dict[str, Any]] = []

    def server(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        answer = {"type": "text", "text": f"answer {len(sent)}"}
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{len(sent)}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [answer],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )

    store, saver = SQLiteStore(tmp_path / "sessions.db"), InMemorySaver()
    for question in QUESTIONS:

        def handle(eng: regio.Engine, question: str = question) -> None:
            model = ChatAnthropic(model="claude-sonnet-4-6", api_key="sk-offline", max_tokens=64)
            http = httpx2.Client(transport=httpx2.MockTransport(server))
            model.__dict__["_client"] = anthropic.Client(api_key="sk-offline", http_client=http)
            agent = create_agent(
                model,
                system_prompt=SYSTEM_PROMPT,
                middleware=[RegioMiddleware(eng)],
                checkpointer=saver,
            )
            config = {"configurable": {"thread_id": "user-42"}}
            agent.invoke({"messages": [{"role": "user", "content": question}]}, config)

        _serve(store, handle)
    users = [
        b["text"]
        for m in sent[-1]["messages"]
        if m["role"] == "user"
        for b in m["content"]
        if b["type"] == "text"
    ]
    assert users == QUESTIONS
    assert _engine_users(store) == QUESTIONS


@pytest.mark.parametrize("adapter", ["capability", "history-processor"])
def test_a_new_pydantic_ai_adapter_over_a_loaded_engine_continues_the_message_history(
    tmp_path: Path, adapter: str
) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from regio.adapters.pydantic_ai import RegioCapability, RegioHistory

    seen: list[list[str]] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.append([p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart)])
        return ModelResponse(parts=[TextPart(f"answer {len(seen)}")])

    store, history = SQLiteStore(tmp_path / "sessions.db"), []
    for question in QUESTIONS:

        def handle(eng: regio.Engine, question: str = question) -> None:
            cap: Any = (
                RegioCapability(eng)
                if adapter == "capability"
                else ProcessHistory(RegioHistory(eng))
            )
            agent = Agent(FunctionModel(model), system_prompt=SYSTEM_PROMPT, capabilities=[cap])
            result = agent.run_sync(question, message_history=list(history))
            history[:] = result.all_messages()

        _serve(store, handle)
    assert seen[-1] == QUESTIONS
    assert _engine_users(store) == QUESTIONS


def test_a_new_agents_sdk_session_over_a_loaded_engine_continues_the_session(
    tmp_path: Path,
) -> None:
    pytest.importorskip("agents")
    from agents import Agent, Runner, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    from regio.adapters.openai_agents import RegioSession

    seen: list[list[str]] = []

    class Echo(Model):
        async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append([i["content"] for i in input if i.get("role") == "user"])
            text = ResponseOutputText(
                type="output_text", text=f"answer {len(seen)}", annotations=[]
            )
            message = ResponseOutputMessage(
                id="m", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise NotImplementedError

    set_tracing_disabled(True)
    store = SQLiteStore(tmp_path / "sessions.db")
    for question in QUESTIONS:

        def handle(eng: regio.Engine, question: str = question) -> None:
            session = RegioSession(eng)
            agent = Agent(name="a", instructions=SYSTEM_PROMPT, model=Echo())
            run = Runner.run(agent, question, session=session, run_config=session.run_config())
            asyncio.run(run)

        _serve(store, handle)
    assert seen[-1] == QUESTIONS
    assert _engine_users(store) == QUESTIONS


def test_the_adapter_cursor_is_saved_with_the_engine_and_loaded_back(tmp_path: Path) -> None:
    from regio.adapters.cursor import cursor, mark

    eng = engine()
    mark(eng, "langchain", 7, "d" * 64)
    cursor(eng, "langchain").system = "caller prompt"
    loaded = regio.Engine.load(eng.save(tmp_path / "state.json"))
    at = cursor(loaded, "langchain")
    assert (at.position, at.digest, at.system) == (7, "d" * 64, "caller prompt")


def test_new_google_adk_callbacks_over_a_loaded_engine_continue_the_adk_session(
    tmp_path: Path,
) -> None:
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from regio.adapters.google_adk import RegioCallbacks

    seen: list[list[str]] = []

    class Echo(BaseLlm):
        model: str = "gemini-2.5-flash"

        async def generate_content_async(self, llm_request, stream=False):  # type: ignore[no-untyped-def]
            texts = [p.text for c in llm_request.contents if c.role == "user" for p in c.parts]
            seen.append([t for t in texts if t])
            text = types.Part(text=f"answer {len(seen)}")
            yield LlmResponse(content=types.Content(role="model", parts=[text]))

    store, services = SQLiteStore(tmp_path / "sessions.db"), {}
    for question in QUESTIONS:

        def handle(eng: regio.Engine, question: str = question) -> None:
            callbacks = RegioCallbacks(eng)
            agent = LlmAgent(
                name="a",
                model=Echo(),
                instruction=SYSTEM_PROMPT,
                before_model_callback=callbacks.before_model,
                after_model_callback=callbacks.after_model,
            )
            runner = InMemoryRunner(agent=agent, app_name="app")
            if "sessions" in services:  # the ADK session store outlives each request
                runner.session_service = services["sessions"]
            services["sessions"] = runner.session_service

            async def run() -> None:
                service = runner.session_service
                if await service.get_session(app_name="app", user_id="u", session_id="s") is None:
                    await service.create_session(app_name="app", user_id="u", session_id="s")
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for _ in runner.run_async(user_id="u", session_id="s", new_message=message):
                    pass

            asyncio.run(run())

        _serve(store, handle)
    assert seen[-1] == QUESTIONS
    assert _engine_users(store) == QUESTIONS
