"""Settling queued compactions costs nothing for a write that cannot change them.

``settle_marks`` re-plans a queued ``compact`` item when its units changed after it was
queued. Only a tool result can merge or reopen units (a result answering a call joins groups,
a report extends an open one); an appended entry without a tool result (a user message, an
assistant message with or without calls) leaves every whole, unprotected unit whole and
unprotected. The property below checks that reasoning against the full unit analysis; the
region then skips the analysis for such writes.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, Text, ToolResult, ToolUse
from regio.policies import analyze
from regio.regions import CompactHistory, SlidingWindow, Window
from regio.regions.settle import settle_marks
from regions_support import StubCounter

IDS = ["c1", "c2", "c3", "c4"]

blocks = st.one_of(
    st.builds(lambda t: Text(t), st.sampled_from(["a", "b"])),
    st.builds(lambda c: ToolUse(c, "t"), st.sampled_from(IDS)),
    st.builds(lambda c, f: ToolResult(c, "r", final=f), st.sampled_from(IDS), st.booleans()),
)
messages = st.tuples(
    st.sampled_from(["user", "assistant", "tool"]), st.lists(blocks, min_size=1, max_size=3)
)


def _entry(i: int, role: str, bs: list[object]) -> Entry:
    return Entry(id=f"e{i}", blocks=tuple(bs), role=role, tokens=1)  # type: ignore[arg-type]


def _whole_unprotected(entries: list[Entry], marked: set[int]) -> bool:
    info = analyze(entries)
    return all(
        not info.protected[info.unit_of[i]] and set(info.units[info.unit_of[i]]) <= marked
        for i in marked
    )


@settings(max_examples=400, deadline=None)
@given(st.lists(messages, max_size=14), st.integers(0, 6), messages)
def test_an_entry_without_a_tool_result_keeps_whole_marks_whole(
    history: list[tuple[str, list[object]]], k: int, added: tuple[str, list[object]]
) -> None:
    entries = [_entry(i, r, bs) for i, (r, bs) in enumerate(history)]
    info = analyze(entries)
    marked = set(info.removal(min(k, info.removable_count)))  # what a trigger queues
    assert _whole_unprotected(entries, marked)
    role, bs = added
    after = [*entries, _entry(len(entries), role, bs)]
    if not any(isinstance(b, ToolResult) for b in bs):
        assert _whole_unprotected(after, marked)


def _window() -> Window:
    return Window(
        regions=[
            SlidingWindow(
                name="conv", budget=400, max_items=2, eviction={"compact": {"compact_count": 2}}
            ),
            CompactHistory(name="hist", budget=200, source="conv"),
        ],
        max_tokens=700,
        counter=StubCounter(),
    )


def test_a_queued_compaction_is_settled_again_after_a_late_result() -> None:
    w = _window()
    w.add_message(Message.assistant("a1 [3]", [ToolUse("c1", "tool")]))
    w.add_message(Message.user("u2 [3]"))
    w.add_message(Message.assistant("a3 [3]", [ToolUse("c3", "tool")]))
    w.add_message(Message.tool([ToolResult("c3", "r4 [3]")]))
    w.add_message(Message.user("u5 [3]"))
    (before,) = w.pending_compactions()
    assert before.entry_ids == ("e2", "e3", "e4")
    w.add_message(Message.assistant("a6 [3]", [ToolUse("c6", "tool")]))
    assert w.pending_compactions() == [before]  # nothing could change it
    w.add_message(Message.tool([ToolResult("c1", "r7 [3]")]))
    (after,) = w.pending_compactions()  # the late result answered c1: {a1, a3, r4, ...} merged
    assert after.entry_ids == ("e2",)


def test_a_write_without_a_tool_result_runs_no_unit_analysis_to_settle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = _window()
    w.add_message(Message.assistant("a1 [3]", [ToolUse("c1", "tool")]))
    for i in range(2, 8):
        w.add_message(Message.user(f"u{i} [3]"))
    assert w.pending_compactions()
    conv = w.region("conv")
    settle_marks(conv)
    runs = [0]
    real = SlidingWindow.analysis

    def counting(self: SlidingWindow) -> Any:
        runs[0] += 1
        return real(self)

    monkeypatch.setattr(SlidingWindow, "analysis", counting)
    conv.entries.append(_entry(99, "user", [Text("plain")]))
    settle_marks(conv)
    assert runs[0] == 0  # before: one full analysis (21.6 ms at 2,000 entries)
    conv.entries.append(_entry(100, "tool", [ToolResult("c1", "late")]))
    settle_marks(conv)
    assert runs[0] == 1  # a tool result may change the marks: analysed
