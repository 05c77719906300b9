"""A returned payload is the caller's: editing any part of it (every dict and list, at any
depth) changes neither the engine's next payload nor a retry of the same request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.engine import Engine
from regio.layout import ToolSpec
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter

BLUEPRINT = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000,
        max_output_tokens: 1000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 3000, seed: "You help. SEED"}
  - {name: env_state, kind: keyed, volatility: rewritten, budget: 500}
  - {name: notes, kind: temporary, volatility: grows, budget: 4000, admission: evict}
  - {name: conversation, kind: sliding_window, budget: "80%"}
""".replace("SEED", "Be careful. " * 200)

APIS = ["anthropic", "openai_chat", "openai_responses", "text"]


def _engine() -> Engine:
    counter = get_counter("heuristic")
    return Engine.from_blueprint(
        BLUEPRINT, token_counter=counter, summarizer=ExtractiveSummarizer(counter=counter)
    )


def _turn(engine: Engine, i: int) -> None:
    engine.add_user(f"turn {i}: " + "look closely " * 60)
    engine.write("env_state", f"step={i}", key="env")
    if i % 3 == 1:
        engine.write("notes", f"note {i}")
    engine.add_assistant(f"checking {i}", [ToolUse(f"c{i}", "ls", {"path": f"/r/{i}", "n": [i]})])
    engine.add_tool_result(f"c{i}", f"files {i}")


TOOLS = [
    ToolSpec("ls", "List files.", {"type": "object", "properties": {"path": {"type": "string"}}})
]


def _request(engine: Engine, api: str) -> dict[str, Any]:
    return engine.request("anthropic", "claude-sonnet-4-5", api=api, tools=TOOLS)[1]


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (``value`` first), depth first."""
    out = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (dict, list)):
            out.append(v)
            stack.extend(v.values() if isinstance(v, dict) else v)
    return out


def _vandalize(container: Any, how: int) -> None:
    """Edit one container in place: add, replace, remove or clear."""
    if isinstance(container, dict):
        keys = list(container)
        if how == 0 or not keys:
            container["vandal"] = ["x"]
        elif how == 1:
            container[keys[-1]] = "x"
        elif how == 2:
            del container[keys[0]]
        else:
            container.clear()
    else:
        if how == 0 or not container:
            container.append({"vandal": "x"})
        elif how == 1:
            container[-1] = "x"
        elif how == 2:
            container.pop(0)
        else:
            container.clear()


def _session(api: str, edit: Any) -> list[bytes]:
    """Payload bytes of a session (a retry after every request); ``edit(payload)`` is applied
    to every returned payload right after its bytes are taken."""
    engine = _engine()
    out = []
    for i in range(8):
        _turn(engine, i)
        for _ in range(2):  # the request and a retry of it
            payload = _request(engine, api)
            out.append(json.dumps(payload, sort_keys=False).encode())
            edit(payload)
    return out


def _edit_everything(payload: dict[str, Any]) -> None:
    for n, c in enumerate(reversed(_containers(payload))):  # innermost first
        _vandalize(c, n % 4)


@pytest.mark.parametrize("api", APIS)
def test_editing_every_part_of_a_payload_changes_no_later_payload(api: str) -> None:
    untouched = _session(api, lambda p: None)
    assert _session(api, _edit_everything) == untouched


paths = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3)), min_size=1, max_size=12)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(APIS[:3]), paths)
def test_random_edits_of_returned_payloads_change_no_later_payload(
    api: str, edits: list[tuple[int, int]]
) -> None:
    def edit(payload: dict[str, Any]) -> None:
        for pick, how in edits:
            found = _containers(payload)
            _vandalize(found[pick % len(found)], how)

    assert _session(api, edit) == _session(api, lambda p: None)


def test_two_payloads_share_no_container() -> None:
    engine = _engine()
    for i in range(4):
        _turn(engine, i)
    first = _request(engine, "anthropic")
    second = _request(engine, "anthropic")
    ids = {id(c) for c in _containers(first)}
    assert not ids & {id(c) for c in _containers(second)}
