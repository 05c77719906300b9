"""The window's result index (call id -> the conversation entries mentioning it) answers what
the backward walk over the conversation answers, for every call id, after any change of the
entries: appends, in-place rewrites (a result cleared, a block dropped, a block added, an
entry made a summary), more rewrites than the entry list remembers, eviction, release, clear,
an inserted entry, a loaded state; and the call index it sits beside stays right and makes no
full pass for a rewrite that keeps the entry's group."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, ToolResult, ToolUse
from regio.errors import ProtectedEntryError
from regio.regions import SlidingWindow, Window
from regio.regions.entrylist import REPLACEMENTS_KEPT
from regio.regions.indexes import results as resultindex
from regions_support import StubCounter

CALLS = [f"c{i}" for i in range(5)]


def walk(entries: Sequence[Entry], call_id: str) -> Entry | None:
    """The reference: newest entry first, summaries passed over, blocks from the last; a
    result of the call is the answer, the call itself means none."""
    for entry in reversed(entries):
        if entry.meta.get("summary"):
            continue
        for b in reversed(entry.blocks):
            if isinstance(b, ToolResult) and b.tool_use_id == call_id:
                return entry
            if isinstance(b, ToolUse) and b.id == call_id:
                return None
    return None


def _window(max_items: int | None) -> Window:
    conv = (
        SlidingWindow(name="conv", budget=10**6)
        if max_items is None
        else SlidingWindow(name="conv", budget=10**6, max_items=max_items, eviction="per_item")
    )
    return Window(regions=[conv], max_tokens=2 * 10**6, counter=StubCounter())


def _rewritten(entry: Entry, how: str, call: str) -> Entry:
    blocks = list(entry.blocks)
    if how == "clear":
        blocks = [
            msgspec.structs.replace(b, content=f"[{b.tool_use_id} cleared]")
            if isinstance(b, ToolResult)
            else b
            for b in blocks
        ]
    elif how == "drop" and len(blocks) > 1:
        blocks.pop()
    elif how == "add":
        blocks.append(ToolResult(call, f"added to {entry.id}"))
    elif how == "summary":
        meta = dict(entry.meta)
        meta["summary"] = not meta.get("summary")
        return msgspec.structs.replace(entry, meta=meta)
    return msgspec.structs.replace(entry, blocks=tuple(blocks))


_OP = st.one_of(
    st.tuples(st.just("call"), st.lists(st.sampled_from(CALLS), min_size=1, max_size=2)),
    st.tuples(st.just("call"), st.lists(st.sampled_from(CALLS), min_size=1, max_size=2)),
    st.tuples(
        st.just("results"), st.lists(st.sampled_from(CALLS), min_size=1, max_size=3), st.booleans()
    ),
    st.tuples(
        st.just("results"), st.lists(st.sampled_from(CALLS), min_size=1, max_size=3), st.booleans()
    ),
    st.tuples(st.just("user")),
    st.tuples(
        st.just("rewrite"),
        st.integers(0, 60),
        st.sampled_from(["clear", "drop", "add", "summary"]),
        st.sampled_from(CALLS),
    ),
    st.tuples(st.just("regroup"), st.integers(0, 60)),
    st.tuples(st.just("burst"), st.integers(0, 60)),
    st.tuples(st.just("release"), st.integers(0, 60)),
    st.tuples(st.just("oldest"), st.integers(1, 3)),
    st.tuples(st.just("insert"), st.sampled_from(CALLS), st.booleans()),
    st.tuples(st.just("clear_region")),
    st.tuples(st.just("reload"), st.booleans()),
)


def _apply(w: Window, op: tuple[Any, ...], n: int) -> Window:
    conv = w.region("conv")
    kind, entries = op[0], conv.entries
    if kind == "call":
        w.add_message(Message.assistant("", tuple(ToolUse(c, "read", {"n": n}) for c in op[1])))
    elif kind == "results":
        w.add_message(Message.tool(tuple(ToolResult(c, f"out {n}", final=op[2]) for c in op[1])))
    elif kind == "user":
        w.add_message(Message.user(f"turn {n}"))
    elif kind == "rewrite" and entries:
        at = op[1] % len(entries)
        conv.rewrite_entry(at, _rewritten(entries[at], op[2], op[3]))
    elif kind == "regroup" and entries:  # an item assignment that changes the group
        at = op[1] % len(entries)
        entries[at] = msgspec.structs.replace(entries[at], group=f"m:other{n}")
    elif kind == "burst" and entries:  # more replacements than the list remembers
        at = op[1] % len(entries)
        for _ in range(REPLACEMENTS_KEPT + 1):
            conv.rewrite_entry(at, _rewritten(entries[at], "clear", ""))
    elif kind in ("release", "oldest") and entries:
        try:
            if kind == "release":
                w.release("conv", index=op[1] % len(entries))
            else:
                w.release("conv", oldest=op[1])
        except ProtectedEntryError:
            pass
    elif kind == "insert":
        meta = {"summary": True} if op[2] else {}
        conv.insert(0, w.make_entry(ToolResult(op[1], "inserted"), role="user", meta=meta))
    elif kind == "clear_region":
        w.clear("conv")
    elif kind == "reload":
        state = w.snapshot_state()
        if op[1]:
            return Window.from_state(state, counter=StubCounter())
        w.restore_state(state)
    return w


def _live_groups(w: Window) -> set[str]:
    return {e.group for r in w.regions for e in r.entries if e.group}


@contextlib.contextmanager
def near(entries: int) -> Iterator[None]:
    """``resultindex.NEAR`` set to ``entries`` (0: every lookup the index cannot follow to
    rebuilds it, as in a window far longer than these)."""
    kept = resultindex.NEAR
    resultindex.NEAR = entries
    try:
        yield
    finally:
        resultindex.NEAR = kept


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([None, 4, 9]),
    st.lists(_OP, min_size=1, max_size=40),
    st.sampled_from([0, 3, 64]),
)
def test_the_result_index_answers_what_the_backward_walk_answers(
    max_items: int | None, ops: list[Any], near_entries: int
) -> None:
    with near(near_entries):
        _check_ops(max_items, ops)


def _check_ops(max_items: int | None, ops: list[Any]) -> None:
    w = _window(max_items)
    for n, op in enumerate(ops):
        w = _apply(w, op, n)
        conv = w.region("conv")
        index = w.result_index(conv)
        for call in CALLS:
            assert index.newest_result(conv.entries, call) == walk(conv.entries, call), (n, call)
            record = w.calls.records.get(call)  # pruned only when its group has left
            known = record is not None and record.group in _live_groups(w)
            assert (w.call_group(call) is not None) == known, (n, call)


def _calls(w: Window, count: int) -> None:
    w.add_message(Message.user("go"))
    for i in range(count):
        w.add_message(Message.assistant("", (ToolUse(f"c{i}", "read", {}),)))
        w.add_message(Message.tool((ToolResult(f"c{i}", f"out {i}"),)))


def test_a_rewrite_in_the_same_group_makes_no_full_pass_of_either_index() -> None:
    w = _window(None)
    _calls(w, 30)
    conv = w.region("conv")
    index = w.result_index(conv)
    index.sync(conv.entries)  # built (a lookup this near the end would walk instead)
    assert index.newest_result(conv.entries, "c0") == conv.entries[2]
    passes, rebuilds = w.calls.full_passes, index.rebuilds
    assert rebuilds == 1
    for at in range(2, 40, 2):  # the results, cleared in place
        conv.rewrite_entry(at, _rewritten(conv.entries[at], "clear", ""))
        assert w.call_group(f"c{at // 2 - 1}") == f"g:c{at // 2 - 1}"
        assert index.newest_result(conv.entries, "c0") == conv.entries[2]
    assert (w.calls.full_passes, index.rebuilds) == (passes, rebuilds)
    conv.entries[2] = msgspec.structs.replace(conv.entries[2], group="m:elsewhere")
    assert w.call_group("c0") == "g:c0"  # the call's own entry is still there
    assert w.calls.full_passes == passes + 1  # a group changed: read every entry again


def test_a_result_added_to_an_older_entry_by_a_rewrite_is_found() -> None:
    """A rewrite can make an entry mention a call it did not: the index lists it then (the
    walk would find it), not only the entries it listed before."""
    w = _window(None)
    _calls(w, 3)
    conv = w.region("conv")
    index = w.result_index(conv)
    index.sync(conv.entries)
    assert index.newest_result(conv.entries, "late") is None
    conv.rewrite_entry(1, _rewritten(conv.entries[1], "add", "late"))
    assert index.newest_result(conv.entries, "late") == conv.entries[1]
    assert index.rebuilds == 1


def test_a_result_a_rewrite_took_out_of_its_entry_leaves_the_older_result_live() -> None:
    """The index still lists an entry whose rewrite dropped the call's result; the lookup
    passes over it to the older result, as the walk does."""
    w = _window(None)
    _calls(w, 1)
    w.add_message(Message.tool((ToolResult("c0", "again"), ToolResult("c9", "other"))))
    conv = w.region("conv")
    index = w.result_index(conv)
    index.sync(conv.entries)
    assert index.newest_result(conv.entries, "c0") == conv.entries[3]
    older = conv.entries[2]
    conv.rewrite_entry(
        3, msgspec.structs.replace(conv.entries[3], blocks=conv.entries[3].blocks[1:])
    )
    assert index.newest_result(conv.entries, "c0") == older == walk(conv.entries, "c0")
    assert index.rebuilds == 1  # the rewrite was followed
