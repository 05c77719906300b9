"""Field cases of manual compaction with keep limits: FC-03 (keep-last-N splits a parallel
call) and FC-09 (a) (a compaction cut asked inside a unit), over hand-written and generated
histories.

Documented choice (``Engine.compact``): a keep limit that falls inside a unit *shrinks* the
kept tail to the unit boundary, so the whole unit is summarized; the newest user message and
open groups are always kept.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout import check_anthropic, check_openai_chat
from regio.regions import CompactHistory, Compacting, SlidingWindow
from regions_support import StubCounter, check_units, declared_size, generated_history
from runtime_stubs import StubSummarizer, make_engine


def ids(entries: Sequence[Entry]) -> list[str]:
    return [e.id for e in entries]


def _engine(stub: StubSummarizer, where: str) -> Engine:
    regions = [
        CompactHistory(name="hist", budget=5_000, source=where),
        SlidingWindow(name="conversation", budget=50_000),
    ]
    if where == "work":
        regions.insert(0, Compacting(name="work", budget=50_000, compact_at=None))
    return make_engine(regions, summarizer=stub, counter=StubCounter(), max_tokens=200_000)


def _put(engine: Engine, where: str, message: Message, tokens: int) -> Entry:
    if where == "conversation":
        return engine.add_message(message, tokens=tokens)
    entry = engine.window.make_entry(message.blocks, role=message.role, tokens=tokens)
    assert not hasattr(engine.write(where, entry), "reason")
    return entry


def _fc03(where: str, width: int, *, shuffle: bool = False):
    """``u1[10], a1{c1..cW}[50], t(c1)[100] .. t(cW)[100], a2[20], u2[10]``; returns the engine,
    the stub and the entries by name."""
    stub = StubSummarizer(5)
    engine = _engine(stub, where)
    if where == "work":
        engine.add_user("go", tokens=1)
    calls = [f"c{k}" for k in range(1, width + 1)]
    order = list(reversed(calls)) if shuffle else calls
    items = {"u1": _put(engine, where, Message.user("u1"), 10)}
    items["a1"] = _put(
        engine, where, Message.assistant("", [ToolUse(c, "run", {"n": c}) for c in calls]), 50
    )
    for c in order:
        items[f"t{c}"] = _put(engine, where, Message.tool([ToolResult(c, f"out {c}")]), 100)
    items["a2"] = _put(engine, where, Message.assistant("a2"), 20)
    items["u2"] = _put(engine, where, Message.user("u2"), 10)
    return engine, stub, items


def _group_ids(items: dict[str, Entry]) -> set[str]:
    return {e.id for name, e in items.items() if name == "a1" or name.startswith("t")}


def _check_next_request(engine: Engine, where: str, kept_group: bool, width: int) -> None:
    _, an = engine.request("anthropic", "claude-sonnet-4-5")
    _, oa = engine.request("openai", "gpt-4o")
    assert check_anthropic(an) == [] and check_openai_chat(oa) == []
    if kept_group and where == "conversation":
        msgs = an["messages"]
        at = next(
            i for i, m in enumerate(msgs) if any(b["type"] == "tool_use" for b in m["content"])
        )
        results = msgs[at + 1]["content"]
        assert [b["type"] for b in results] == ["tool_result"] * width
        assert [b["tool_use_id"] for b in results] == [f"c{k}" for k in range(1, width + 1)]


def _check_kept_and_input(engine: Engine, where: str, stub, items, kept_group: bool) -> None:
    kept = engine.window.region(where).entries
    tail = [items["a2"].id, items["u2"].id]
    group = [items["a1"].id, *[e.id for n, e in items.items() if n.startswith("t")]]
    assert ids(kept) == ([*group, *tail] if kept_group else tail)
    summarized = {e.id for inp in stub.inputs for e in inp}
    group_in = summarized & _group_ids(items)
    assert group_in in (set(), _group_ids(items))  # all 11 (W + 1) group items or none
    assert bool(group_in) is (not kept_group)
    check_units(kept)


# --- FC-03 ------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["work", "conversation"])
def test_fc_03_keep_last_six_messages_shrinks_the_tail_to_the_unit_boundary(where: str) -> None:
    engine, stub, items = _fc03(where, 10)
    assert len(engine.window.region(where).entries) == 14
    done = engine.compact(keep_messages=6)
    assert done is not None
    _check_kept_and_input(engine, where, stub, items, kept_group=False)
    # summarizer input: u1 and the whole group, in order
    assert ids(stub.inputs[0]) == [items["u1"].id, items["a1"].id] + [
        items[f"tc{k}"].id for k in range(1, 11)
    ]
    _check_next_request(engine, where, kept_group=False, width=10)


def test_fc_03_the_choice_is_deterministic() -> None:
    runs = []
    for _ in range(2):
        engine, stub, _items = _fc03("work", 10)
        engine.compact(keep_messages=6)
        runs.append(([e.text for e in engine.window.region("work").entries], len(stub.inputs[0])))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("where", ["work", "conversation"])
@pytest.mark.parametrize("width", range(2, 11))
@pytest.mark.parametrize("shuffle", [False, True])
def test_fc_03_every_group_width_and_result_order_keeps_the_group_whole(
    where: str, width: int, shuffle: bool
) -> None:
    # every message-count limit that falls inside the group shrinks to [a2, u2]
    for keep in range(3, width + 3):
        engine, stub, items = _fc03(where, width, shuffle=shuffle)
        engine.compact(keep_messages=keep)
        _check_kept_and_input(engine, where, stub, items, kept_group=False)
    # a limit that covers the whole group keeps it whole
    engine, stub, items = _fc03(where, width, shuffle=shuffle)
    engine.compact(keep_messages=width + 3)
    _check_kept_and_input(engine, where, stub, items, kept_group=True)
    _check_next_request(engine, where, kept_group=True, width=width)


@pytest.mark.parametrize("where", ["work", "conversation"])
@pytest.mark.parametrize("width", [2, 5, 10])
def test_fc_03_keep_limits_in_tokens_and_as_a_fraction_respect_the_group(
    where: str, width: int
) -> None:
    group_tokens = 50 + 100 * width
    whole = 10 + group_tokens + 30
    for keep in (30, 30 + 50, 30 + 50 + 100 * (width // 2), 30 + group_tokens - 1):
        engine, stub, items = _fc03(where, width)
        engine.compact(keep_tokens=keep)
        _check_kept_and_input(engine, where, stub, items, kept_group=False)
        engine, stub, items = _fc03(where, width)
        engine.compact(keep_fraction=keep / whole)
        _check_kept_and_input(engine, where, stub, items, kept_group=False)
    engine, stub, items = _fc03(where, width)
    engine.compact(keep_fraction=(30 + group_tokens) / whole + 1e-9)
    _check_kept_and_input(engine, where, stub, items, kept_group=True)
    _check_next_request(engine, where, kept_group=True, width=width)


def test_fc_03_bad_keep_limits_are_refused_with_the_allowed_range() -> None:
    engine, _stub, _items = _fc03("work", 2)
    with pytest.raises(ValueError, match=r"keep_fraction.*\[0, 1\]"):
        engine.compact(keep_fraction=1.5)
    with pytest.raises(ValueError, match="keep_messages must be >= 0"):
        engine.compact(keep_messages=-1)


# --- FC-09 (a) --------------------------------------------------------------------------
def _fc09(stub: StubSummarizer) -> tuple[Engine, list[Entry]]:
    engine = _engine(stub, "conversation")
    entries = [
        engine.add_message(Message.user("u1"), tokens=10),
        engine.add_message(Message.assistant("", [ToolUse("c1", "run", {})]), tokens=10),
        engine.add_message(Message.tool([ToolResult("c1", "out")]), tokens=10),
        engine.add_message(Message.assistant("a2"), tokens=10),
        engine.add_message(Message.user("u2"), tokens=10),
    ]
    return engine, entries


def test_fc_09a_a_cut_asked_right_after_the_call_moves_to_after_its_result() -> None:
    outcomes = []
    for _ in range(2):
        stub = StubSummarizer(2)
        engine, (u1, a1, t1, a2, u2) = _fc09(stub)
        # "cut right after a1" = keep the last 3 messages [t(c1), a2, u2]
        engine.compact(keep_messages=3)
        assert ids(stub.inputs[0]) == [u1.id, a1.id, t1.id]  # never a1 without t(c1)
        assert ids(engine.window.region("conversation").entries) == [a2.id, u2.id]
        _, an = engine.request("anthropic", "m")
        _, oa = engine.request("openai", "m")
        assert check_anthropic(an) == [] and check_openai_chat(oa) == []
        summary = engine.window.region("hist").entries[0].text
        # the summary opens the messages, before the history (never in the system text)
        assert summary in an["messages"][0]["content"][0]["text"]
        assert all(summary not in b["text"] for b in an.get("system", []))
        outcomes.append((an, oa))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), turns=st.integers(1, 9), data=st.data())
def test_fc_09_every_cut_position_over_generated_histories_keeps_whole_units(
    seed: int, turns: int, data: st.DataObject
) -> None:
    history = generated_history(random.Random(seed), turns)
    cut = data.draw(st.integers(0, len(history)), label="cut")
    stub = StubSummarizer(1)
    engine = _engine(stub, "conversation")
    # sizes x10 so a one-token stub summary is always smaller than what it replaces
    added = [engine.add_message(m, tokens=10 * declared_size(m.blocks)) for m in history]
    engine.compact(keep_messages=len(history) - cut)
    kept = engine.window.region("conversation").entries
    # the kept items are a suffix of whole units (byte-identical), plus the newest user message,
    # which is protected and always kept
    newest = next(e.id for e in reversed(added) if e.role == "user")
    rest = [e for e in kept if e.id != newest]
    assert rest == [e for e in added if e.id != newest][len(added) - 1 - len(rest) :]
    assert newest in ids(kept)
    if kept:
        assert kept[0].role != "tool" and not any(isinstance(b, ToolResult) for b in kept[0].blocks)
    check_units(kept)
    assert len(rest) <= len(history) - cut  # a limit inside a unit shrinks the tail
    summarized = [e for inp in stub.inputs for e in inp if not e.meta.get("summary")]
    check_units(summarized)  # whole units only: no result without its call
    called = {b.id for e in summarized for b in e.blocks if isinstance(b, ToolUse)}
    answered = {b.tool_use_id for e in summarized for b in e.blocks if isinstance(b, ToolResult)}
    assert called == answered  # and no call without its result
    _, an = engine.request("anthropic", "m")
    _, oa = engine.request("openai", "m")
    assert check_anthropic(an) == [] and check_openai_chat(oa) == []
