"""A conversation write that is refused changes nothing: the relief rules applied on admission
(``route`` into a region, ``max_result_tokens``, and the dedupe that used to run there) take
effect only once the conversation has admitted the message."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief import _originals as relief_originals
from regio.content import Message, ToolResult, ToolUse
from regio.errors import RegionFullError
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.regions import Keyed, Pinned, SlidingWindow, Temporary
from runtime_stubs import make_engine, words

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

POLICY = ReliefPolicy(
    tools={
        "grep": ToolRelief(route="hits"),
        "open": ToolRelief(route="files", route_key="file:{path}"),
        "cat": ToolRelief(dedupe=True, max_result_tokens=40),
    }
)


def _engine() -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            Temporary(name="hits", budget=3000, volatility="rewritten"),
            Keyed(name="files", budget=3000, volatility="rewritten"),
            SlidingWindow(name="conversation", budget=600, admission="reject", elastic=False),
        ],
        max_tokens=8000,
        relief=POLICY,
    )


def _state(engine: Any) -> bytes:
    """Every region's entries and the relief book, byte for byte."""
    regions = {r.name: list(r.entries) for r in engine.window.regions}
    return msgspec.json.encode([regions, engine.book.relief, len(engine.transcript_log)])


def _refused(engine: Any, message: Message) -> None:
    before = _state(engine)
    with pytest.raises(RegionFullError):
        engine.add_message(message)
    assert _state(engine) == before


def test_a_refused_write_leaves_the_routed_region_untouched() -> None:
    engine = _engine()
    engine.add_user("find it")
    engine.add_assistant("", [ToolUse("g1", "grep", {"p": "x"}), ToolUse("b1", "bash", {})])
    # the routed result alone would fit; the bash result beside it does not
    message = Message.tool([ToolResult("g1", words(300, "hit")), ToolResult("b1", words(900))])
    _refused(engine, message)
    assert list(engine.window.region("hits").entries) == []


def test_a_refused_write_leaves_an_earlier_duplicate_result_untouched() -> None:
    engine = _engine()
    engine.add_user("read it")
    engine.add_assistant("", [ToolUse("c1", "cat", {"path": "a.py"})])
    engine.add_tool_result("c1", words(30, "old"))
    engine.add_assistant("again", [ToolUse("c2", "cat", {"path": "a.py"}), ToolUse("b", "x", {})])
    message = Message.tool([ToolResult("c2", words(30, "new")), ToolResult("b", words(900))])
    _refused(engine, message)
    assert "c1" not in engine.book.relief.originals


_WRITE = st.tuples(
    st.sampled_from(["grep", "open", "cat", "bash"]),
    st.integers(min_value=0, max_value=2),  # argument (a repeated one is a duplicate)
    st.integers(min_value=1, max_value=500),  # result size in words
    st.integers(min_value=0, max_value=900),  # a second, plain result beside it
)


@FAST
@given(st.lists(_WRITE, min_size=1, max_size=12))
def test_a_refused_write_leaves_every_region_byte_identical(writes: list[Any]) -> None:
    engine = _engine()
    engine.add_user("work")
    for i, (tool, arg, size, extra) in enumerate(writes):
        call = ToolUse(f"c{i}", tool, {"path": f"f{arg}.py"})
        calls = [call, ToolUse(f"x{i}", "bash", {})] if extra else [call]
        results = [ToolResult(call.id, words(size, f"r{i}-"))]
        if extra:
            results.append(ToolResult(f"x{i}", words(extra, f"x{i}-")))
        # the assistant turn is a write too: when the region is too full even for the calls,
        # that refusal must leave everything as it was
        for message in (Message.assistant("", calls), Message.tool(results)):
            before = _state(engine)
            try:
                engine.add_message(message)
            except RegionFullError:
                assert _state(engine) == before
                return


def test_a_route_refused_after_the_message_was_admitted_puts_the_full_result_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import regio.compaction.relief._admit as admission
    from regio.regions import Refusal

    engine = _engine()
    engine.add_user("find it")
    engine.add_assistant("", [ToolUse("g1", "grep", {"p": "x"})])
    real = admission.write_steps

    def refusing(c: Any, region: str, content: Any, **kw: Any) -> Any:
        if region == "hits":  # the window changed since the trial: the region says no now
            return Refusal(region, 0, 0, 0, 0, (), "region_full", "full")
        return (yield from real(c, region, content, **kw))

    monkeypatch.setattr(admission, "write_steps", refusing)
    bulky = words(300, "hit")
    engine.add_tool_result("g1", bulky)
    kept = engine.window.region("conversation").entries[-1].blocks[0]
    assert isinstance(kept, ToolResult) and kept.content == bulky  # nothing lost
    assert list(engine.window.region("hits").entries) == []
    assert "route" not in engine.book.relief.stages
    # the transcript keeps the message as the conversation holds it: the full result
    recorded = engine.transcript_log.tool_result("g1")
    assert recorded is not None and recorded.content == bulky
    assert relief_originals.original_result(engine.session, "g1").content == bulky
    assert relief_originals.with_originals(
        engine.session, [engine.transcript_log.message(_last_id(engine))]
    )[0].blocks[0] == ToolResult("g1", bulky)


def _last_id(engine: Any) -> str:
    return str(engine.window.region("conversation").entries[-1].id)


def _refusing_routes(refused: set[str]) -> Any:
    """A ``write_steps`` whose routed writes of the results in ``refused`` are refused, as when
    the window changed between the trial and the write."""
    import regio.compaction.relief._admit as admission
    from regio.regions import Refusal

    real = admission.write_steps

    def write_steps(c: Any, region: str, content: Any, **kw: Any) -> Any:
        if region in ("hits", "files") and any(r in str(content) for r in refused):
            return Refusal(region, 0, 0, 0, 0, (), "region_full", "full")
        return (yield from real(c, region, content, **kw))

    return write_steps


def test_a_refused_route_that_no_longer_fits_becomes_a_restorable_placeholder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import regio.compaction.relief._admit as admission

    engine = _engine()
    engine.add_user("find it")
    engine.add_assistant("", [ToolUse("g1", "grep", {"p": "x"})])
    monkeypatch.setattr(admission, "write_steps", _refusing_routes({"big"}))
    bulky = words(800, "big")  # the pointer fits the conversation's 600 tokens, this does not
    engine.add_tool_result("g1", bulky)
    conv = engine.window.region("conversation")
    assert conv.used_tokens <= conv.budget
    assert engine.window.used_tokens <= engine.window.max_tokens
    assert relief_originals.restore(engine.session, "g1") == (bulky, True)
    assert relief_originals.original_result(engine.session, "g1").content == bulky


_ROUTED = st.tuples(
    st.sampled_from(["grep", "open"]),
    st.integers(min_value=1, max_value=400),  # result size in words
    st.booleans(),  # the route is refused at commit
)


@FAST
@given(st.lists(_ROUTED, min_size=1, max_size=8))
def test_whatever_routes_are_refused_restore_returns_the_original_result(
    calls: list[Any],
) -> None:
    import regio.compaction.relief._admit as admission

    engine = _engine()
    engine.add_user("work")
    refused = {f"r{i}-" for i, (_, _, no) in enumerate(calls) if no}
    originals: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(admission, "write_steps", _refusing_routes(refused))
        for i, (tool, size, _) in enumerate(calls):
            try:  # a conversation too full even for the call refuses it: the session ends here
                engine.add_assistant("", [ToolUse(f"c{i}", tool, {"path": f"f{i}.py"})])
            except RegionFullError:
                break
            try:
                engine.add_tool_result(f"c{i}", words(size, f"r{i}-"))
            except RegionFullError:
                continue
            originals[f"c{i}"] = words(size, f"r{i}-")
            conv = engine.window.region("conversation")
            assert conv.used_tokens <= conv.budget
    for call_id, text in originals.items():
        kept = relief_originals.original_result(engine.session, call_id)
        assert kept is not None and kept.content == text
        restored, ok = relief_originals.restore(engine.session, call_id)
        assert restored == text or not ok


@FAST
@given(
    st.lists(st.tuples(st.sampled_from(["hits", "files"]), st.integers(1, 900)), max_size=8),
    st.sampled_from(["hits", "files"]),
    st.integers(1, 3500),
)
def test_the_route_dry_run_agrees_with_a_write_and_changes_nothing(
    fills: list[Any], region: str, size: int
) -> None:
    from regio.content import Entry, Text
    from regio.regions import WritePlan, WriteResult

    engine = _engine()
    window = engine.window
    for n, (name, words_in) in enumerate(fills):
        window.write(name, words(words_in, f"f{n}-"), key=f"k{n}" if name == "files" else None)
    key = "k-new" if region == "files" else None
    text = words(size, "new-")
    probe = Entry(id=f"e{window.next_entry}", blocks=(Text(text),), key=key, turn=window.turn)
    probe = msgspec.structs.replace(probe, tokens=int(window.counter.count_entry(probe)))
    before = msgspec.json.encode(window.snapshot_state())
    planned = isinstance(window.plan_write(region, probe), WritePlan)
    assert msgspec.json.encode(window.snapshot_state()) == before
    trial = type(window).from_state(window.snapshot_state(), counter=window.counter)
    assert planned == isinstance(trial.write(region, text, key=key), WriteResult)
