"""Each framework's own agent loop on the harness task (tests/adapter_harness_support.py), with
the framework's own offline model or an HTTP mock of the provider: every driver returns the
:class:`Call` s the model received, the engine and its compaction counter.

Drivers: LangChain v1 ``create_agent`` (``ChatAnthropic`` / ``ChatOpenAI`` over an HTTP mock);
pydantic-ai ``Agent`` with ``FunctionModel`` (``RegioCapability`` and ``RegioHistory``); the
OpenAI Agents SDK ``Runner`` with a custom ``Model``; LiteLLM ``completion`` over an HTTP mock
(Anthropic and OpenAI routes); the official ``anthropic`` / ``openai`` clients over an HTTP mock
with ``engine.add_response``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import regio.adapters  # noqa: F401  (first: a later import of LiteLLM reads no price map online)
from adapter_harness_support import (
    ANTHROPIC_TOOL,
    CHAT_TOOL,
    FINAL,
    INSTRUCTIONS,
    STEPS,
    SYSTEM_PROMPT,
    TASK,
    TOOL,
    Call,
    Compactions,
    Move,
    Part,
    anthropic_message,
    anthropic_reply,
    chat_completion,
    chat_reply,
    engine,
    from_anthropic,
    from_chat,
    from_responses,
    planned_marks,
    reply,
    tool_output,
)

Run = tuple[list[Call], Any, Compactions]


#: What a mock server answers at model call ``n`` (1-based): a response body.
Answer = Callable[[int], dict[str, Any]]


def anthropic_server(
    calls: list[Call], eng: Any, answer: Answer = anthropic_reply, *, is_async: bool = False
) -> Any:
    """An ``httpx2`` client (``AsyncClient`` with ``is_async``) answering Anthropic Messages
    requests with ``answer`` (server-sent events for a ``stream: true`` request, as pydantic-ai
    sends them); each request is recorded in ``calls`` as it reached the wire."""
    import httpx2

    from docs_fixtures_support import anthropic_events

    def server(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        calls.append(from_anthropic(body, planned_marks(eng)))
        reply_body = answer(len(calls))
        if body.get("stream"):
            headers = {"content-type": "text/event-stream"}
            return httpx2.Response(200, content=anthropic_events(reply_body), headers=headers)
        return httpx2.Response(200, json=reply_body)

    transport = httpx2.MockTransport(server)
    return (
        httpx2.AsyncClient(transport=transport) if is_async else httpx2.Client(transport=transport)
    )


def chat_server(calls: list[Call], answer: Answer = chat_reply) -> Any:
    """An ``httpx2.Client`` answering Chat Completions requests with ``answer``."""
    import httpx2

    def server(request: httpx2.Request) -> httpx2.Response:
        calls.append(from_chat(json.loads(request.content)))
        return httpx2.Response(200, json=answer(len(calls)))

    return httpx2.Client(transport=httpx2.MockTransport(server))


# ----- LangChain -------------------------------------------------------------------------


def langchain_model(
    family: str,
    calls: list[Call],
    eng: Any,
    script: Callable[[int], Move] = reply,
) -> Any:
    """``ChatAnthropic`` or ``ChatOpenAI`` whose HTTP client answers from ``script`` (the
    model's move at each call)."""
    if family == "anthropic":
        import anthropic
        from langchain_anthropic import ChatAnthropic

        model = ChatAnthropic(model="claude-sonnet-4-6", api_key="sk-offline", max_tokens=256)
        http = anthropic_server(calls, eng, lambda n: anthropic_message(script(n), n))
        client = anthropic.Client(api_key="sk-offline", http_client=http)
        model.__dict__["_client"] = client  # langchain-anthropic's cached client, offline
        return model
    from langchain_openai import ChatOpenAI

    http = chat_server(calls, lambda n: chat_completion(script(n), n))
    return ChatOpenAI(model="gpt-5", api_key="sk-offline", http_client=http)


def run_langchain(family: str) -> Run:
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from regio.adapters.langchain import RegioMiddleware

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return tool_output(path)

    calls: list[Call] = []
    eng = engine()
    counter = Compactions(eng)
    agent = create_agent(
        langchain_model(family, calls, eng),
        tools=[read_file],
        system_prompt=SYSTEM_PROMPT,
        middleware=[RegioMiddleware(eng)],
    )
    result = agent.invoke(
        {"messages": [{"role": "user", "content": TASK}]}, {"recursion_limit": 4 * STEPS}
    )
    assert result["messages"][-1].content == FINAL
    return calls, eng, counter


# ----- pydantic-ai -----------------------------------------------------------------------


def from_pydantic(messages: list[Any], instructions: str | None) -> Call:
    """A :class:`Call` of the messages and instructions a ``FunctionModel`` received."""
    from pydantic_ai.messages import (
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    system = [instructions] if instructions else []
    out: list[tuple[str, list[Part]]] = []
    for m in messages:
        parts: list[Part] = []
        for p in m.parts:
            if isinstance(p, SystemPromptPart):
                system.append(p.content)
            elif isinstance(p, UserPromptPart | TextPart):
                parts.append(Part("text", p.content if isinstance(p.content, str) else ""))
            elif isinstance(p, ToolCallPart):
                parts.append(Part("call", id=p.tool_call_id, args=p.args_as_dict()))
            elif isinstance(p, ToolReturnPart):
                parts.append(Part("result", p.model_response_str(), id=p.tool_call_id))
        out.append(("assistant" if isinstance(m, ModelResponse) else "user", parts))
    return Call(system, [(r, ps) for r, ps in out if ps])


def pydantic_anthropic_model(
    calls: list[Call], eng: Any, script: Callable[[int], Move] = reply
) -> Any:
    """pydantic-ai's ``AnthropicModel`` whose Anthropic client answers from ``script`` over an
    HTTP mock: each call is recorded as it reaches the wire."""
    import anthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    answer = lambda n: anthropic_message(script(n), n)  # noqa: E731
    http = anthropic_server(calls, eng, answer, is_async=True)
    client = anthropic.AsyncAnthropic(api_key="sk-offline", http_client=http)
    return AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client))


def run_pydantic_ai(adapter: str, model_settings: Any = None) -> Run:
    """The harness task through a pydantic-ai ``Agent``: ``adapter`` ``capability`` or
    ``history`` on ``FunctionModel``, ``capability-anthropic`` on the real ``AnthropicModel``
    over an HTTP mock (the marks checked as they reach the wire); ``model_settings`` the
    agent's."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    calls: list[Call] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        calls.append(from_pydantic(messages, info.instructions))
        move = reply(len(calls))
        if move is None:
            return ModelResponse(parts=[TextPart(FINAL)])
        call_id, name, path = move
        return ModelResponse(parts=[ToolCallPart(name, {"path": path}, tool_call_id=call_id)])

    eng = engine()
    counter = Compactions(eng)
    served: Any = FunctionModel(model)
    if adapter == "capability-anthropic":
        served = pydantic_anthropic_model(calls, eng)
    if adapter.startswith("capability"):
        from regio.adapters.pydantic_ai import RegioCapability

        capability: Any = RegioCapability(eng)
    else:
        from regio.adapters.pydantic_ai import RegioHistory

        capability = ProcessHistory(RegioHistory(eng))
    agent = Agent(
        served,
        system_prompt=SYSTEM_PROMPT,
        instructions=INSTRUCTIONS,
        capabilities=[capability],
        model_settings=model_settings,
    )

    @agent.tool_plain(name=TOOL)
    def read_file(path: str) -> str:
        """Read a file."""
        return tool_output(path)

    assert agent.run_sync(TASK).output == FINAL
    return calls, eng, counter


# ----- OpenAI Agents SDK -----------------------------------------------------------------


def agents_model(calls: list[Call], script: Callable[[int], Move] = reply) -> Any:
    """An Agents SDK ``Model`` answering from ``script``; each input it gets is recorded."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class ScriptedModel(Model):
        async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def]
            items = [input] if isinstance(input, str) else list(input)
            items = [{"role": "user", "content": i} if isinstance(i, str) else i for i in items]
            calls.append(from_responses(items, system_instructions))
            move = script(len(calls))
            if move is None:
                text = ResponseOutputText(type="output_text", text=FINAL, annotations=[])
                output: list[Any] = [
                    ResponseOutputMessage(
                        id="msg",
                        type="message",
                        role="assistant",
                        status="completed",
                        content=[text],
                    )
                ]
            else:
                call_id, name, path = move
                output = [
                    ResponseFunctionToolCall(
                        id=f"fc_{call_id}",
                        call_id=call_id,
                        name=name,
                        arguments=json.dumps({"path": path}),
                        type="function_call",
                        status="completed",
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise NotImplementedError

    return ScriptedModel()


def run_agents_sdk() -> Run:
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    from regio.adapters.openai_agents import RegioSession

    calls: list[Call] = []

    @function_tool(name_override=TOOL)
    def read_file(path: str) -> str:
        """Read a file."""
        return tool_output(path)

    set_tracing_disabled(True)
    eng = engine(provider="openai", model="gpt-5")
    counter = Compactions(eng)
    session = RegioSession(eng, "harness")
    agent = Agent(
        name="harness", instructions=SYSTEM_PROMPT, model=agents_model(calls), tools=[read_file]
    )
    run = Runner.run(
        agent, TASK, session=session, run_config=session.run_config(), max_turns=STEPS + 5
    )
    assert asyncio.run(run).final_output == FINAL
    return calls, eng, counter


# ----- LiteLLM and the SDK clients: the caller's loop --------------------------------------


def _tool_calls(message: Any) -> list[tuple[str, str]]:
    """(call id, path) of each tool call of an OpenAI-shaped assistant message."""
    calls = getattr(message, "tool_calls", None) or []
    return [(c.id, json.loads(c.function.arguments)["path"]) for c in calls]


def litellm_loop(
    eng: Any,
    family: str,
    calls: list[Call],
    script: Callable[[int], Move] = reply,
    steps: int = STEPS + 1,
) -> Any:
    """The caller's loop over ``regio.adapters.litellm.completion`` (``anthropic/...`` or
    ``openai/...`` by ``family``) for at most ``steps`` model calls, the tool's output added
    after each call, with an HTTP mock answering from ``script``; returns the last response."""
    import httpx
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    from regio.adapters import litellm as regio_litellm

    def server(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        n = len(calls) + 1
        if family == "anthropic":
            calls.append(from_anthropic(body, planned_marks(eng)))
            return httpx.Response(200, json=anthropic_message(script(n), n))
        calls.append(from_chat(body))
        return httpx.Response(200, json=chat_completion(script(n), n))

    transport = httpx.MockTransport(server)
    client: Any
    if family == "anthropic":
        model = "anthropic/claude-sonnet-4-6"
        client = HTTPHandler(client=httpx.Client(transport=transport))
    else:
        from openai import OpenAI

        model = "openai/gpt-5"
        client = OpenAI(api_key="sk-offline", http_client=httpx.Client(transport=transport))
    for _ in range(steps):
        response = regio_litellm.completion(
            eng, model=model, tools=[CHAT_TOOL], client=client, api_key="sk-offline"
        )
        made = _tool_calls(response.choices[0].message)
        for call_id, path in made:
            eng.add_tool_result(call_id, tool_output(path))
        if not made:
            break
    assert response.choices[0].message.content == FINAL
    return response


def run_litellm(family: str) -> Run:
    calls: list[Call] = []
    eng = engine()
    counter = Compactions(eng)
    eng.write("system", SYSTEM_PROMPT)
    eng.add_user(TASK)
    litellm_loop(eng, family, calls)
    return calls, eng, counter


def run_sdk_client(family: str) -> Run:
    calls: list[Call] = []
    eng = engine()
    counter = Compactions(eng)
    eng.write("system", SYSTEM_PROMPT)
    eng.add_user(TASK)
    if family == "anthropic":
        import anthropic

        client = anthropic.Anthropic(api_key="sk-offline", http_client=anthropic_server(calls, eng))
        for _ in range(STEPS + 1):
            payload = eng.request("anthropic", tools=[ANTHROPIC_TOOL])[1]
            response = client.messages.create(**payload)
            eng.add_response(response, observe=True)
            for block in response.content:
                if block.type == "tool_use":
                    eng.add_tool_result(block.id, tool_output(block.input["path"]))
        assert response.content[0].text == FINAL
    else:
        import openai

        chat = openai.OpenAI(api_key="sk-offline", http_client=chat_server(calls))
        for _ in range(STEPS + 1):
            payload = eng.request("openai", tools=[CHAT_TOOL])[1]
            completion = chat.chat.completions.create(**payload)
            eng.add_response(completion, observe=True)
            for call_id, path in _tool_calls(completion.choices[0].message):
                eng.add_tool_result(call_id, tool_output(path))
        assert completion.choices[0].message.content == FINAL
    return calls, eng, counter


# ----- Google ADK ------------------------------------------------------------------------


#: The prefix of the id the harness gives a call sent without one (named by its place).
PLACED = "placed-"


def from_genai(contents: list[Any], system_instruction: Any) -> Call:
    """A :class:`Call` of the contents and system instruction an ADK model received. A call
    sent without an id (as Gemini sends them, and ADK sends them back) is named by its place
    (``placed-<content>-<part>``) and a response without one answers the first call of the
    model content before it not answered yet with its function's name, else the first not
    answered (the Gemini API's pairing by order and name)."""
    system = [str(system_instruction)] if system_instruction else []
    messages: list[tuple[str, list[Part]]] = []
    open_calls: list[tuple[str, str]] = []
    for i, content in enumerate(contents):
        parts: list[Part] = []
        for k, p in enumerate(content.parts or []):
            if p.function_call is not None:
                fc = p.function_call
                call_id = fc.id if fc.id is not None else f"{PLACED}{i}-{k}"
                if not parts or parts[-1].kind != "call":
                    open_calls = []
                open_calls.append((call_id, str(fc.name)))
                parts.append(Part("call", id=call_id, args=dict(fc.args or {})))
            elif p.function_response is not None:
                fr = p.function_response
                text = fr.response.get("result") if isinstance(fr.response, dict) else None
                if fr.id is not None:
                    answered = fr.id
                elif open_calls:
                    names = [name for _, name in open_calls]
                    answered = open_calls.pop(names.index(fr.name) if fr.name in names else 0)[0]
                else:
                    answered = f"{PLACED}{i}-{k}"
                parts.append(Part("result", str(text), id=answered))
            elif p.text is not None:
                parts.append(Part("text", p.text))
        messages.append(("assistant" if content.role == "model" else "user", parts))
    return Call(system, messages)


def adk_agent(
    eng: Any,
    calls: list[Call],
    script: Callable[[int], Move] = reply,
    read: Callable[[str], str] = tool_output,
    name: str = "harness",
    ids: bool = False,
) -> Any:
    """An ADK ``LlmAgent`` with ``RegioCallbacks`` over ``eng``, its model answering from
    ``script`` (each request recorded), its tool ``read_file`` running ``read``. Its function
    calls carry no id, as Gemini's (``ids``: the script's)."""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    from regio.adapters.google_adk import RegioCallbacks

    class ScriptedGemini(BaseLlm):
        model: str = "gemini-2.5-flash"

        async def generate_content_async(self, llm_request, stream=False):  # type: ignore[no-untyped-def]
            config = llm_request.config
            calls.append(from_genai(list(llm_request.contents), config.system_instruction))
            move = script(len(calls))
            if move is None:
                part = types.Part(text=FINAL)
            else:
                call_id, tool, path = move
                call_id = call_id if ids else None
                call = types.FunctionCall(id=call_id, name=tool, args={"path": path})
                part = types.Part(function_call=call)
            yield LlmResponse(content=types.Content(role="model", parts=[part]))

    def read_file(path: str) -> str:
        """Read a file."""
        return read(path)

    callbacks = RegioCallbacks(eng)
    return LlmAgent(
        name=name,
        model=ScriptedGemini(),
        instruction=SYSTEM_PROMPT,
        tools=[read_file],
        before_model_callback=callbacks.before_model,
        after_model_callback=callbacks.after_model,
    )


def run_google_adk() -> Run:
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    calls: list[Call] = []
    eng = engine()
    counter = Compactions(eng)
    runner = InMemoryRunner(agent=adk_agent(eng, calls), app_name="harness")

    async def run() -> str:
        session = await runner.session_service.create_session(app_name="harness", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text=TASK)])
        final = ""
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message
        ):
            if event.content and event.content.parts and event.content.parts[0].text:
                final = event.content.parts[0].text
        return final

    assert asyncio.run(run()) == FINAL
    return calls, eng, counter
