"""What a save records once: the layout state the next request carries on from (it is the
last request's ``state``), and the tools of the last ``request(tools=...)``, which the budget
counts as sent again until a request passes others, so a loaded engine's trigger and ceiling
checks see the same tool schemas as the engine that was saved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import blueprint_text, driven_engine, reload_engine
from regio.engine import Engine
from regio.layout import ToolSpec
from regio.persistence.store import encode_save
from regio.persistence.store.base import _Head


def _tool(name: str, props: int) -> ToolSpec:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(props)}}
    return ToolSpec(name, f"The {name} tool.", schema)


TOOLS = st.lists(
    st.builds(_tool, st.sampled_from(["shell", "grep", "edit", "web"]), st.integers(0, 6)),
    max_size=3,
    unique_by=lambda t: t.name,
)


def _accounting(engine: Engine) -> tuple[int, int, int, int]:
    snap = engine.snapshot()
    return engine.ceiling(), engine.size(), engine.budget.estimate(), snap.tools_tokens


def test_a_saved_state_holds_the_layout_state_once(tmp_path: Path) -> None:
    engine = driven_engine(hook=None)
    engine.add_user("again")
    engine.request()
    data = json.loads(engine.save(tmp_path / "s.json").read_bytes())
    assert "layout_state" not in data
    assert data["last_request"]["state"] == json.loads(
        msgspec.json.encode(engine.state.layout_state)
    )
    loaded = Engine.load(tmp_path / "s.json")
    assert loaded.state.layout_state == engine.state.layout_state


def test_a_stored_head_holds_the_layout_state_once() -> None:
    engine = driven_engine(hook=None)
    records = encode_save(engine, None)
    head = msgspec.msgpack.decode(records.head, type=_Head)
    state = msgspec.msgpack.decode(bytes(head.state))
    assert "layout_state" not in state
    assert head.states is not None and head.states[0] is not None
    last = msgspec.msgpack.decode(records.put[head.states[0].rest])
    assert last["requests"] == engine.state.layout_state.requests


def test_a_layout_state_without_a_request_is_saved_on_its_own(tmp_path: Path) -> None:
    engine = driven_engine(hook=None)
    carried = engine.state.layout_state
    fresh = Engine.from_blueprint(blueprint_text(hook=None), layout_state=carried)
    loaded = Engine.load(fresh.save(tmp_path / "s.json"))
    assert loaded.state.last_request is None
    assert loaded.state.layout_state == carried


@pytest.mark.parametrize("how", ["json", "msgpack", "store"])
def test_a_loaded_engine_counts_the_tools_of_the_last_request(tmp_path: Path, how: str) -> None:
    engine = driven_engine(hook=None)
    tools = [_tool("shell", 12), _tool("grep", 4)]
    engine.add_user("use the tools")
    engine.request(tools=tools)
    loaded = reload_engine(engine, tmp_path, how)
    assert loaded.budget.request_tools == engine.budget.request_tools
    assert _accounting(loaded) == _accounting(engine)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tools=TOOLS,
    turns=st.integers(1, 3),
    how=st.sampled_from(["json", "msgpack", "store"]),
)
def test_save_load_then_the_same_request_renders_the_same_bytes_and_counts(
    tmp_path_factory: Any, tools: list[ToolSpec], turns: int, how: str
) -> None:
    folder = Path(tmp_path_factory.mktemp("once"))
    engine = driven_engine(hook=None)
    for turn in range(turns):
        engine.add_user(f"turn {turn}")
        engine.request(tools=tools)
    loaded = reload_engine(engine, folder, how)
    assert loaded.state.layout_state == engine.state.layout_state
    assert _accounting(loaded) == _accounting(engine)
    for e in (engine, loaded):
        e.add_user("the next turn")
    assert _accounting(loaded) == _accounting(engine)
    assert loaded.request(tools=tools)[1] == engine.request(tools=tools)[1]
    assert loaded.state.last_estimate == engine.state.last_estimate
