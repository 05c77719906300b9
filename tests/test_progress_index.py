"""The window's index of progress reports (which entries hold ``ToolResult(final=False)`` of
which calls, and where those entries are) agrees with a full scan of the conversation after
any sequence of writes, compactions, releases and save/load, and a tool-result write that
supersedes nothing does not rescan the window."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from progress_support import conversation_blueprint
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.regions.superseded import ProgressIndex, open_reports


def _engine(budget: int = 1500, items: int = 14) -> Engine:
    return Engine.from_blueprint(conversation_blueprint("index", budget, items=items))


def _agrees(engine: Engine) -> None:
    conv = engine.window.conversation
    assert conv is not None
    index = engine.window.progress_index(conv)
    assert index.reports == open_reports(conv.entries)
    held = {i for ids in index.reports.values() for i in ids}
    assert set(index.positions) == held  # each entry's position, where it is now
    assert all(conv.entries[at].id == i for i, at in index.positions.items())


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 30)),
        st.tuples(st.just("call"), st.integers(1, 3)),
        st.tuples(st.just("progress"), st.integers(0, 7)),
        st.tuples(st.just("final"), st.integers(0, 7)),
        st.tuples(st.just("parallel"), st.integers(0, 7)),
        st.tuples(st.just("compact"), st.integers(0, 2)),
        st.tuples(st.just("release"), st.integers(1, 2)),
        st.tuples(st.just("save"), st.sampled_from(["json", "msgpack"])),
    ),
    min_size=1,
    max_size=50,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS)
def test_progress_index_agrees_with_a_full_scan_after_any_sequence(
    ops: list[tuple[str, object]],
) -> None:
    engine = _engine()
    calls: list[str] = []
    engine.add_user("begin")
    with tempfile.TemporaryDirectory() as tmp:
        for n, (op, arg) in enumerate(ops, 1):
            if op == "user":
                engine.add_user(f"user {n} " + "word " * int(arg))  # type: ignore[call-overload]
            elif op == "call":
                ids = [f"c{n}_{i}" for i in range(int(arg))]  # type: ignore[call-overload]
                calls.extend(ids)
                engine.add_assistant(f"calling {n}", [ToolUse(i, "job", {}) for i in ids])
            elif op in ("progress", "final") and calls:
                cid = calls[int(arg) % len(calls)]  # type: ignore[call-overload]
                engine.add_tool_result(cid, f"{op} {n}", final=op == "final")
            elif op == "parallel" and len(calls) > 1:
                a = calls[int(arg) % len(calls)]  # type: ignore[call-overload]
                b = calls[(int(arg) + 1) % len(calls)]  # type: ignore[call-overload]
                engine.add_message(
                    Message.tool(
                        [ToolResult(a, f"p {n}", final=False), ToolResult(b, f"q {n}", final=False)]
                    )
                )
            elif op == "compact":
                engine.compact(keep_messages=int(arg))  # type: ignore[call-overload]
            elif op == "release":
                engine.release("conversation", oldest=int(arg))  # type: ignore[call-overload]
            elif op == "save":
                engine = Engine.load(engine.save(Path(tmp) / f"state.{arg}"))
            _agrees(engine)


def test_a_loaded_state_rebuilds_the_index(tmp_path: Path) -> None:
    engine = _engine(budget=40000)
    engine.add_user("start")
    engine.add_assistant("", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "running 1", final=False)
    loaded = Engine.load(engine.save(tmp_path / "state.json"))
    conv = loaded.window.conversation
    assert conv is not None
    assert loaded.window.progress_index(conv).reports == {"bg": [conv.entries[-1].id]}
    loaded.add_tool_result("bg", "running 2", final=False)  # supersedes the loaded report
    reports = [
        b for e in conv.entries for b in e.blocks if isinstance(b, ToolResult) and not b.is_final
    ]
    assert [r.content for r in reports] == ["running 2"]
    _agrees(loaded)


def test_tool_result_writes_that_supersede_nothing_do_not_rescan_the_window() -> None:
    engine = _engine(budget=100000, items=1000)
    conv = engine.window.conversation
    assert conv is not None
    engine.add_user("start")
    engine.add_assistant("", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "running 0", final=False)
    index = engine.window.progress_index(conv)
    assert isinstance(index, ProgressIndex)
    before = index.rebuilds
    for i in range(1, 150):
        engine.add_assistant("", [ToolUse(f"c{i}", "ls", {})])
        engine.add_tool_result(f"c{i}", f"files {i}")  # supersedes nothing
        engine.add_tool_result("bg", f"running {i}", final=False)  # supersedes one report
    assert engine.window.progress_index(conv) is index
    assert index.rebuilds == before  # appends and its own removals never rescan
    _agrees(engine)
