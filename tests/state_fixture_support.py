"""The session behind the state fixtures saved by an older regio (``tests/fixtures/state``):
built step by step with a fixed clock, so a test can build it again and compare a loaded
engine with it. ``python tests/state_fixture_support.py`` writes the fixtures (only ever run
by the regio version whose format the fixture records)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from persistence_support import blueprint_text
from regio.content import ToolUse
from regio.engine import Engine
from regio.layout import ToolSpec
from regio.policies.relief import ReliefPolicy, ToolRelief

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "state"
#: The tool the application passes to ``request(tools=...)`` in the fixture session.
SHELL = ToolSpec(
    "shell", "Run a shell command.", {"type": "object", "properties": {"cmd": {"type": "string"}}}
)


class Ticks:
    """A clock that advances one second per call (transcript stamps are reproducible)."""

    def __init__(self) -> None:
        self.now = 1_764_547_200.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def unwatched(value: Any) -> Any:
    """``value`` (a ``Request`` or a ``LayoutState``, or ``None``) without the regions' watch
    (``LayoutState.watch``, ``tokens`` and ``opening``, observed volatility), the marked
    prefixes of the last requests (``LayoutState.marked``, ``held``), the digest of the
    entries the first tail copy follows (``LayoutState.anchored``), the tail marker's
    evidence (``LayoutState.tail_held``) and the newest entry a request carried
    (``LayoutState.newest_entry``): as the regio that wrote the fixtures laid it out (before
    all five)."""
    from msgspec.structs import replace

    from regio.layout import LayoutState, Request

    if isinstance(value, Request):
        return replace(value, state=unwatched(value.state))
    if isinstance(value, LayoutState):
        return replace(
            value,
            watch={},
            tokens=0,
            marked=(),
            opening="",
            anchored="",
            held=(),
            tail_held={},
            newest_entry=None,
        )
    return value


def unmarked(state: Any) -> Any:
    """``state`` (an ``EngineState``) with no ``TranscriptRecord.kept`` marks, no regions'
    watch (:func:`unwatched`), no measured ``layout_tokens``, no last request's send time
    and next entry number and no conversation step sizes: the state of the fixture session as
    the regio that wrote the fixtures saved it (before the mark, the watch, the measure, the
    send time and the steps)."""
    from msgspec.structs import replace

    return replace(
        state,
        transcript=[replace(r, kept=()) for r in state.transcript],
        last_request=unwatched(state.last_request),
        layout_input=(state.layout_input[0], unwatched(state.layout_input[1])),
        layout_state=unwatched(state.layout_state),
        layout_tokens=0,
        last_sent_at=None,
        last_next_entry=0,
        window=replace(
            state.window,
            regions=[
                replace(r, extra={k: v for k, v in r.extra.items() if k != "steps"})
                for r in state.window.regions
            ],
        ),
    )


#: The standing summary requirements the fixtures were saved with (the default until the
#: carry-forward schema of 2026-12-04): a saved engine keeps its own, so a session built again
#: to compare with a fixture states them.
FIXTURE_STANDING_INSTRUCTIONS = (
    "Write a structured summary with these sections: Goal; Progress; Decisions; Constraints "
    "(quote them verbatim); Files and identifiers (copy paths, ids, names and numbers "
    "verbatim); Open items; Next steps. If a previous summary is given, carry every fact in it "
    "forward unless a later entry supersedes it. Never invent facts."
)


def fixture_engine(turns: int = 6, store: Any = None) -> Engine:
    """The fixture session: every region kind, tool calls with long results (the relief chain
    trims them on admission, so relief originals are kept), requests with an application tool
    and usage observed after each; saved into ``store`` after every turn when given."""
    engine = Engine.from_blueprint(
        blueprint_text(hook=None),
        clock=Ticks(),
        relief=ReliefPolicy(tools={"shell": ToolRelief(max_result_tokens=120)}),
        session_id="fixture",
        standing_instructions=FIXTURE_STANDING_INSTRUCTIONS,
    )
    engine.write("facts", "the repo uses pytest", key="runner")
    engine.handle_tool_call("todo_add", {"region": "todo", "text": "reproduce the failure"})
    for turn in range(turns):
        engine.add_user(f"turn {turn}: fix the failing test in tests/test_{turn}.py")
        call = ToolUse(f"call_{turn}", "shell", {"cmd": f"pytest tests/test_{turn}.py"})
        engine.add_assistant("Running it.", tool_calls=[call])
        out = "\n".join(f"line {i} of the test output for turn {turn}" for i in range(40))
        engine.add_tool_result(f"call_{turn}", out)
        engine.request(tools=[SHELL])
        engine.observe({"input_tokens": engine.state.last_estimate + 3, "output_tokens": 7})
        if store is not None:
            engine.save_to(store)
    return engine


def write_fixtures(stamp: str) -> list[Path]:
    """Save :func:`fixture_engine` as ``main-<stamp>.json`` / ``.msgpack`` and into a SQLite
    store ``main-<stamp>.db`` (session ``fixture``, saved after every turn)."""
    from regio.persistence.store import SQLiteStore

    FIXTURES.mkdir(parents=True, exist_ok=True)
    engine = fixture_engine()
    paths = [engine.save(FIXTURES / f"main-{stamp}.json")]
    paths.append(engine.save(FIXTURES / f"main-{stamp}.msgpack"))
    db_path = FIXTURES / f"main-{stamp}.db"
    db_path.unlink(missing_ok=True)
    store = SQLiteStore(db_path)
    fixture_engine(store=store)
    store._db.execute("PRAGMA journal_mode=DELETE")  # one file, no -wal / -shm beside it
    store._db.execute("VACUUM")
    store.close()
    paths.append(db_path)
    return paths


if __name__ == "__main__":
    for written in write_fixtures(sys.argv[1] if len(sys.argv) > 1 else "20261201"):
        print(written, written.stat().st_size)
