"""Field cases of the log and persistence: FC-31, FC-32, and save/load renders the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.engine import Engine
from regio.errors import RuntimeStateError
from regio.layout import check_anthropic, check_openai_chat
from regio.regions import (
    Clearable,
    CompactHistory,
    Compacting,
    Keyed,
    Pinned,
    SlidingWindow,
)
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words


def _engine(**options: object) -> Engine:
    return make_engine(
        [
            Pinned(name="S", budget=200, volatility="stable"),
            Keyed(name="facts", budget=300),
            Clearable(name="scratch", budget=300),
            Compacting(name="work", budget=600, threshold_tokens=400),
            CompactHistory(name="hist", budget=600, source="work"),
            CompactHistory(name="conv_hist", budget=600, source="conversation"),
            SlidingWindow(name="conversation", budget=2_000, max_items=4, eviction="per_item"),
        ],
        summarizer=StubSummarizer(5),
        **options,
    )  # type: ignore[arg-type]


# --- FC-31 ------------------------------------------------------------------------------
def test_fc_31_the_log_keeps_every_item_whatever_the_view_drops() -> None:
    engine = _engine()
    for i in range(5):
        engine.add_user(f"u{i}")
        engine.add_assistant(f"a{i}")
    earlier = [r.entry for r in engine.transcript() if r.kind == "message"]
    assert len(earlier) == 10
    engine.write("scratch", "old tool output")
    engine.clear("scratch")
    u11 = engine.add_user("u11")
    a11 = engine.add_assistant("", [ToolUse("c1", "ls", {})])
    t1 = engine.add_tool_result("c1", words(60, "file"))
    a12 = engine.add_assistant(words(30, "a12_"))
    engine.request()
    engine.compact(keep_tokens=0)
    log = engine.transcript_log.messages()
    assert len(log) == 14
    assert log[-4:] == [u11, a11, t1, a12]
    assert engine.new_items(u11.turn) == [u11, a11, t1, a12]
    assert log[:10] == earlier
    assert len(engine.window.region("conversation").entries) < 14
    plain = _engine()
    for e in log:
        plain.add_message(e.message)
    assert [m.blocks for m in plain.transcript_log.export()] == [
        m.blocks for m in engine.transcript_log.export()
    ]


# --- FC-32 ------------------------------------------------------------------------------
def _streamed(engine: Engine, *, cancel_after_result: bool = False) -> None:
    engine.add_user("list files")
    with engine.stream_assistant() as stream:
        stream.tool_call_start("c1")
        stream.tool_call_name("c1", "ls")
        stream.tool_call_delta("c1", '{"path"')
        stream.tool_call_delta("c1", ': "src"}')
        stream.tool_call_end("c1")
    engine.add_tool_result("c1", "a.py b.py")
    if cancel_after_result:
        return
    with engine.stream_assistant() as stream:
        stream.text("There are ")
        stream.text("two files.")


def _plain(engine: Engine) -> None:
    engine.add_user("list files")
    engine.add_assistant("", [ToolUse("c1", "ls", {"path": "src"})])
    engine.add_tool_result("c1", "a.py b.py")
    engine.add_assistant("There are two files.")


def _log(engine: Engine) -> list[tuple[object, ...]]:
    return [(e.id, e.role, e.blocks, e.group) for e in engine.transcript_log.messages()]


def test_fc_32_a_streamed_turn_logs_the_same_items_as_a_plain_one(tmp_path: Path) -> None:
    streamed, plain = _engine(), _engine()
    _streamed(streamed)
    _plain(plain)
    assert _log(streamed) == _log(plain)
    path = streamed.save(tmp_path / "s.json")
    restored = Engine.load(path, token_counter=StubCounter(), summarizer=StubSummarizer(5))
    restored.add_user("and now?")
    _, a = restored.request("anthropic", "m")
    _, o = restored.request("openai", "m")
    assert check_anthropic(a) == [] and check_openai_chat(o) == []
    assert "c1" in str(a["messages"]) and "a.py b.py" in str(a["messages"])


def test_fc_32_a_cancelled_stream_keeps_what_completed() -> None:
    engine = _engine()
    _streamed(engine, cancel_after_result=True)
    roles = [e.role for e in engine.transcript_log.messages()]
    assert roles == ["user", "assistant", "tool"]


def test_fc_32_a_call_whose_arguments_never_finished_is_not_saved() -> None:
    engine = _engine()
    engine.add_user("go")
    with pytest.raises(RuntimeError), engine.stream_assistant() as stream:
        stream.text("Running it.")
        stream.tool_call_start("c9", "run")
        stream.tool_call_delta("c9", '{"cmd": "ma')
        raise RuntimeError("connection dropped")
    last = engine.transcript_log.messages()[-1]
    assert last.role == "assistant" and not any(isinstance(b, ToolUse) for b in last.blocks)
    assert engine.events.of_kind("stream_call_discarded")


# --- persistence ------------------------------------------------------------------------
actions = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 40)),
        st.tuples(st.just("assistant"), st.integers(1, 40)),
        st.tuples(st.just("tool_round"), st.integers(1, 40)),
        st.tuples(st.just("fact"), st.integers(0, 5)),
        st.tuples(st.just("work"), st.integers(10, 120)),
        st.tuples(st.just("request"), st.integers(0, 1)),
        st.tuples(st.just("observe"), st.integers(1, 3)),
    ),
    min_size=1,
    max_size=25,
)


def _run(engine: Engine, steps: list[tuple[str, int]]) -> None:
    calls = 0
    for kind, n in steps:
        if kind == "user":
            engine.add_user(words(n, "u"))
        elif kind == "assistant":
            engine.add_assistant(words(n, "a"))
        elif kind == "tool_round":
            calls += 1
            engine.add_assistant("", [ToolUse(f"c{calls}", "t", {"n": n})])
            engine.add_tool_result(f"c{calls}", words(n, "r"))
        elif kind == "fact":
            engine.write("facts", words(5, f"f{n}"), key=f"k{n}")
        elif kind == "work":
            engine.write("work", words(n, "w"))
        elif kind == "request":
            engine.request("anthropic" if n else "openai", "m")
        else:
            engine.request()
            engine.observe({"input_tokens": engine.state.last_estimate * n, "output_tokens": 1})


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=actions, msgpack=st.booleans())
def test_a_loaded_engine_renders_the_same_bytes(
    tmp_path: Path, steps: list[tuple[str, int]], msgpack: bool
) -> None:
    engine = _engine()
    _run(engine, steps)
    path = engine.save(tmp_path / ("state.msgpack" if msgpack else "state.json"))
    loaded = Engine.load(path, token_counter=StubCounter(), summarizer=StubSummarizer(5))
    assert loaded.window.snapshot_state() == engine.window.snapshot_state()
    assert loaded.transcript() == engine.transcript()
    assert loaded.ledger.records == engine.ledger.records
    assert loaded.calibration.to_state() == engine.calibration.to_state()
    for provider in ("anthropic", "openai"):
        _, original = engine.request(provider, "m", flush=False)
        _, restored = loaded.request(provider, "m", flush=False)
        assert original == restored


def test_save_is_atomic_and_a_foreign_file_is_refused(tmp_path: Path) -> None:
    engine = _engine()
    engine.add_user(words(5))
    path = engine.save(tmp_path / "state.json")
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
    bad = tmp_path / "other.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(RuntimeStateError, match="not a regio engine state"):
        Engine.load(bad, token_counter=StubCounter())
    with pytest.raises(RuntimeStateError, match="token_counter"):
        Engine.load(path)


def test_pending_compactions_survive_save_and_load(tmp_path: Path) -> None:
    engine = _engine()
    engine.add_user("go")
    for i in range(5):
        engine.write("work", words(100, f"n{i}_"))
    assert engine.pending()
    loaded = Engine.load(
        engine.save(tmp_path / "s.json"), token_counter=StubCounter(), summarizer=StubSummarizer(5)
    )
    assert loaded.pending() == engine.pending()
    assert loaded.flush() is not None and not loaded.pending()
