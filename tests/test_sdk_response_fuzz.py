"""Malformed provider responses never raise into the loop: ``Engine.add_response`` of a random
mutation of a valid Anthropic Messages, Chat Completions (with tool calls, or with a legacy
``function_call``) or Responses response is either admitted (and the engine still renders and
saves) or refused with a ``RegioError`` that changed nothing stored.

Example count: ``REGIO_FUZZ_EXAMPLES`` (default 60 per response shape in CI; the long run in
``docs/security.md`` used 2,000 per shape).
"""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings

from mutation_support import mutate, mutation_picks
from regio.blueprint import load_blueprint
from regio.errors import RegioError
from regio.runtime import Engine

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BLUEPRINT = load_blueprint(
    """
version: 1
name: responses
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be brief."}
  - {name: conversation, kind: sliding_window, budget: 20000}
"""
)

USAGE_ANTHROPIC = {
    "input_tokens": 10,
    "output_tokens": 5,
    "cache_read_input_tokens": 90,
    "cache_creation_input_tokens": 0,
}

RESPONSES: dict[str, dict[str, Any]] = {
    "anthropic": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [
            {"type": "thinking", "thinking": "look first", "signature": "sig"},
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
        ],
        "stop_reason": "tool_use",
        "usage": USAGE_ANTHROPIC,
    },
    "chat": {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Reading it.",
                    "reasoning_content": "look first",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                        }
                    ],
                },
            }
        ],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 64},
        },
    },
    "chat_function_call": {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 2,
        "model": "gpt-3.5-turbo-0613",
        "choices": [
            {
                "index": 0,
                "finish_reason": "function_call",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "read", "arguments": '{"path": "a.py"}'},
                },
            }
        ],
        "usage": {"prompt_tokens": 80, "completion_tokens": 7},
    },
    "responses": {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "x"}]},
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "read",
                "arguments": '{"path": "a.py"}',
            },
        ],
        "usage": {
            "input_tokens": 100,
            "output_tokens": 5,
            "input_tokens_details": {"cached_tokens": 64},
        },
    },
}


def stored(engine: Engine) -> bytes:
    """Everything an add could change: the window's state, the transcript and the ledger."""
    return msgspec.msgpack.encode(
        [
            engine.window.snapshot_state(),
            [r.kind for r in engine.transcript()],
            len(engine.transcript()),
            [msgspec.structs.asdict(r) for r in engine.ledger.records],
        ]
    )


def fresh_engine() -> Engine:
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("Read a.py and fix it.")
    return engine


def admit_or_refuse(engine: Engine, response: Any, observe: bool) -> None:
    """The property: admitted and still renderable and savable, or a RegioError with nothing
    stored changed."""
    before = stored(engine)
    try:
        engine.add_response(response, observe=observe)
    except RegioError:
        assert stored(engine) == before
        return
    engine.request()
    engine.request("openai")
    with tempfile.TemporaryDirectory() as tmp:
        engine.save(Path(tmp) / "state.json")


@pytest.mark.parametrize("shape", sorted(RESPONSES))
def test_every_valid_response_shape_is_admitted_with_its_calls(shape: str) -> None:
    engine = fresh_engine()
    entry = engine.add_response(copy.deepcopy(RESPONSES[shape]), observe=True)
    assert [b.name for b in entry.message.tool_calls] == ["read"]
    assert entry.message.tool_calls[0].input == {"path": "a.py"}
    assert engine.ledger.count == 1


@pytest.mark.parametrize("shape", sorted(RESPONSES))
@FUZZ
@given(picks=mutation_picks)
def test_fuzz_a_mutated_response_is_admitted_or_refused_with_nothing_changed(
    shape: str, picks: list[tuple[float, str, Any]]
) -> None:
    response = mutate(RESPONSES[shape], picks)
    admit_or_refuse(fresh_engine(), response, observe=picks[0][0] < 0.5)
