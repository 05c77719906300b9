"""Each adapter's async hooks await the engine's async entries (regio.adapters.drive): with an
async summarizer, a framework's own async loop (LangChain ``agent.ainvoke``, pydantic-ai
``agent.run``, the Agents SDK ``Runner.run``) compacts by awaiting it. On main the async hooks
called the engine's sync entries, which refuse an async summarizer (``compaction_rejected``)
and, after three strikes, evict the oldest turns unsummarized."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import regio.adapters  # noqa: F401  (first: a later import of LiteLLM reads no price map online)
from adapter_drivers_support import agents_model
from adapter_harness_support import BLUEPRINT, FINAL, SYSTEM_PROMPT, TOOL, path_of
from regio.adapters.admit import aadmit, admit
from regio.content import Message, ToolResult, ToolUse
from regio.engine._engine import Engine
from regio.summarizers._extractive import ExtractiveSummarizer

#: Model calls that read a file before the final answer; each result is ~1,500 tokens in a
#: 9,000-token window, so the conversation compacts several times on the way.
STEPS = 10
TASK = "Read the modules one by one."


class AsyncExtractive(ExtractiveSummarizer):
    """The extractive summarizer behind an async call (a coroutine function ``__call__``, as
    an ``LLMSummarizer`` over an async client), counting the calls awaited."""

    awaited: int = 0

    async def __call__(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        await asyncio.sleep(0)
        self.awaited += 1
        return super().__call__(*args, **kwargs)


def big_output(path: str) -> str:
    """A ``read_file`` result of about 1,500 tokens, each line unique across paths."""
    return "\n".join(
        f"{path}:{i}: value_{i} = compute(items[{i}], seed={i * 13}) + delta_{path}"
        for i in range(120)
    )


def move(step: int) -> tuple[str, str] | None:
    """(call id, path) of the model's tool call at call ``step`` (1-based); ``None``: the
    final answer."""
    return None if step > STEPS else (f"call_{step}", path_of(step))


def async_engine(**options: Any) -> tuple[Engine, list[Any]]:
    options.setdefault("context_window", 9_000)
    options.setdefault("output_reserve", 0)
    eng = Engine.from_blueprint(BLUEPRINT, summarizer=AsyncExtractive(), **options)
    events: list[Any] = []
    eng.subscribe(events.append)
    return eng, events


def assert_awaited(eng: Engine, events: list[Any], received: list[int]) -> None:
    """Compactions finished by awaiting the summarizer; none refused, failed or fell back to
    evicting unsummarized; ``received`` (the messages the model got on each call) shows the
    compacted window on every call: the run's history grows to ``2 * STEPS + 1`` messages."""
    assert len(received) == STEPS + 1 and max(received) < STEPS, received
    bad = ("compaction_rejected", "compaction_failed", "compaction_no_progress")
    failures = [
        e
        for e in events
        if e.kind in bad or (e.kind == "evicted" and e.reason == "compaction_fallback")
    ]
    assert failures == []
    finished = [e for e in events if e.kind == "compaction_finished"]
    assert len(finished) >= 2
    assert eng.summarizer.awaited == sum(e.summarizer_calls for e in finished) > 0


def test_langchain_ainvoke_awaits_the_async_summarizer_in_the_middleware():
    pytest.importorskip("langchain", reason="needs the frameworks extra (langchain)")
    from langchain.agents import create_agent
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool

    from regio.adapters.langchain import RegioMiddleware

    received: list[int] = []

    class Scripted(BaseChatModel):
        """LangChain's own chat model interface, answering from :func:`move`."""

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatResult:
            received.append(len(messages))
            found = move(len(received))
            if found is None:
                message = AIMessage(FINAL)
            else:
                call_id, path = found
                call = {"name": TOOL, "args": {"path": path}, "id": call_id}
                message = AIMessage("", tool_calls=[call])
            return ChatResult(generations=[ChatGeneration(message=message)])

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return big_output(path)

    eng, events = async_engine()
    agent = create_agent(
        Scripted(),
        tools=[read_file],
        system_prompt=SYSTEM_PROMPT,
        middleware=[RegioMiddleware(eng)],
    )
    state = {"messages": [{"role": "user", "content": TASK}]}
    result = asyncio.run(agent.ainvoke(state, {"recursion_limit": 4 * STEPS}))

    assert result["messages"][-1].content == FINAL
    assert len(received) == STEPS + 1
    assert_awaited(eng, events, received)


@pytest.mark.parametrize("adapter", ["capability", "history"])
def test_pydantic_ai_agent_run_awaits_the_async_summarizer_in_the_adapter(adapter: str):
    pytest.importorskip("pydantic_ai", reason="needs the frameworks extra (pydantic-ai)")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from regio.adapters.pydantic_ai import RegioCapability, RegioHistory

    received: list[int] = []

    async def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        received.append(len(messages))
        found = move(len(received))
        if found is None:
            return ModelResponse(parts=[TextPart(FINAL)])
        call_id, path = found
        return ModelResponse(parts=[ToolCallPart(TOOL, {"path": path}, tool_call_id=call_id)])

    eng, events = async_engine()
    capability: Any = (
        RegioCapability(eng) if adapter == "capability" else ProcessHistory(RegioHistory(eng))
    )
    agent = Agent(FunctionModel(model), system_prompt=SYSTEM_PROMPT, capabilities=[capability])

    @agent.tool_plain(name=TOOL)
    def read_file(path: str) -> str:
        """Read a file."""
        return big_output(path)

    assert asyncio.run(agent.run(TASK)).output == FINAL
    assert len(received) == STEPS + 1
    assert_awaited(eng, events, received)


def test_agents_sdk_runner_run_awaits_the_async_summarizer_in_the_session():
    pytest.importorskip("agents", reason="needs the frameworks extra (openai-agents)")
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    from regio.adapters.openai_agents import RegioSession

    calls: list[Any] = []

    def script(step: int) -> Any:
        found = move(step)
        return None if found is None else (found[0], TOOL, found[1])

    @function_tool(name_override=TOOL)
    def read_file(path: str) -> str:
        """Read a file."""
        return big_output(path)

    set_tracing_disabled(True)
    eng, events = async_engine(provider="openai", model="gpt-5")
    session = RegioSession(eng, "async")
    agent = Agent(
        name="async",
        instructions=SYSTEM_PROMPT,
        model=agents_model(calls, script),
        tools=[read_file],
    )
    run = Runner.run(
        agent, TASK, session=session, run_config=session.run_config(), max_turns=STEPS + 5
    )
    assert asyncio.run(run).final_output == FINAL
    assert len(calls) == STEPS + 1
    assert_awaited(eng, events, [len(c.messages) for c in calls])


EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "15"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(sizes=st.lists(st.integers(1, 50_000), min_size=1, max_size=4))
def test_admit_and_aadmit_leave_the_same_conversation_and_events(sizes: list[int]):
    # the one admission path, driven sync and async (regio.adapters.drive): tool results from
    # small to larger than one entry may hold (fitted: tool_result_too_large)
    runs = []
    for driver in ("sync", "async"):
        eng = Engine.from_blueprint(BLUEPRINT, context_window=9_000, output_reserve=0)
        events: list[Any] = []
        eng.subscribe(events.append)
        eng.add_user(TASK)
        for n, size in enumerate(sizes):
            calls = [ToolUse(f"c{n}", TOOL, {"path": path_of(n)})]
            eng.add_message(Message.assistant("", calls))
            text = " ".join(f"w{i}" for i in range(size))  # ~40,000 words: over the cap
            result = Message.tool((ToolResult(f"c{n}", text),))
            if driver == "sync":
                admit(eng, result)
            else:
                asyncio.run(aadmit(eng, result))
        conv = eng.window.conversation
        assert conv is not None
        entries = [(e.role, [repr(b) for b in e.blocks or ()]) for e in conv.entries]
        runs.append((entries, [e.kind for e in events]))
    assert runs[0] == runs[1]
