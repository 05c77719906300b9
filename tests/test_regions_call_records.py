"""The window's call index is one map (call id -> group and ``tool_use`` block), so the two
lookups, ``Window.call_group`` and ``Window.tool_call``, agree with each other and with a scan
of the window after any sequence of writes, tool results (progress and final), evictions,
releases, clears, compactions and save / load round trips."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.errors import CompactionError
from regio.regions import CompactHistory, SlidingWindow, Window
from regio.regions.indexes.calls import CallIndex, CallRecord
from regions_support import StubCounter


def _window(max_items: int) -> Window:
    return Window(
        regions=[
            SlidingWindow(
                name="conv",
                budget=400,
                max_items=max_items,
                eviction={"compact": {"compact_count": 3}},
            ),
            CompactHistory(name="hist", budget=400, source="conv"),
        ],
        max_tokens=1000,
        counter=StubCounter(),
    )


def _scan(w: Window, call_id: str) -> tuple[ToolUse, str | None] | None:
    """The reference: the ``tool_use`` block of ``call_id`` and its entry's group, found by
    scanning every region (call ids are unique here)."""
    for r in w.regions:
        for e in r.entries:
            for b in e.blocks:
                if isinstance(b, ToolUse) and b.id == call_id:
                    return b, e.group
    return None


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 30)),
        st.tuples(st.just("call"), st.integers(1, 2)),
        st.tuples(st.just("result"), st.integers(0, 50), st.booleans()),
        st.tuples(st.just("late"), st.integers(0, 50)),
        st.tuples(st.just("release"), st.integers(1, 3)),
        st.tuples(st.just("clear")),
        st.tuples(st.just("compact")),
        st.tuples(st.just("restore")),
    ),
    min_size=1,
    max_size=60,
)


def _step(w: Window, op: tuple[Any, ...], made: list[str], open_calls: list[str]) -> Window:
    kind = op[0]
    if kind == "user":
        w.add_message(Message.user(f"ask [{op[1]}]"))
    elif kind == "call":
        ids = [f"c{len(made) + k}" for k in range(op[1])]
        uses = tuple(ToolUse(c, "read", {"path": c}) for c in ids)
        w.add_message(Message.assistant("", uses))
        made.extend(ids)
        open_calls.extend(ids)
    elif kind == "result" and open_calls:
        call = open_calls[op[1] % len(open_calls)]
        w.add_message(Message.tool((ToolResult(call, f"out [{op[1] % 9 + 1}]", final=op[2]),)))
        if op[2]:
            open_calls.remove(call)
    elif kind == "late" and made:  # a result for any call made, maybe one that left
        w.add_message(Message.tool((ToolResult(made[op[1] % len(made)], "late [2]"),)))
    elif kind == "release":
        w.release("conv", oldest=op[1])
    elif kind == "clear":
        w.clear("conv")
    elif kind == "compact":
        pending = w.pending_compactions()
        if pending:
            with contextlib.suppress(CompactionError):  # a refused summary changes nothing
                w.complete_compaction(pending[0].id, "summary [4]")
        else:
            w.request_compaction("conv")
    elif kind == "restore":
        w = Window.from_state(w.snapshot_state(), counter=StubCounter())
    return w


@settings(max_examples=120, deadline=None)
@given(max_items=st.integers(3, 12), ops=_ops)
def test_call_lookups_equal_a_scan_of_the_window_after_any_steps(
    max_items: int, ops: list[tuple[Any, ...]]
) -> None:
    w = _window(max_items)
    made: list[str] = []
    open_calls: list[str] = []
    for op in ops:
        w = _step(w, op, made, open_calls)
        for c in made:
            found = _scan(w, c)
            assert w.tool_call(c) == (found[0] if found else None), (op, c)
            assert w.call_group(c) == (found[1] if found else None), (op, c)
        for c, record in w.calls.records.items():  # one record per call, the block its own
            assert record.tool_use is None or record.tool_use.id == c
            assert w.call_groups[c] == record.group
        assert w.snapshot_state().call_groups == {c: r.group for c, r in w.calls.records.items()}


def test_a_loaded_call_without_its_block_takes_the_block_of_a_later_call_with_its_id() -> None:
    index = CallIndex()
    index.restore({"c1": "g:c1"}, [])
    assert index.records == {"c1": CallRecord("g:c1", None)}
    use = ToolUse("c1", "read", {})
    index.add(use, "g:other")
    assert index.records == {"c1": CallRecord("g:c1", use)}  # the saved group stays
    index.add(ToolUse("c1", "write", {}), "g:again")
    assert index.records["c1"].tool_use == use  # the first block recorded stays


def test_the_call_groups_view_is_read_only_and_follows_the_index() -> None:
    w = _window(10)
    w.add_message(Message.user("go"))
    w.add_message(Message.assistant("", (ToolUse("a", "read", {}), ToolUse("b", "read", {}))))
    view = w.call_groups
    assert dict(view) == {"a": "g:a", "b": "g:a"} and len(view) == 2 and "a" in view
    assert not hasattr(view, "__setitem__")
    assert w.tool_call("b") == ToolUse("b", "read", {})


def test_an_append_only_window_prunes_its_call_index_without_a_full_pass(monkeypatch: Any) -> None:
    """Appending call / result pairs changes no group already recorded, so the index's prune
    is an O(regions) check, not a pass over every entry (it ran one per result before)."""
    import regio.regions.indexes.calls as calls_module

    passes = []
    real = calls_module.entry_mark
    monkeypatch.setattr(calls_module, "entry_mark", lambda e: passes.append(1) or real(e))
    w = Window(
        regions=[
            SlidingWindow(name="conv", budget=100_000),
            CompactHistory(name="hist", budget=400, source="conv"),
        ],
        max_tokens=200_000,
        counter=StubCounter(),
    )
    w.add_message(Message.user("start"))
    for i in range(60):
        w.add_message(Message("assistant", (ToolUse(f"c{i}", "ls", {}),)))
        w.add_message(Message("tool", (ToolResult(f"c{i}", f"out {i}"),)))
    full = len(passes) // 2  # one mark per region per full pass
    assert full <= 1, full
    assert all(w.tool_call(f"c{i}") is not None for i in range(60))
