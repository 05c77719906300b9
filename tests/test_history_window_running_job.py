"""History windows count a running job's call and report, and never cut them.

Under ``max_items`` / ``max_tool_calls`` (and ``max_items`` with ``count_units``) the open
group of a running background job (a call whose latest result is a progress report,
``ToolResult(final=False)``) is kept wherever the window cuts. What the window keeps is what
the caps count: the job's call and report take their place in the item and tool-call counts,
so the window keeps ``max_items`` items in all (before: the job's entries came on top).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, Text, ToolResult, ToolUse
from regio.policies import HistoryCaps, analyze
from regio.regions import SlidingWindow, Window
from regio.turngroups import group_entries
from regions_support import StubCounter


def _session(**caps: Any) -> Any:
    w = Window(
        regions=[SlidingWindow(name="conv", budget=4000, **caps)],
        max_tokens=5000,
        counter=StubCounter(),
    )
    w.add_message(Message.user("start [2]"))
    w.add_message(Message.assistant("go [2]", [ToolUse("bg", "build")]))
    w.add_message(Message.tool([ToolResult("bg", "running [2]", final=False)]))
    for i in range(8):
        w.add_message(Message.user(f"q{i} [2]"))
        w.add_message(Message.assistant(f"a{i} [2]", [ToolUse(f"c{i}", "ls")]))
        w.add_message(Message.tool([ToolResult(f"c{i}", f"r{i} [2]")]))
    return w.region("conv")


def _calls_before_current_turn(conv: Any) -> int:
    info = conv.analysis()
    return sum(
        1 for e in conv.entries[: info.turn_start] for b in e.blocks if isinstance(b, ToolUse)
    )


@pytest.mark.parametrize(
    ("caps", "kept"),
    [
        ({"max_items": 6}, lambda conv: len(conv.entries) <= 6),
        ({"max_items": 3, "count_units": True}, lambda conv: conv.item_count() <= 3),
        ({"max_tool_calls": 2}, lambda conv: _calls_before_current_turn(conv) <= 2),
    ],
    ids=["max_items", "max_items-units", "max_tool_calls"],
)
def test_a_running_jobs_call_and_report_count_against_the_history_window(
    caps: dict[str, Any], kept: Any
) -> None:
    conv = _session(**caps)
    ids = [e.id for e in conv.entries]
    assert ids[:2] == ["e2", "e3"]  # the job's call and report are never the ones cut
    assert kept(conv)  # before: 8 entries for max_items 6, 4 units for 3, 3 calls for 2
    assert ids[-3:] == ["e25", "e26", "e27"]  # the current turn is whole


IDS = ["c1", "c2", "c3", "bg"]
blocks = st.one_of(
    st.builds(lambda t: Text(t), st.sampled_from(["a", "b"])),
    st.builds(lambda c: ToolUse(c, "t"), st.sampled_from(IDS)),
    st.builds(lambda c, f: ToolResult(c, "r", final=f), st.sampled_from(IDS), st.booleans()),
)
messages = st.tuples(
    st.sampled_from(["user", "assistant", "tool"]), st.lists(blocks, min_size=1, max_size=3)
)
caps_st = st.one_of(st.none(), st.integers(0, 8))


def _running(entries: list[Entry]) -> set[int]:
    """Entries of open groups holding a progress report (a running job), by definition."""
    out: set[int] = set()
    for g in group_entries(entries).groups:
        if g.open and any(
            isinstance(b, ToolResult) and not b.is_final
            for m in g.members[1:]
            for b in entries[m].blocks
        ):
            out.update(g.members)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(messages, max_size=16), caps_st, caps_st)
def test_a_history_cut_meets_its_caps_counting_what_it_keeps(
    history: list[tuple[str, list[Any]]], max_entries: int | None, max_tool_calls: int | None
) -> None:
    entries = [
        Entry(id=f"e{i}", blocks=tuple(bs), role=r, tokens=1)  # type: ignore[arg-type]
        for i, (r, bs) in enumerate(history)
    ]
    info = analyze(entries)
    running = _running(entries)

    def kept(k: int) -> list[int]:
        return [i for i in range(len(entries)) if i >= k or i in running]

    def meets(k: int) -> bool:
        ks = kept(k)
        calls = sum(
            1
            for i in ks
            if i < info.turn_start
            for b in entries[i].blocks
            if isinstance(b, ToolUse)
        )
        return (max_entries is None or len(ks) <= max_entries) and (
            max_tool_calls is None or calls <= max_tool_calls
        )

    k, met = info.history_cut(HistoryCaps(max_entries, None, None, max_tool_calls))
    allowed = [c for c in range(info.limit + 1) if info.safe[c]]
    assert met == any(meets(c) for c in allowed)
    if met:
        assert meets(k)
        assert k == min(c for c in allowed if meets(c))  # as much as possible is kept


def test_a_running_jobs_call_counts_even_when_the_cut_reaches_the_current_turn() -> None:
    def e(i: int, role: str, *bs: Any) -> Entry:
        return Entry(id=f"e{i}", blocks=tuple(bs), role=role, tokens=1)  # type: ignore[arg-type]

    entries = [
        e(0, "user", Text("go")),
        e(1, "assistant", ToolUse("bg", "build")),
        e(2, "tool", ToolResult("bg", "running", final=False)),
        e(3, "user", Text("q1")),
        e(4, "assistant", ToolUse("c1", "ls")),
        e(5, "tool", ToolResult("c1", "ok")),
        e(6, "user", Text("q2")),
    ]
    info = analyze(entries)
    cut, met = info.history_cut(HistoryCaps(max_tool_calls=0))
    assert info.calls_kept(cut) == 1  # the job's call is kept wherever the window cuts
    assert not met  # so a cap of 0 calls cannot be met while the job runs
    assert info.history_cut(HistoryCaps(max_tool_calls=1))[1]
