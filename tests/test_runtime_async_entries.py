"""Every Engine call that can end in a summary has a sync and an async entry driving the same
step generator (regio.engine._asyncentries): an async summarizer is awaited on every path that
compacts (adding a message, a write, a request, overflow recovery, a context tool), never
refused, and the two entries leave the same window and events."""

from __future__ import annotations

import asyncio
import inspect
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.agent import AgentLoop, ScriptedProvider, reply
from regio.content import ToolUse
from regio.engine._engine import Engine
from regio.summarizers._extractive import ExtractiveSummarizer
from test_agent_loop import BLUEPRINT, look_tool, overflow_error
from test_tokens_limits import _strings

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))


class AsyncExtractive(ExtractiveSummarizer):
    """The extractive summarizer behind an async call, counting the calls awaited (on the
    engine's copy: the engine gives an extractive summarizer its counter)."""

    awaited: int = 0

    async def __call__(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        await asyncio.sleep(0)
        self.awaited += 1
        return super().__call__(*args, **kwargs)


def _loop_engine(summarizer: Any) -> tuple[Engine, list[Any]]:
    text = BLUEPRINT.replace("MAX_ITEMS", "200").replace("COMPACT_COUNT", "20")
    engine = Engine.from_blueprint(text, summarizer=summarizer, clock=lambda: 1000.0)
    events: list[Any] = []
    engine.subscribe(events.append)
    return engine, events


def _script(turns: int) -> list[Any]:
    calls = [reply("", [(f"c{i}", "look", {})], prompt_tokens=400) for i in range(turns)]
    return [*calls, reply("done", prompt_tokens=400)]


def _failures(events: list[Any]) -> list[Any]:
    """Refused compactions, strikes run out, and turns evicted without a summary."""
    bad = ("compaction_rejected", "compaction_failed", "compaction_no_progress")
    return [
        e
        for e in events
        if e.kind in bad or (e.kind == "evicted" and e.reason == "compaction_fallback")
    ]


# --- the reproduction of issue 26 ----------------------------------------------------------
def test_the_async_loop_compacts_2000_token_tool_results_with_the_async_summarizer():
    # a 5,000-token conversation and 2,000-token tool results: every tool result passes the
    # conversation's budget, so adding it makes room by compaction mid-turn. On main that ran
    # synchronously, refused the async summarizer and, after three strikes, evicted the oldest
    # turns unsummarized.
    summarizer = AsyncExtractive()
    engine, events = _loop_engine(summarizer)
    provider = ScriptedProvider(_script(10))
    result = asyncio.run(AgentLoop(engine, provider, [look_tool(1000)]).arun("inspect"))

    assert result.stop_reason == "final_answer"
    assert _failures(events) == []
    finished = [e for e in events if e.kind == "compaction_finished"]
    assert len(finished) >= 3
    assert engine.summarizer.awaited == sum(e.summarizer_calls for e in finished)
    history = engine.window.region("history").entries
    assert history
    # the last request shows the model every summary the history holds
    shown = _strings(provider.calls[-1])
    assert all(any(h.text in s for s in shown) for h in history)


def test_the_sync_and_async_loops_send_the_model_the_same_requests():
    sync_engine, sync_events = _loop_engine(ExtractiveSummarizer())
    async_engine, async_events = _loop_engine(AsyncExtractive())
    sync_provider, async_provider = ScriptedProvider(_script(8)), ScriptedProvider(_script(8))
    AgentLoop(sync_engine, sync_provider, [look_tool(1000)]).run("inspect")
    asyncio.run(AgentLoop(async_engine, async_provider, [look_tool(1000)]).arun("inspect"))

    assert async_provider.calls == sync_provider.calls
    assert [e.to_dict() for e in async_events] == [e.to_dict() for e in sync_events]
    assert _failures(async_events) == []


# --- each async entry awaits the summarizer --------------------------------------------------
def test_aadd_tool_result_makes_room_by_awaiting_the_async_summarizer():
    summarizer = AsyncExtractive()
    engine, events = _loop_engine(summarizer)

    async def run() -> None:
        await engine.aadd_user("inspect the files")
        for i in range(6):
            await engine.aadd_assistant("", [ToolUse(f"c{i}", "look", {})])
            await engine.aadd_tool_result(f"c{i}", f"file {i}: " + "alpha beta " * 1000)

    asyncio.run(run())
    assert _failures(events) == []
    assert engine.summarizer.awaited >= 1
    assert engine.window.region("history").entries
    assert engine.window.conversation is not None
    assert engine.window.conversation.used_tokens <= engine.window.conversation.budget


def test_the_sync_add_tool_result_never_calls_an_async_summarizer_it_cannot_await():
    summarizer = AsyncExtractive()
    engine, events = _loop_engine(summarizer)
    engine.add_user("inspect the files")
    # four results: the elastic conversation holds three in what the window has free
    for i in range(4):
        engine.add_assistant("", [ToolUse(f"c{i}", "look", {})])
        engine.add_tool_result(f"c{i}", f"file {i}: " + "alpha beta " * 1000)

    assert engine.summarizer.awaited == 0
    rejected = [e for e in events if e.kind == "compaction_rejected"]
    assert rejected and all("async" in e.message for e in rejected)


PAIRED = """
version: 1
name: paired
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
tools: {context: all}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 200, seed: "Be brief."}
  - {name: notes, kind: compacting, budget: 1200}
  - {name: notes_history, kind: compact_history, source: notes, budget: 600}
  - {name: conversation, kind: sliding_window, budget: 20000}
"""


def _note(i: int) -> str:
    return f"note {i}: the build of module m{i} fails at step {i} " + "gamma delta " * 60


def test_awrite_summarizes_a_full_compacting_region_by_awaiting_the_async_summarizer():
    summarizer = AsyncExtractive()
    engine = Engine.from_blueprint(PAIRED, summarizer=summarizer)
    events: list[Any] = []
    engine.subscribe(events.append)

    async def run() -> None:
        for i in range(12):
            await engine.aappend("notes", _note(i))

    asyncio.run(run())
    assert _failures(events) == []
    assert not [e for e in events if e.kind == "evicted"]
    assert engine.summarizer.awaited >= 1
    assert engine.window.region("notes_history").entries


def test_ahandle_tool_call_writes_a_note_that_makes_room_by_awaiting_the_async_summarizer():
    summarizer = AsyncExtractive()
    engine = Engine.from_blueprint(PAIRED, summarizer=summarizer)
    events: list[Any] = []
    engine.subscribe(events.append)

    async def run() -> list[Any]:
        args = [{"region": "notes", "text": _note(i)} for i in range(12)]
        return [await engine.ahandle_tool_call("context_append", a) for a in args]

    outcomes = asyncio.run(run())
    assert all(o.ok for o in outcomes), [o.text for o in outcomes if not o.ok]
    assert _failures(events) == []
    assert engine.summarizer.awaited >= 1


def test_arecover_overflow_compacts_by_awaiting_the_async_summarizer():
    summarizer = AsyncExtractive()
    engine, events = _loop_engine(summarizer)

    async def run() -> Any:
        await engine.aadd_user("inspect the files")
        for i in range(4):
            await engine.aadd_assistant("", [ToolUse(f"c{i}", "look", {})])
            await engine.aadd_tool_result(f"c{i}", f"file {i}: " + "alpha beta " * 300)
        await engine.arequest("openai", "gpt-4o")
        before = engine.summarizer.awaited
        token = await engine.arecover_overflow(overflow_error(9000, 4000))
        return token, before

    token, before = asyncio.run(run())
    assert token is not None and token.compaction is not None
    assert engine.summarizer.awaited > before
    assert _failures(events) == []


def test_every_sync_entry_that_can_summarize_has_an_async_twin_with_its_signature():
    from regio.engine._asyncentries import AsyncEntries

    names = [
        "write",
        "append",
        "add_message",
        "add_user",
        "add_observation",
        "add_assistant",
        "add_tool_result",
        "add_response",
        "request",
        "recover_overflow",
        "flush",
        "compact",
        "adopt_compaction",
        "handle_tool_call",
    ]
    for name in names:
        twin = getattr(AsyncEntries, f"a{name}")
        assert inspect.iscoroutinefunction(twin), name
        sync_params = inspect.signature(getattr(Engine, name)).parameters
        assert inspect.signature(twin).parameters.keys() == sync_params.keys(), name


# --- the property: the two entries are one flow -----------------------------------------------
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 400)),
        st.tuples(st.just("call"), st.integers(1, 1500)),
        st.tuples(st.just("note"), st.integers(1, 300)),
        st.tuples(st.just("tool_note"), st.integers(1, 300)),
        st.tuples(st.just("request"), st.booleans()),
        st.tuples(st.just("flush"), st.just(0)),
        st.tuples(st.just("compact"), st.integers(0, 6)),
        st.tuples(st.just("overflow"), st.just(0)),
    ),
    min_size=1,
    max_size=14,
)

MIXED = """
version: 1
name: mixed
model: {provider: openai, name: gpt-4o, context_window: 12000, max_output_tokens: 500}
tools: {context: all}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 200, seed: "Be brief."}
  - {name: notes, kind: compacting, budget: 800}
  - {name: notes_history, kind: compact_history, source: notes, budget: 400}
  - {name: history, kind: compact_history, source: conversation, budget: 1200}
  - name: conversation
    kind: sliding_window
    budget: 4000
    max_items: 200
    eviction: {strategy: compact, compact_count: 10}
"""


def _text(n: int, tag: str) -> str:
    return f"{tag}: error E{n} in src/mod{n % 7}.py line {n} " + "alpha beta gamma " * (n // 3)


def _calls(engine: Engine, op: tuple[str, Any], i: int) -> list[tuple[str, tuple, dict]]:
    """The entry calls (name, args, kwargs) one operation makes."""
    kind, n = op
    if kind == "user":
        return [("add_user", (_text(n, "ask"),), {})]
    if kind == "call":
        call = ToolUse(f"c{i}", "look", {})
        return [
            ("add_assistant", ("",), {"tool_calls": [call]}),
            ("add_tool_result", (f"c{i}", _text(n, "out")), {}),
        ]
    if kind == "note":
        return [("append", ("notes", _text(n, "note")), {})]
    if kind == "tool_note":
        args = {"region": "notes", "text": _text(n, "tool note")}
        return [("handle_tool_call", ("context_append", args), {})]
    if kind == "request":
        return [("request", ("openai", "gpt-4o"), {"flush": n})]
    if kind == "flush":
        return [("flush", (), {})]
    if kind == "compact":
        return [("compact", (), {"keep_messages": n})]
    return [("recover_overflow", (overflow_error(20000, 12000),), {})]


def _outcome(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
        return value[1]  # a request: the payload
    return repr(value)


def _run_sync(engine: Engine, ops: list[tuple[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for i, op in enumerate(ops):
        for name, args, kwargs in _calls(engine, op, i):
            try:
                out.append(_outcome(getattr(engine, name)(*args, **kwargs)))
            except Exception as exc:  # the same error must come out of both entries
                out.append(f"{type(exc).__name__}: {exc}")
    return out


async def _run_async(engine: Engine, ops: list[tuple[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for i, op in enumerate(ops):
        for name, args, kwargs in _calls(engine, op, i):
            try:
                out.append(_outcome(await getattr(engine, f"a{name}")(*args, **kwargs)))
            except Exception as exc:
                out.append(f"{type(exc).__name__}: {exc}")
    return out


def _state(engine: Engine) -> list[Any]:
    return [
        (r.name, [(e.id, e.text, e.tokens, e.meta) for e in r.entries])
        for r in engine.window.regions
    ] + [engine.window.pending_compactions(), engine.book, engine.transcript()]


@settings(max_examples=EXAMPLES, deadline=None)
@given(ops=_OPS)
def test_the_sync_and_async_entries_leave_the_same_window_and_events(ops):
    engines = []
    for summarizer in (ExtractiveSummarizer(), AsyncExtractive()):
        engine = Engine.from_blueprint(MIXED, summarizer=summarizer, clock=lambda: 1000.0)
        events: list[Any] = []
        engine.subscribe(events.append)
        engines.append((engine, events))
    (sync_engine, sync_events), (async_engine, async_events) = engines

    sync_out = _run_sync(sync_engine, ops)
    async_out = asyncio.run(_run_async(async_engine, ops))

    assert async_out == sync_out
    assert [e.to_dict() for e in async_events] == [e.to_dict() for e in sync_events]
    assert _state(async_engine) == _state(sync_engine)
