"""The OpenAI Agents SDK session with a reasoning model, through the SDK's own ``Runner``: the
model's ``reasoning`` items go back to it with their turn (before the turn's first function
call) on every call of the tool loop, as OpenAI asks of a caller that keeps the context itself.

Before the fix the per-call filter rebuilt the input from the engine, which had left every
reasoning item out: inside a tool loop the model never got its reasoning back."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from adapter_harness_support import engine, tool_output

pytest.importorskip("agents")

#: The model's turns: (reasoning item id, its summary, the file it reads); then an answer.
TURNS = [("rs_1", "I should read a first.", "src/a.py"), ("rs_2", "Now b.", "src/b.py")]
ANSWER = "a and b are read."


def _scripted_model(inputs: list[list[dict[str, Any]]], turns: list[list[Any]]) -> Any:
    """A model that records each call's input in ``inputs`` and answers call ``n`` with the
    output items ``turns[n - 1]``, then with :data:`ANSWER`."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    class ScriptedModel(Model):
        async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def]
            items = [input] if isinstance(input, str) else list(input)
            inputs.append(
                [i if isinstance(i, dict) else i.model_dump(exclude_none=True) for i in items]
            )
            if len(inputs) <= len(turns):
                return ModelResponse(output=turns[len(inputs) - 1], usage=Usage(), response_id=None)
            text = ResponseOutputText(type="output_text", text=ANSWER, annotations=[])
            message = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise NotImplementedError

    return ScriptedModel()


def _read_call(n: int, path: str) -> Any:
    from openai.types.responses import ResponseFunctionToolCall

    return ResponseFunctionToolCall(
        id=f"fc_{n}",
        call_id=f"call_{n}",
        name="read_file",
        arguments=json.dumps({"path": path}),
        type="function_call",
        status="completed",
    )


def _reasoning(rs_id: str, summary: str | None) -> Any:
    from openai.types.responses import ResponseReasoningItem
    from openai.types.responses.response_reasoning_item import Summary

    summaries = [Summary(text=summary, type="summary_text")] if summary else []
    return ResponseReasoningItem(
        id=rs_id, type="reasoning", summary=summaries, encrypted_content=f"opaque-{rs_id}"
    )


def _run(model: Any, name: str, task: str) -> None:
    """Run an agent with a ``read_file`` tool and ``model`` through the SDK's ``Runner`` on a
    regio session named ``name`` and check its final answer (the model records its inputs)."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    from regio.adapters.openai_agents import RegioSession

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return tool_output(path)

    set_tracing_disabled(True)
    session = RegioSession(engine(provider="openai", model="gpt-5"), name)
    agent = Agent(name=name, instructions="Read files.", model=model, tools=[read_file])
    run = Runner.run(agent, task, session=session, run_config=session.run_config())
    assert asyncio.run(run).final_output == ANSWER


def test_reasoning_items_go_back_with_their_turn_on_every_call_of_the_tool_loop() -> None:
    inputs: list[list[dict[str, Any]]] = []
    turns = [
        [_reasoning(rs_id, summary), _read_call(n, path)]
        for n, (rs_id, summary, path) in enumerate(TURNS, 1)
    ]
    _run(_scripted_model(inputs, turns), "reasoning", "Read a and b.")
    assert len(inputs) == len(TURNS) + 1
    for n, items in enumerate(inputs, 1):
        kinds = [(i.get("type", "message"), i.get("id") or i.get("call_id")) for i in items]
        expected = []
        for k, (rs_id, _, _) in enumerate(TURNS[: n - 1], 1):
            expected += [("reasoning", rs_id), ("function_call", f"call_{k}")]
            expected += [("function_call_output", f"call_{k}")]
        assert [k for k in kinds if k[0] != "message"] == expected, f"call {n}: {kinds}"
        for item in items:
            if item.get("type") == "reasoning":  # as the model sent it
                rs_id = item["id"]
                summary = dict((r, s) for r, s, _ in TURNS)[rs_id]
                assert item["encrypted_content"] == f"opaque-{rs_id}"
                assert item["summary"] == [{"text": summary, "type": "summary_text"}]


def test_a_reasoning_item_is_left_out_of_the_shared_reader_unless_asked() -> None:
    from regio.adapters.chat import reasoning_item, response_items
    from regio.content import Thinking, ToolUse

    items = [
        {"role": "user", "content": "go"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "t"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
    ]
    assert [m.role for m in response_items(items)] == ["user", "assistant"]
    kept = response_items(items, reasoning=True)
    assert [m.role for m in kept] == ["user", "assistant"]
    thinking, call = kept[1].blocks
    assert isinstance(thinking, Thinking) and thinking.thinking == "t"
    assert isinstance(call, ToolUse) and call.id == "c1"
    assert reasoning_item(thinking) == items[1]
    assert reasoning_item(Thinking("Anthropic's", "EuYBCkQYAiJA")) is None


def test_a_hosted_web_search_goes_back_to_the_model_as_it_came_with_its_reasoning() -> None:
    """Through the SDK's ``Runner``: the second call's input holds the ``web_search_call`` as
    the model sent it, with the ``reasoning`` item OpenAI requires right before it, then the
    function call and its output (before, the session raised on the search item)."""
    from openai.types.responses import ResponseFunctionWebSearch
    from openai.types.responses.response_function_web_search import ActionSearch

    search = ResponseFunctionWebSearch(
        id="ws_1",
        type="web_search_call",
        status="completed",
        action=ActionSearch(type="search", query="where is src/a.py documented"),
    )
    inputs: list[list[dict[str, Any]]] = []
    turns = [[_reasoning("rs_ws", None), search, _read_call(1, "src/a.py")]]
    _run(_scripted_model(inputs, turns), "searching", "Find and read a.")
    assert len(inputs) == 2
    kinds = [(i.get("type", "message"), i.get("id") or i.get("call_id")) for i in inputs[1]]
    assert [k for k in kinds if k[0] != "message"] == [
        ("reasoning", "rs_ws"),
        ("web_search_call", "ws_1"),
        ("function_call", "call_1"),
        ("function_call_output", "call_1"),
    ]
    (search,) = [i for i in inputs[1] if i.get("type") == "web_search_call"]
    assert search == {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "where is src/a.py documented"},
    }
    (reasoning,) = [i for i in inputs[1] if i.get("type") == "reasoning"]
    assert reasoning["encrypted_content"] == "opaque-rs_ws"
