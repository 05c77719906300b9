"""A session fed hostile input (texts with lone surrogates, tool arguments of any JSON value,
refused adds) saves to a SQLite session store and loads back rendering the same bytes, at any
point and after any number of incremental saves.

Example count: ``REGIO_FUZZ_EXAMPLES`` (default 15 in CI; the long run in
``docs/security.md`` used 300).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutation_support import hostile_json, hostile_text
from regio.content import ToolUse
from regio.engine import Engine
from regio.errors import RegioError
from regio.persistence.store import SQLiteStore
from store_support import store_engine

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "15"))

steps = st.lists(
    st.one_of(
        st.tuples(st.just("user"), hostile_text),
        st.tuples(st.just("call"), hostile_text, st.dictionaries(hostile_text, hostile_json)),
        st.tuples(st.just("result"), hostile_text, st.booleans()),
        st.tuples(st.just("tokens"), st.integers(-5, 5) | st.booleans()),
        st.tuples(
            st.just("save"),
        ),
    ),
    min_size=1,
    max_size=10,
)


def _apply(engine: Any, step: tuple[Any, ...], calls: list[str]) -> None:
    kind = step[0]
    if kind == "user":
        engine.add_user(step[1] or "empty")
    elif kind == "call":
        call_id = f"c{len(calls)}"
        calls.append(call_id)
        engine.add_assistant(step[1], [ToolUse(call_id, "read", step[2])])
    elif kind == "result" and calls:
        engine.add_tool_result(calls[-1], step[1], final=step[2])
    elif kind == "tokens":
        engine.add_user("sized", tokens=step[1])


def _render(engine: Engine) -> Any:
    return engine.request(flush=False)[1]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=steps)
def test_fuzz_a_hostile_session_round_trips_through_the_sqlite_store(
    tmp_path_factory: Any, plan: list[tuple[Any, ...]]
) -> None:
    db = SQLiteStore(Path(tmp_path_factory.mktemp("fuzz")) / "s.db")
    engine = store_engine()
    engine.add_user("start")
    calls: list[str] = []
    try:
        for step in plan:
            with contextlib.suppress(RegioError):  # refused: nothing stored changed
                _apply(engine, step, calls)
            if step[0] == "save":
                engine.save_to(db)
        engine.save_to(db)
        restored = Engine.load_from(db, "s", token_counter=engine.counter)
        assert _render(restored) == _render(engine)
    finally:
        db.close()
