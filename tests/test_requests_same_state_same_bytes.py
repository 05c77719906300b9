"""Same state, same bytes: a second ``request()`` on an unchanged window (a retry after a 5xx)
renders the same payload, cache markers included, and so does the same state saved and loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import driven_engine
from regio.content import ToolUse
from regio.engine import Engine

_step = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 300)),
    st.tuples(st.just("tool"), st.integers(1, 2_000)),
    st.tuples(st.just("fact"), st.integers(0, 5)),
    st.tuples(st.just("assistant"), st.integers(1, 100)),
    st.tuples(st.just("request"), st.integers(0, 0)),
)


def _drive(engine: Engine, steps: list[tuple[str, int]]) -> None:
    for i, (kind, n) in enumerate(steps):
        if kind == "user":
            engine.add_user("u " + "w " * n)
        elif kind == "tool":
            engine.add_assistant("a", tool_calls=[ToolUse(f"c{i}", "shell", {"x": i})])
            engine.add_tool_result(f"c{i}", "r " * n)
        elif kind == "fact":
            engine.write("facts", f"fact {i}", key=str(n))
        elif kind == "assistant":
            engine.add_assistant("ok " * n)
        else:
            engine.request()


def _bytes(engine: Engine, **kwargs: Any) -> str:
    return json.dumps(engine.request(**kwargs)[1], sort_keys=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_step, min_size=1, max_size=30))
def test_requests_on_unchanged_state_render_the_same_bytes(steps: list[tuple[str, int]]) -> None:
    engine = driven_engine(hook=None)
    _drive(engine, steps)
    first = _bytes(engine)
    assert _bytes(engine) == first
    assert _bytes(engine) == first


def test_a_retry_after_a_turn_renders_what_the_failed_call_sent() -> None:
    engine = driven_engine(hook=None)
    _drive(engine, [("user", 40), ("request", 0), ("tool", 900), ("fact", 1), ("user", 5)])
    first = _bytes(engine)
    engine.observe({"input_tokens": 900, "output_tokens": 1})  # usage changes no layout input
    assert _bytes(engine) == first


def test_a_change_after_a_retry_is_laid_out_from_the_latest_request() -> None:
    engine = driven_engine(hook=None)
    _bytes(engine)
    _bytes(engine)
    engine.add_user("something new")
    assert "something new" in _bytes(engine)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_step, min_size=1, max_size=20))
def test_save_then_load_renders_the_same_bytes(
    steps: list[tuple[str, int]], tmp_path_factory: Any
) -> None:
    engine = driven_engine(hook=None)
    _drive(engine, steps)
    first = _bytes(engine)
    path: Path = tmp_path_factory.mktemp("s") / "state.json"
    loaded = Engine.load(engine.save(path))
    assert _bytes(loaded) == first == _bytes(engine)
