"""A compaction queued now and completed later always covers whole units.

A result answering an open call merges every tool-calling group that starts after that call
into one unit (calls and results spread over several assistant messages form one unit). A
compaction queued while the call was open is re-planned when that result arrives: it keeps
only the marked units that are still whole (or is dropped when none is), so completing it
never splits a turn group.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.regions import CompactHistory, SlidingWindow, Window
from regio.turngroups import group_entries
from regions_support import StubCounter, check_units


def _window(*, max_items: int = 2, compact_count: int = 2) -> Window:
    return Window(
        regions=[
            SlidingWindow(
                name="conv",
                budget=400,
                max_items=max_items,
                eviction={"compact": {"compact_count": compact_count}},
            ),
            CompactHistory(name="hist", budget=200, source="conv"),
        ],
        max_tokens=700,
        counter=StubCounter(),
    )


def _assert_whole_units(w: Window, entry_ids: tuple[str, ...]) -> None:
    conv = w.region("conv")
    grouping = group_entries(conv.entries)
    index = {e.id: i for i, e in enumerate(conv.entries)}
    chosen = {index[i] for i in entry_ids}
    for i in chosen:
        group = grouping.group_of(i)
        assert not group.open, f"{conv.entries[i].id} is in an open group"
        assert set(group.members) <= chosen, f"queued span splits {group.id}"


def test_compaction_queued_before_a_late_result_completes_whole():
    w = _window()
    w.add_message(Message.assistant("a1 [3]", [ToolUse("c1", "tool")]))
    w.add_message(Message.user("u2 [3]"))
    w.add_message(Message.user("u3 [3]"))
    w.add_message(Message.assistant("a4 [3]", [ToolUse("c4", "tool")]))
    w.add_message(Message.tool([ToolResult("c4", "r5 [3]")]))
    w.add_message(Message.tool([ToolResult("c1", "r6 [3]")]))
    pending = w.pending_compactions()
    assert pending, "the item trigger queued a compaction"
    for p in pending:
        _assert_whole_units(w, p.entry_ids)
        # the completed c4 group started after the open c1 call: it merged with c1's group
        assert not {"e4", "e5"} & set(p.entry_ids)
        w.complete_compaction(p.id, "summary [1]")
    check_units(w.region("conv").entries)


def _interleave(w: Window) -> None:
    w.add_message(Message.assistant("a1 [3]", [ToolUse("c1", "tool")]))
    w.add_message(Message.user("u2 [3]"))
    w.add_message(Message.assistant("a3 [3]", [ToolUse("c3", "tool")]))
    w.add_message(Message.tool([ToolResult("c3", "r4 [3]")]))
    w.add_message(Message.user("u5 [3]"))


def test_late_result_narrows_a_queued_compaction_to_its_whole_units():
    w = _window(max_items=2, compact_count=2)
    _interleave(w)
    (p,) = w.pending_compactions()
    assert p.entry_ids == ("e2", "e3", "e4")
    w.add_message(Message.tool([ToolResult("c1", "r6 [3]")]))
    (narrowed,) = w.pending_compactions()
    # {a1, a3, r4, r6} is one unit now; only the plain user message u2 is still whole
    assert (narrowed.id, narrowed.entry_ids, narrowed.tokens) == (p.id, ("e2",), 3)
    (event,) = w.events.of_kind("compaction_narrowed")
    assert event.entry_ids == ("e2",) and event.released == 6
    w.complete_compaction(p.id, "summary [1]")
    assert [e.id for e in w.region("conv").entries] == ["e1", "e3", "e4", "e5", "e6"]


def test_late_result_drops_a_queued_compaction_with_no_whole_unit_left():
    w = _window(max_items=2, compact_count=1)
    _interleave(w)
    (p,) = w.pending_compactions()
    assert p.entry_ids == ("e3", "e4")
    before = [e.id for e in w.region("conv").entries]
    w.add_message(Message.tool([ToolResult("c1", "r6 [3]")]))
    assert p.id not in {q.id for q in w.pending_compactions()}
    (event,) = w.events.of_kind("compaction_failed")
    assert event.pending_id == p.id and event.dropped
    # nothing stored was lost: the entries the item marked stay in the conversation
    assert set(before) <= {e.id for e in w.region("conv").entries}


# ----- interleaved sequences -------------------------------------------------------------------
_STEP = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 6)),
    st.tuples(st.just("assistant"), st.integers(0, 2)),
    st.tuples(st.just("result"), st.integers(0, 7)),
    st.tuples(st.just("complete"), st.integers(0, 3)),
)


@settings(max_examples=300, deadline=None)
@example(  # found at 4,000 examples with the re-planning disabled; kept so it always runs
    steps=[("user", 1), ("assistant", 1), ("assistant", 1), ("result", 1), ("result", 0)],
    max_items=2,
    compact_count=1,
)
@given(
    steps=st.lists(_STEP, min_size=1, max_size=40),
    max_items=st.integers(2, 4),
    compact_count=st.integers(1, 2),
)
def test_every_queued_compaction_completes_without_splitting_a_group(
    steps, max_items, compact_count
):
    w = _window(max_items=max_items, compact_count=compact_count)
    open_calls: list[str] = []
    n = 0
    for kind, arg in steps:
        n += 1
        if kind == "user":
            w.add_message(Message.user(f"u{n} [{arg}]"))
        elif kind == "assistant":
            ids = [f"c{n}_{i}" for i in range(arg)]
            w.add_message(Message.assistant(f"a{n} [2]", [ToolUse(c, "tool") for c in ids]))
            open_calls.extend(ids)
        elif kind == "result" and open_calls:
            # any open call, so results arrive out of order across assistant messages
            call = open_calls.pop(arg % len(open_calls))
            w.add_message(Message.tool([ToolResult(call, f"r{n} [2]")]))
        elif kind == "complete":
            for p in w.pending_compactions()[: arg + 1]:
                if p.operation != "compact" or p.tokens < 2:
                    w.fail_compaction(p.id, "too small")
                    continue
                _assert_whole_units(w, p.entry_ids)
                w.complete_compaction(p.id, "s [1]")
        for p in w.pending_compactions():
            if p.operation == "compact":
                conv = w.region("conv")
                present = {e.id for e in conv.entries}
                assert set(p.entry_ids) <= present
                _assert_whole_units(w, p.entry_ids)
        check_units(w.region("conv").entries)
