"""A turn that fits the window is never refused (issue 29; docs/runtime.md, "A turn that
fits"): the conversation grows into what the window has free, a newest turn that still does
not fit is trimmed head + tail (oldest result first, originals kept), and only a message that
cannot fit even trimmed is refused -- before any compaction runs, changing nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief import _originals as relief_originals
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.errors import RegionFullError
from regio.policies.eviction import Compact
from regio.policies.relief import MARKER_TOKENS
from regio.regions import CompactHistory, Compacting, Keyed, Pinned, SlidingWindow
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words

WINDOW = 32_000


def _engine(
    summarizer: Any = None, window: int = WINDOW, options: dict[str, Any] | None = None, **conv: Any
) -> Any:
    """A coding-agent-like window: system, notes, a summary history and a conversation of
    half the window (its budget, the floor it is guaranteed); ``options``: engine options."""
    return make_engine(
        [
            Pinned(name="system", budget=2000, volatility="stable"),
            Keyed(name="notes", budget=4000),
            CompactHistory(name="history", source="conversation", budget=3000),
            SlidingWindow(name="conversation", budget="50%", eviction=Compact(), **conv),
        ],
        max_tokens=window,
        summarizer=summarizer or StubSummarizer(size=40),
        **(options or {}),
    )


def _state(engine: Any) -> bytes:
    """Every region's entries, the compaction queue, the books and the transcript length."""
    regions = {r.name: list(r.entries) for r in engine.window.regions}
    return msgspec.json.encode([regions, engine.pending(), engine.book, len(engine.transcript_log)])


def _results_sent(payload: dict[str, Any]) -> dict[str, str]:
    """Call id -> the result text of every ``tool_result`` in an Anthropic payload."""
    out = {}
    for message in payload["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                out[block["tool_use_id"]] = text
    return out


def _parallel_turn(engine: Any, sizes: list[int], *, one_message: bool = True) -> list[str]:
    calls = [ToolUse(f"p{i}", "open", {"path": f"f{i}.py"}) for i in range(len(sizes))]
    engine.add_user("read these files")
    engine.request()  # the calls answer a response to a request (what the model saw)
    engine.add_assistant("reading", calls)
    results = [ToolResult(c.id, words(n, f"{c.id}x")) for c, n in zip(calls, sizes, strict=True)]
    if one_message:
        engine.add_message(Message.tool(results))
    else:  # OpenAI style: one tool message per result
        for r in results:
            engine.add_message(Message.tool([r]))
    return [c.id for c in calls]


@pytest.mark.parametrize("one_message", [True, False])
def test_a_turn_of_parallel_results_larger_than_half_the_window_fits(one_message: bool) -> None:
    engine = _engine()
    conv = engine.window.region("conversation")
    ids = _parallel_turn(engine, [6000, 6000, 6000], one_message=one_message)  # 18k > 16k
    assert conv.used_tokens > WINDOW // 2
    _, payload = engine.request()
    sent = _results_sent(payload)
    assert [len(sent[i].split()) for i in ids] == [6000, 6000, 6000]  # whole, none trimmed
    assert not engine.events.of_kind("relief_applied")


def test_a_turn_that_fits_after_compacting_older_turns_is_admitted_whole() -> None:
    engine = _engine()
    engine.add_user("start")
    for i in range(8):  # 8 x 2,500 = 20k of older turns
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(2500, f"o{i}x"))
        engine.request()
    ids = _parallel_turn(engine, [7000, 7000])  # fits the window only once they are summarized
    _, payload = engine.request()
    sent = _results_sent(payload)
    assert [len(sent[i].split()) for i in ids] == [7000, 7000]
    assert engine.window.region("history").entries  # the older turns were summarized


def test_a_turn_larger_than_the_window_is_trimmed_oldest_result_first_and_restorable() -> None:
    engine = _engine()
    ids = _parallel_turn(engine, [20_000, 20_000])  # 40k > the whole 32k window
    conv = engine.window.region("conversation")
    assert engine.window.used_tokens <= WINDOW
    _, payload = engine.request()
    sent = _results_sent(payload)
    first, second = (sent[i] for i in ids)
    assert "chars cut" in first or "cut" in first  # the oldest result is trimmed head + tail
    assert first.startswith(f"{ids[0]}x0 ") and first.rstrip().endswith(f"{ids[0]}x19999")
    assert len(first.split()) < 20_000 and len(second.split()) <= 20_000
    trims = [e for e in engine.events.of_kind("relief_applied") if e.stage == "turn_trim"]
    assert trims and trims[0].call_ids[0] == ids[0]
    restored, ok = relief_originals.restore(engine.session, ids[0])
    assert ok and restored == words(20_000, f"{ids[0]}x")  # the original, byte for byte
    assert conv.used_tokens <= conv.budget


def test_a_single_result_larger_than_the_window_keeps_at_least_its_marker() -> None:
    engine = _engine()
    engine.add_user("dump it")
    engine.add_assistant("", [ToolUse("big", "cat", {})])
    entry = engine.add_tool_result("big", words(100_000, "b"))
    assert entry.tokens <= WINDOW and entry.tokens >= MARKER_TOKENS
    text = entry.blocks[0].content
    assert text.startswith("b0 b1") and text.rstrip().endswith("b99999")


def test_a_message_that_cannot_fit_is_refused_with_nothing_changed() -> None:
    summarizer = StubSummarizer(size=40)
    engine = _engine(summarizer)
    engine.add_user("start")
    for i in range(12):  # the conversation near its trigger: a compaction would run
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(2000, f"o{i}x"))
        engine.request()
    calls = len(summarizer.inputs)
    before = _state(engine)
    with pytest.raises(RegionFullError) as info:
        engine.add_user(words(40_000, "paste"))  # user text: nothing of it may be trimmed
    assert info.value.region == "conversation"
    assert _state(engine) == before  # nothing changed ...
    assert len(summarizer.inputs) == calls  # ... and no summarizer call was made
    refused = engine.events.of_kind("refused")
    assert refused and refused[-1].reason == "too_large"


def test_a_tool_result_larger_than_the_whole_region_is_admitted_trimmed_not_refused() -> None:
    # issue 31: it ran a compaction (12 of 14 entries summarized) and was then refused
    summarizer = StubSummarizer(size=40)
    engine = _engine(summarizer, elastic=False)
    engine.add_user("start")
    for i in range(6):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(1500, f"o{i}x"))
        engine.request()
    engine.add_assistant("", [ToolUse("big", "cat", {})])
    entry = engine.add_tool_result("big", words(50_000, "b"))
    conv = engine.window.region("conversation")
    assert conv.used_tokens <= conv.budget == WINDOW // 2
    assert entry.blocks[0].content.startswith("b0 ")
    assert relief_originals.restore(engine.session, "big") == (words(50_000, "b"), True)


def test_a_write_larger_than_its_compacting_region_runs_no_compaction() -> None:
    summarizer = StubSummarizer(size=5)
    engine = make_engine(
        [
            Compacting(name="notes", budget=500, compact_at=0.8),
            CompactHistory(name="digest", source="notes", budget=200),
            SlidingWindow(name="conversation", budget=2000),
        ],
        max_tokens=10_000,
        summarizer=summarizer,
    )
    for i in range(3):
        engine.write("notes", words(120, f"n{i}x"))
    before = _state(engine)
    refusal = engine.write("notes", words(600, "huge"))
    assert refusal.reason == "too_large"
    assert _state(engine) == before and not summarizer.inputs


def test_a_region_s_guaranteed_budget_is_given_back_by_compacting_the_conversation() -> None:
    summarizer = StubSummarizer(size=40)
    # the window-fill trigger (the cost controller would compact this conversation at ~20k)
    engine = _engine(summarizer, options={"cost_control": False})
    window = engine.window
    engine.add_user("start")
    for i in range(100):  # past its 16k budget, into the room, short of its 90% trigger
        if window.used_tokens >= 27_700:
            break
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(600, f"o{i}x"))
        engine.request()
    assert window.used_tokens >= 27_700
    assert window.region("conversation").used_tokens > WINDOW // 2
    free = window.max_tokens - window.reserved_tokens - window.used_tokens
    assert free < 3900
    calls = len(summarizer.inputs)
    result = engine.write("notes", words(3900, "fact"), key="f")  # within its 4,000 tokens
    assert not hasattr(result, "reason"), result
    assert len(summarizer.inputs) == calls + 1  # the conversation was summarized for the room
    assert window.used_tokens <= window.max_tokens - window.reserved_tokens


def test_a_conversation_that_is_not_elastic_keeps_its_budget_as_a_cap() -> None:
    engine = _engine(elastic=False)
    conv = engine.window.region("conversation")
    assert conv.budget == conv.floor_tokens == WINDOW // 2
    engine.add_user("start")
    for i in range(12):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(2000, f"o{i}x"))
        engine.request()
        assert conv.used_tokens <= WINDOW // 2


EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "20"))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    turns=st.lists(
        st.tuples(
            st.lists(st.integers(min_value=50, max_value=24_000), min_size=1, max_size=3),
            st.booleans(),  # the results in one message (else one message each)
        ),
        min_size=1,
        max_size=8,
    ),
    elastic=st.booleans(),
)
def test_no_turn_of_tool_results_is_refused_and_every_request_fits_the_window(
    turns: list[tuple[list[int], bool]], elastic: bool
) -> None:
    engine = _engine(elastic=elastic)
    window = engine.window
    engine.add_user("start")
    engine.request()
    for n, (sizes, together) in enumerate(turns):
        calls = [ToolUse(f"c{n}_{k}", "read", {"k": k}) for k in range(len(sizes))]
        engine.add_assistant(f"step {n}", calls)
        results = [
            ToolResult(c.id, words(s, f"{c.id}r")) for c, s in zip(calls, sizes, strict=True)
        ]
        for batch in [results] if together else [[r] for r in results]:
            engine.add_message(Message.tool(batch))  # never raises: results are trimmed
            assert window.used_tokens <= window.max_tokens
        _, payload = engine.request()
        sent = _results_sent(payload)
        assert {c.id for c in calls} <= sent.keys()  # the whole turn reaches the model


def test_a_loaded_engine_gives_an_elastic_conversation_the_room_it_had(tmp_path: Path) -> None:
    # the layout's overhead a request carried is saved: after a load the conversation's room
    # (and so its marks and what a status line shows) is the saved session's
    engine = _engine()
    engine.add_user("start")
    for i in range(40):  # until a summary is in the history: its heading is layout overhead
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(2000, f"o{i}x"))
        engine.request()
        if engine.window.region("history").entries:
            break
    assert engine.window.region("history").entries and engine.budget.layout_tokens > 0
    loaded = Engine.load(engine.save(tmp_path / "s.json"), token_counter=StubCounter())
    conv, again = engine.window.region("conversation"), loaded.window.region("conversation")
    assert loaded.window.reserved_tokens == engine.window.reserved_tokens
    assert (again.budget, again.token_trigger) == (conv.budget, conv.token_trigger)
    assert again.replies == conv.replies > 0  # the session's age, which the trigger weighs
