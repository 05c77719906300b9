"""Malformed input gets a RegioError naming the place (never AttributeError, KeyError or
TypeError out of a reader), and what regio used to drop or misread is read: Agents SDK items
that are ``None`` or text, a Chat Completions legacy ``function_call``, a state file whose
layout strategy became ``''``, an ``ExtractiveSummarizer`` subclass with a constructor of its
own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from regio.adapters.chat import chat_messages, response_items
from regio.adapters.openai_agents import RegioSession
from regio.agent.errors import ProviderResponseError
from regio.blueprint import load_blueprint
from regio.engine import Engine
from regio.errors import RegioError, RuntimeStateError
from regio.layout.repair import LayoutError
from regio.providers.wire import LEGACY_CALL_PREFIX, openai_chat_completion
from regio.sdk._objects import SDKInputError, message_of
from regio.summarizers import ExtractiveSummarizer
from sdk_responses_support import LEGACY_FUNCTION_CALL

BLUEPRINT = load_blueprint(
    """
version: 1
name: malformed
model: {provider: openai, name: gpt-5, context_window: 200000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be brief."}
  - {name: history, kind: compact_history, source: conversation, budget: 2000}
  - name: conversation
    kind: sliding_window
    budget: 20000
    eviction: {strategy: compact, compact_count: 4}
"""
)

LEGACY = LEGACY_FUNCTION_CALL


def engine() -> Engine:
    out = Engine.from_blueprint(BLUEPRINT)
    out.add_user("What is the weather in Oslo?")
    return out


# ----- a Chat Completions legacy function_call is read, not dropped ----------------------------
def test_a_legacy_function_call_is_read_as_a_tool_call_with_a_stable_valid_id() -> None:
    e = engine()
    entry = e.add_response(LEGACY, observe=True)
    (call,) = entry.message.tool_calls
    assert (call.name, call.input) == ("read", {"path": "a.py"})
    assert call.id.startswith(LEGACY_CALL_PREFIX)
    assert call.id.replace("_", "").replace("-", "").isalnum()  # Anthropic's id pattern
    assert openai_chat_completion(LEGACY).message.tool_calls[0].id == call.id
    e.add_tool_result(call.id, "4 degrees, rain")
    payload = e.request("anthropic")[1]
    uses = [b for m in payload["messages"] for b in m["content"] if isinstance(b, dict)]
    assert {b["type"] for b in uses} >= {"tool_use", "tool_result"}


# ----- provider responses of the wrong shape ---------------------------------------------------
@pytest.mark.parametrize(
    ("response", "match"),
    [
        (
            {"type": "message", "role": "assistant", "content": [5], "stop_reason": "end_turn"},
            r"content\[0\] is a int, not an object",
        ),
        (
            {"type": "message", "content": [{"type": "text", "text": ["x"]}], "stop_reason": "x"},
            r"content\[0\].text is a list, not text",
        ),
        (
            {"type": "message", "content": [{"type": "tool_use", "id": "t", "input": {}}]},
            r"content\[0\] \(tool_use\) has no name",
        ),
        ({"object": "chat.completion", "choices": [{"message": "hi"}]}, r"message is a str"),
        (
            {"object": "chat.completion", "choices": [{"message": {"tool_calls": [None]}}]},
            r"tool_calls\[0\] is a NoneType, not an object",
        ),
        (
            {"object": "chat.completion", "choices": [{"message": {"function_call": "f"}}]},
            r"function_call is a str, not an object",
        ),
        ({"object": "response", "output": {"type": "message"}}, r"output is a dict, not a list"),
        (
            {"object": "response", "output": [{"type": "message", "content": [7]}]},
            r"output\[0\].content\[0\] is a int, not an object",
        ),
        (
            {"object": "response", "output": [{"type": "function_call", "call_id": "c"}]},
            r"output\[0\] \(function_call\) has no name",
        ),
    ],
)
def test_a_response_part_of_the_wrong_shape_is_refused_naming_it(
    response: dict[str, Any], match: str
) -> None:
    e = engine()
    before = len(e.transcript())
    with pytest.raises((SDKInputError, ProviderResponseError), match=match):
        e.add_response(response, observe=True)
    assert len(e.transcript()) == before and e.ledger.count == 0


def test_a_response_whose_usage_cannot_be_read_stores_nothing() -> None:
    e = engine()
    response = {**LEGACY, "usage": {"prompt_tokens": "many"}}
    with pytest.raises(RegioError, match="prompt_tokens must be a token count"):
        e.add_response(response, observe=True)
    assert len(e.window.conversation.entries) == 1 and e.ledger.count == 0


@pytest.mark.parametrize(
    ("message", "match"),
    [
        ({"type": "function_call", "name": "f"}, r"function_call: 'call_id' is missing"),
        ({"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}, r"'id' is missing"),
        ({"role": "assistant", "tool_calls": "f"}, r"tool_calls: a str is not a list"),
        ({"role": "user", "content": 5}, "content is a int, not text or a list of parts"),
        ({"role": "user", "content": [{"type": "tool_use", "name": "f"}]}, "'id' is missing"),
        ({"role": "user", "content": [{"type": "image", "source": "x"}]}, "a str is not an object"),
    ],
)
def test_a_request_side_message_of_the_wrong_shape_is_refused_naming_it(
    message: dict[str, Any], match: str
) -> None:
    with pytest.raises(SDKInputError, match=match):
        message_of(message)


# ----- Agents SDK items and chat messages that are not objects ---------------------------------
@pytest.mark.parametrize("item", [None, "hello", 5])
def test_an_agents_sdk_item_that_is_not_an_object_is_refused_naming_its_index(item: Any) -> None:
    e = engine()
    session = RegioSession(e)
    with pytest.raises(SDKInputError, match=r"items\[1\]: cannot read a"):
        asyncio.run(session.add_items([{"role": "user", "content": "hi"}, item]))
    with pytest.raises(SDKInputError, match=r"messages\[0\]: cannot read a"):
        chat_messages([item])  # type: ignore[list-item]


def test_an_item_without_its_call_id_is_refused_naming_it() -> None:
    with pytest.raises(SDKInputError, match=r"items\[0\]: 'call_id' is missing"):
        response_items([{"type": "function_call_output", "output": "x"}])


# ----- a state file whose layout strategy became '' ---------------------------------------------
def test_a_state_file_with_an_empty_layout_strategy_is_refused_at_load(tmp_path: Path) -> None:
    e = engine()
    path = e.save(tmp_path / "state.json")
    state = json.loads(path.read_text())
    state["config"]["strategy"] = ""
    path.write_text(json.dumps(state))
    with pytest.raises(RuntimeStateError, match=r"state.json: .*unknown layout strategy ''"):
        Engine.load(path)


def test_an_unknown_strategy_or_ttl_is_refused_when_the_engine_is_built() -> None:
    with pytest.raises(LayoutError, match="unknown layout strategy 'fancy'"):
        Engine.from_blueprint(BLUEPRINT, strategy="fancy")
    with pytest.raises(ValueError, match="'ttl' must be in"):
        Engine.from_blueprint(BLUEPRINT, ttl="2h")
    assert issubclass(LayoutError, RegioError)


# ----- an ExtractiveSummarizer subclass with a constructor of its own --------------------------
class LabelledSummarizer(ExtractiveSummarizer):
    def __init__(self, label: str) -> None:
        super().__init__(max_summary_tokens=300)
        self.label = label

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return f"[{self.label}] " + super().__call__(*args, **kwargs)


def test_an_extractive_summarizer_subclass_with_its_own_constructor_builds_an_engine() -> None:
    mine = LabelledSummarizer("ops")
    e = Engine.from_blueprint(BLUEPRINT, summarizer=mine)
    assert e.summarizer is not mine and mine.counter is None  # the caller's object untouched
    assert (e.summarizer.label, e.summarizer.counter) == ("ops", e.counter)
    for n in range(8):
        e.add_user(f"question {n} " + "word " * 40)
        e.add_assistant(f"answer {n} " + "word " * 40)
    e.compact(keep_messages=2)
    assert e.window.region("history").entries[-1].text.startswith("[ops] ")
