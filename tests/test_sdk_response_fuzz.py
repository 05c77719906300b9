"""Malformed provider responses never raise into the loop: ``Engine.add_response`` of a random
mutation of a valid Anthropic Messages, Chat Completions (with tool calls, or with a legacy
``function_call``) or Responses response is either admitted (and the engine still renders and
saves, and every call it holds has a non-empty name and an id every provider accepts) or
refused with a ``RegioError`` that changed nothing stored.

Example count: ``REGIO_FUZZ_EXAMPLES`` (default 60 per response shape in CI; the long run in
``docs/security.md`` used 2,000 per shape).
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given

from mutation_support import CONVERSATION_BLUEPRINT, fuzz_settings, mutate, mutation_picks
from regio.callids import id_problem
from regio.content import Entry, ToolUse
from regio.engine import Engine
from regio.errors import RegioError
from regio.layout import check_anthropic, check_openai_chat
from sdk_responses_support import (
    ANTHROPIC_MESSAGE,
    CHAT_COMPLETION,
    LEGACY_FUNCTION_CALL,
    RESPONSES_RESPONSE,
)

FUZZ = fuzz_settings(60)
BLUEPRINT = CONVERSATION_BLUEPRINT

RESPONSES: dict[str, dict[str, Any]] = {
    "anthropic": ANTHROPIC_MESSAGE,
    "chat": CHAT_COMPLETION,
    "chat_function_call": LEGACY_FUNCTION_CALL,
    "responses": RESPONSES_RESPONSE,
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
    """The property: admitted with named, provider-valid calls and still renderable (both
    providers' request checks pass) and savable, or a RegioError with nothing stored
    changed."""
    before = stored(engine)
    try:
        entry = engine.add_response(response, observe=observe)
    except RegioError:
        assert stored(engine) == before
        return
    for call in entry.message.tool_calls:
        assert call.name, f"admitted a call without a tool name: {call}"
        assert id_problem(call.id) is None, f"admitted a call id no provider takes: {call}"
    for provider, check in (("anthropic", check_anthropic), ("openai", check_openai_chat)):
        assert check(engine.request(provider)[1]) == []
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


@pytest.mark.parametrize(
    "call", [ToolUse("", "read", {}), ToolUse("c.1", "read", {}), ToolUse("c1", "", {})]
)
def test_the_property_fails_for_an_engine_that_admits_a_call_no_provider_takes(
    call: ToolUse, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fuzz property can fail: an engine that stored a call without an id or a name, or
    with an id Anthropic refuses, breaks it (what regio before 2026-12 let through)."""
    engine = fresh_engine()
    admitted = Entry(id="e9", blocks=(call,), role="assistant")
    monkeypatch.setattr(engine, "add_response", lambda *a, **k: admitted)
    with pytest.raises(AssertionError, match="admitted a call"):
        admit_or_refuse(engine, copy.deepcopy(RESPONSES["anthropic"]), observe=False)
