"""The window's index of tool calls is bounded by the window: a call is known while an entry
of its group is in some region, and forgotten once those entries leave (evicted, compacted,
released), however many calls the session has made."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.regions import SlidingWindow, Window
from regions_support import StubCounter


def _window(max_items: int) -> Window:
    conv = SlidingWindow(name="conv", budget=10_000, max_items=max_items, eviction="per_item")
    return Window(regions=[conv], max_tokens=20_000, counter=StubCounter())


def _call(w: Window, call: str, *, answer: bool) -> None:
    w.add_message(Message.user("go"))
    w.add_message(Message.assistant("", (ToolUse(call, "read", {}),)))
    if answer:
        w.add_message(Message.tool((ToolResult(call, "out"),)))


def _live_groups(w: Window) -> set[str]:
    return {e.group for r in w.regions for e in r.entries if e.group}


@settings(max_examples=40, deadline=None)
@given(
    max_items=st.integers(3, 12),
    answers=st.lists(st.booleans(), min_size=1, max_size=120),
)
def test_call_index_holds_only_calls_still_in_the_window(max_items, answers):
    w = _window(max_items)
    for i, answer in enumerate(answers):
        _call(w, f"c{i}", answer=answer)
        live = _live_groups(w)
        for j in range(i + 1):
            group = w.call_group(f"c{j}")
            assert (group is not None) == (f"g:c{j}" in live)
        # the saved state carries only live calls; the index between prunes stays bounded
        assert set(w.snapshot_state().call_groups.values()) <= live
        assert len(w.call_groups) <= 2 * len(live) + 64 + 1


def test_result_after_its_call_was_evicted_opens_its_own_group():
    w = _window(3)
    _call(w, "old", answer=True)
    for i in range(5):
        _call(w, f"c{i}", answer=True)
    assert w.call_group("old") is None
    w.add_message(Message.tool((ToolResult("old", "late"),)))
    late = w.region("conv").entries[-1]
    assert late.group == f"m:{late.id}"


def test_ten_thousand_calls_keep_the_index_at_window_size():
    w = _window(6)
    for i in range(10_000):
        _call(w, f"c{i}", answer=True)
    w.snapshot_state()
    assert len(w.call_groups) <= 6


def _scanned_call(w: Window, call_id: str) -> ToolUse | None:
    """The ``tool_use`` of ``call_id`` found by scanning every region (the reference)."""
    for r in w.regions:
        for e in r.entries:
            for b in e.blocks:
                if isinstance(b, ToolUse) and b.id == call_id:
                    return b
    return None


@settings(max_examples=40, deadline=None)
@given(
    max_items=st.integers(3, 12),
    steps=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=80),
)
def test_tool_call_lookup_equals_a_scan_of_the_window_through_eviction_and_reload(max_items, steps):
    w = _window(max_items)
    for i, (answer, reload) in enumerate(steps):
        w.add_message(Message.user("go"))
        w.add_message(Message.assistant("", (ToolUse(f"c{i}", "read", {"i": i}),)))
        if answer:
            w.add_message(Message.tool((ToolResult(f"c{i}", "out"),)))
        if reload:  # a loaded window rebuilds the index from its entries
            w = Window.from_state(w.snapshot_state(), counter=StubCounter())
        for j in range(i + 1):
            assert w.tool_call(f"c{j}") == _scanned_call(w, f"c{j}")
