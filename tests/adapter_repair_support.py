"""Broken histories fed through each framework's own loop (tests/test_adapters_repair.py).

A history breaks the ways the field breaks it (:data:`BROKEN`): a tool call whose result never
came (a run that stopped between the two, then went on), a result whose call is gone (an
assistant message edited out of a stored history), a call id used twice (two histories
spliced). Each framework gets it where it keeps its history, or, where the framework itself
drops what has no partner (pydantic-ai's ``message_history``, ADK's contents), where regio's own
session keeps it: a run whose tool raised after the adapter recorded the model's call (the
process stopping between the call and its result), then a new run in the same session. The
last run asks for one more file: the scripted model calls ``read_file("src/mod1.py")`` and
answers. Every driver returns what the model received on each call and the engine's repairs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

import regio
from adapter_drivers_support import (
    adk_agent,
    agents_model,
    from_pydantic,
    langchain_model,
    litellm_loop,
    pydantic_anthropic_model,
)
from adapter_harness_support import (
    FINAL,
    SYSTEM_PROMPT,
    TOOL,
    Call,
    Move,
    engine,
    request_problems,
    tool_output,
)
from regio.engine._history import INTERRUPTED_RESULT

#: The text of the result whose call was edited out.
GONE = "output of a call whose assistant message was edited out of the history"
#: What the user asks after the broken history.
TASK = "Now read src/mod1.py."

#: A history step: ("user", text), ("call", id, path), ("result", id, text), ("assistant", text).
Step = tuple[str, ...]

_BASE: list[Step] = [
    ("user", "Read src/mod0.py."),
    ("call", "call_ok", "src/mod0.py"),
    ("result", "call_ok", tool_output("src/mod0.py")),
    ("assistant", "src/mod0.py sums values."),
]

#: The broken histories, by the class of break, and the repair each needs.
BROKEN: dict[str, list[Step]] = {
    "orphaned-call": [
        *_BASE,
        ("user", "Read src/lost.py."),
        ("call", "call_lost", "src/lost.py"),
        ("user", "The last run stopped; go on."),
        ("assistant", "Going on."),
    ],
    "orphaned-result": [*_BASE, ("result", "call_gone", GONE), ("assistant", "Noted.")],
    "reused-id": [
        *_BASE,
        ("user", "Read src/mod9.py."),
        ("call", "call_ok", "src/mod9.py"),
        ("result", "call_ok", tool_output("src/mod9.py")),
        ("assistant", "src/mod9.py sums values too."),
    ],
}
REPAIR = {
    "orphaned-call": "call_closed",
    "orphaned-result": "orphan_result_dropped",
    "reused-id": "call_renamed",
}


#: The model's moves in a run that goes on from a broken history: read src/mod1.py, answer.
MOVES: list[Move] = [("call_new", TOOL, "src/mod1.py")]
#: ... and in one that stops first: a call whose tool raises (the run stops before its result).
CRASH: list[Move] = [("call_lost", TOOL, "src/lost.py"), *MOVES]
#: The file whose read never returns.
LOST = "src/lost.py"


class Script:
    """The scripted model: ``moves[n - 1]`` at model call ``n``, then the final answer."""

    def __init__(self, moves: list[Move]) -> None:
        self.moves = moves

    def __call__(self, step: int) -> Move:
        return self.moves[step - 1] if step <= len(self.moves) else None


def read(path: str) -> str:
    """The harness tool; the read of :data:`LOST` stops the run (an exception out of it)."""
    if path == LOST:
        raise RuntimeError("the process stopped before the tool returned")
    return tool_output(path)


class Repairs:
    """The ``history_repaired`` events of an engine."""

    def __init__(self, eng: regio.Engine) -> None:
        self.actions: list[str] = []
        eng.subscribe(self._seen)

    def _seen(self, event: Any) -> None:
        if type(event).__name__ == "HistoryRepaired":
            self.actions.append(event.action)


# ----- the checks ------------------------------------------------------------------------


def _results(call: Call) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for _, parts in call.messages:
        for p in parts:
            if p.kind == "result":
                out.setdefault(p.id, []).append(p.text)
    return out


def _paths(call: Call) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for _, parts in call.messages:
        for p in parts:
            if p.kind == "call":
                out.setdefault(p.id, []).append(p.args.get("path", ""))
    return out


def check_repaired_run(calls: list[Call], repairs: Repairs, kind: str) -> None:
    """On every call: a valid request (W-A and W-O), each result the output of the file its
    call read (or, for the call that never returned, the result saying so). The broken part
    repaired as ``kind`` needs: the call that never returned kept, closed, from the first
    request after it was made on; the orphaned result never sent; both calls under one id kept,
    each with its own result. The run made its last step, and the repair was reported."""
    seen_lost = False
    for n, call in enumerate(calls, 1):
        problems = request_problems(call)
        assert not problems, f"call {n}: an invalid request: {problems[:3]}"
        paths, results = _paths(call), _results(call)
        for cid, texts in results.items():
            (path,) = paths[cid]
            expected = INTERRUPTED_RESULT if path == LOST else tool_output(path)
            assert texts == [expected], f"call {n}: result {cid} for {path}: {texts[0][:80]!r}"
        reads = {p for ps in paths.values() for p in ps}
        assert not (seen_lost and LOST not in reads), f"call {n}: the interrupted call left"
        seen_lost = seen_lost or LOST in reads
        assert "call_gone" not in results, f"call {n}: the orphaned result was sent"
        if kind == "reused-id":
            assert {"src/mod0.py", "src/mod9.py"} <= reads, f"call {n}: a call was lost"
    assert calls and "call_new" in _results(calls[-1]), "the run did not make its last step"
    assert seen_lost or kind != "orphaned-call", "the call that never returned was not sent"
    assert REPAIR[kind] in repairs.actions, f"no {REPAIR[kind]} repair reported: {repairs.actions}"


# ----- the frameworks --------------------------------------------------------------------


def _steps(kind: str, **build: Callable[..., Any]) -> list[Any]:
    """The framework's messages of history ``kind``: ``build[step kind](*step arguments)``."""
    return [build[step[0]](*step[1:]) for step in BROKEN[kind]]


def run_langchain(kind: str, family: str) -> tuple[list[Call], Repairs]:
    """``orphaned-call``: a run whose tool raised after the model's call (the checkpointer keeps
    the dangling ``AIMessage``), then a new message in the same thread; else the broken history
    as the agent's input messages (what the caller hands over)."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    from regio.adapters.langchain import RegioMiddleware

    @tool(TOOL)
    def read_file(path: str) -> str:
        """Read a file."""
        return read(path)

    calls: list[Call] = []
    eng = engine()
    repairs = Repairs(eng)
    crash = kind == "orphaned-call"
    agent = create_agent(
        langchain_model(family, calls, eng, Script(CRASH if crash else MOVES)),
        tools=[read_file],
        system_prompt=SYSTEM_PROMPT,
        middleware=[RegioMiddleware(eng)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "broken"}}
    history: list[Any] = []
    if crash:
        with pytest.raises(RuntimeError):
            agent.invoke({"messages": [HumanMessage(f"Read {LOST}.")]}, config)
    else:
        history = _steps(
            kind,
            user=HumanMessage,
            call=lambda i, p: AIMessage(
                "", tool_calls=[{"id": i, "name": TOOL, "args": {"path": p}}]
            ),
            result=lambda i, t: ToolMessage(t, tool_call_id=i),
            assistant=AIMessage,
        )
    result = agent.invoke({"messages": [*history, HumanMessage(TASK)]}, config)
    assert result["messages"][-1].content == FINAL
    return calls, repairs


def _pydantic_history(kind: str) -> list[Any]:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    out: list[Any] = []
    parts = _steps(
        kind,
        user=UserPromptPart,
        call=lambda i, p: ToolCallPart(TOOL, {"path": p}, tool_call_id=i),
        result=lambda i, t: ToolReturnPart(TOOL, t, tool_call_id=i),
        assistant=TextPart,
    )
    for part in parts:
        kind_of = ModelResponse if isinstance(part, ToolCallPart | TextPart) else ModelRequest
        if out and isinstance(out[-1], kind_of):
            out[-1] = kind_of(parts=[*out[-1].parts, part])
        else:
            out.append(kind_of(parts=[part]))
    return out


def pydantic_function(calls: list[Call], script: Script) -> Any:
    """A ``FunctionModel`` function recording each call in ``calls`` and answering from
    ``script``: a call of ``read_file`` or the final answer."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    def model(messages: list[Any], info: Any) -> Any:
        calls.append(from_pydantic(messages, info.instructions))
        move = script(len(calls))
        if move is None:
            return ModelResponse(parts=[TextPart(FINAL)])
        return ModelResponse(parts=[ToolCallPart(TOOL, {"path": move[2]}, tool_call_id=move[0])])

    return model


def run_pydantic_ai(kind: str, adapter: str) -> tuple[list[Call], Repairs]:
    """``orphaned-call``: a run whose tool raised after the capability recorded the model's
    call, then a new run (pydantic-ai itself closes a call left open in ``message_history``);
    ``reused-id``: the broken history as ``message_history``. ``adapter``: ``capability`` or
    ``history`` on ``FunctionModel``, ``capability-anthropic`` on ``AnthropicModel`` over an
    HTTP mock (checked as it reaches the wire)."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.models.function import FunctionModel

    from regio.adapters.pydantic_ai import RegioCapability, RegioHistory

    calls: list[Call] = []
    crash = kind == "orphaned-call"
    script = Script(CRASH if crash else MOVES)

    model = pydantic_function(calls, script)
    eng = engine()
    repairs = Repairs(eng)
    served: Any = FunctionModel(model)
    if adapter == "capability-anthropic":
        served = pydantic_anthropic_model(calls, eng, script)
    capability: Any = (
        ProcessHistory(RegioHistory(eng)) if adapter == "history" else RegioCapability(eng)
    )
    agent = Agent(served, system_prompt=SYSTEM_PROMPT, capabilities=[capability])
    agent.tool_plain(name=TOOL)(read)
    history: list[Any] = []
    if crash:
        with pytest.raises(RuntimeError):
            agent.run_sync(f"Read {LOST}.")
    else:
        history = _pydantic_history(kind)
    assert agent.run_sync(TASK, message_history=history).output == FINAL
    return calls, repairs


def run_agents_sdk(kind: str) -> tuple[list[Call], Repairs]:
    """The broken history as the session's items (what an earlier run left), then a run."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    from regio.adapters.openai_agents import RegioSession

    calls: list[Call] = []
    set_tracing_disabled(True)
    eng = engine(provider="openai", model="gpt-5")
    repairs = Repairs(eng)
    session = RegioSession(eng, "broken")
    text = lambda t: {"type": "output_text", "text": t, "annotations": []}  # noqa: E731
    items = _steps(
        kind,
        user=lambda t: {"role": "user", "content": t},
        call=lambda i, p: {
            "type": "function_call", "call_id": i, "name": TOOL,
            "arguments": json.dumps({"path": p}),
        },
        result=lambda i, t: {"type": "function_call_output", "call_id": i, "output": t},
        assistant=lambda t: {"type": "message", "role": "assistant", "content": [text(t)]},
    )  # fmt: skip
    asyncio.run(session.add_items(items))
    tools = [function_tool(read, name_override=TOOL)]
    agent = Agent(
        name="repair", instructions=SYSTEM_PROMPT, model=agents_model(calls, Script(MOVES)),
        tools=tools,
    )  # fmt: skip
    run = Runner.run(agent, TASK, session=session, run_config=session.run_config())
    assert asyncio.run(run).final_output == FINAL
    return calls, repairs


def run_litellm(kind: str, family: str) -> tuple[list[Call], Repairs]:
    """The broken history in the engine (a stored session as the caller's loop left it: for
    ``orphaned-call`` the model's call recorded, the tool never returned), then the caller's
    loop through ``regio.adapters.litellm.completion``."""
    from regio.content import Message, Text, ToolResult, ToolUse

    calls: list[Call] = []
    eng = engine()
    repairs = Repairs(eng)
    eng.write("system", SYSTEM_PROMPT)
    messages = _steps(
        kind,
        user=lambda t: Message("user", (Text(t),)),
        call=lambda i, p: Message("assistant", (ToolUse(i, TOOL, {"path": p}),)),
        result=lambda i, t: Message.tool((ToolResult(i, t),)),
        assistant=lambda t: Message("assistant", (Text(t),)),
    )
    for message in messages:
        eng.add_message(message)
    eng.add_user(TASK)
    litellm_loop(eng, family, calls, Script(MOVES))
    return calls, repairs


def run_google_adk(kind: str) -> tuple[list[Call], Repairs]:
    """``orphaned-call``: a run whose tool raised after ``after_model`` recorded the model's
    call (ADK itself drops the unanswered call from the contents it builds), then a new message
    in the same ADK session; ``reused-id``: the broken history as the session's events."""
    from google.adk.events import Event
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    calls: list[Call] = []
    eng = engine()
    repairs = Repairs(eng)
    crash = kind == "orphaned-call"
    script = Script(CRASH if crash else MOVES)
    agent = adk_agent(eng, calls, script, read, name="repair", ids=True)
    runner = InMemoryRunner(agent=agent, app_name="repair")

    def content(role: str, part: Any) -> Any:
        return types.Content(role=role, parts=[part])

    events = (
        _steps(
            kind,
            user=lambda t: ("user", content("user", types.Part(text=t))),
            call=lambda i, p: (
                "repair",
                content(
                    "model",
                    types.Part(function_call=types.FunctionCall(id=i, name=TOOL, args={"path": p})),
                ),
            ),
            result=lambda i, t: (
                "user",
                content(
                    "user",
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=i, name=TOOL, response={"result": t}
                        )
                    ),
                ),
            ),
            assistant=lambda t: ("repair", content("model", types.Part(text=t))),
        )
        if not crash
        else []
    )

    async def run() -> str:
        session = await runner.session_service.create_session(app_name="repair", user_id="u")
        for author, body in events:
            event = Event(author=author, content=body, invocation_id="earlier")
            await runner.session_service.append_event(session, event)
        answer = ""
        for text in ([f"Read {LOST}."] if crash else []) + [TASK]:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            try:
                async for event in runner.run_async(
                    user_id="u", session_id=session.id, new_message=message
                ):
                    if event.content and event.content.parts and event.content.parts[0].text:
                        answer = event.content.parts[0].text
            except RuntimeError:
                assert text != TASK
        return answer

    assert asyncio.run(run()) == FINAL
    return calls, repairs
