"""The one "only appended since last time" check of an entry list
(:func:`regio.regions.entrylist.appended_since`), against its brute-force definition: the
list is the marked object and every mutation made to it since the mark was an append at the
end (then its first ``mark.length`` items are the very objects seen at the mark). Random
appends, evictions at the front, in-place edits, replacements of the list object and every
other list mutation; a reader built on the check equals a fresh computation, and so does the
unit analysis a region reuses while its entries are unchanged."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolResult, ToolUse
from regio.policies import analyze
from regio.regions import SlidingWindow
from regio.regions.entrylist import (
    EntryList,
    EntryMark,
    appended_since,
    entry_mark,
    unchanged,
)

_POOL = [Entry(f"e{i}", (Text(f"message {i}"),), "user", tokens=1 + i) for i in range(12)]

#: mutations that append at the end; every other one rewrites
APPENDS = {"append", "extend", "iadd"}
OPS = [
    "append",
    "extend",
    "iadd",
    "evict_front",  # del entries[:k] (in place)
    "evict_front_new",  # entries = entries[k:] (a new list object, as Region.remove_ids does)
    "edit",  # entries[i] = a rewritten entry (as rewrite_entry does)
    "replace",  # entries = a copy of itself (a new object with the same items)
    "insert",
    "pop",
    "clear",
    "reverse",
    "sort",
    "setslice",
    "mark",  # the reader takes a mark (no mutation)
]

steps_st = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 11), st.integers(0, 11)),
    min_size=1,
    max_size=30,
)


def _apply(lst: EntryList, op: str, a: int, b: int) -> tuple[EntryList, bool]:
    """Apply ``op`` to ``lst``: (the list now, whether the step was a mutation of ``lst`` that
    is not an append at the end, or a new list object)."""
    e = _POOL[b]
    n = len(lst)
    if op == "append":
        lst.append(e)
    elif op == "extend":
        lst.extend([e, _POOL[a]])
    elif op == "iadd":
        lst += [e]
    elif op == "evict_front":
        del lst[: a % (n + 1)]
    elif op == "evict_front_new":
        return EntryList(lst[a % (n + 1) :]), True
    elif op == "edit" and n:
        i = a % n
        lst[i] = msgspec.structs.replace(lst[i], tokens=lst[i].tokens + 1)
    elif op == "replace":
        return EntryList(lst), True
    elif op == "insert":
        lst.insert(a, e)
    elif op == "pop" and n:
        lst.pop(a % n)
    elif op == "clear":
        lst.clear()
    elif op == "reverse":
        lst.reverse()
    elif op == "sort":
        lst.sort(key=lambda x: x.id)
    elif op == "setslice":
        lst[a % (n + 1) :] = [e]
    else:  # "mark", or an edit / pop of an empty list: nothing happens
        return lst, False
    return lst, op not in APPENDS


@settings(max_examples=300, deadline=None)
@given(steps_st)
def test_appended_since_equals_its_brute_force_definition(
    steps: list[tuple[str, int, int]],
) -> None:
    lst = EntryList(_POOL[:3])
    # every mark taken so far, with the items seen then and whether a rewrite happened since
    marks: list[tuple[EntryMark, list[Entry], list[bool]]] = []
    for op, a, b in steps:
        if op == "mark":
            mark = entry_mark(lst)
            assert mark is not None
            marks.append((mark, list(lst), [False]))
            continue
        before = lst
        lst, rewrote = _apply(lst, op, a, b)
        for mark, _seen, dirty in marks:
            if mark.entries is before and rewrote:
                dirty[0] = True
        for mark, seen, dirty in marks:
            only_appended = lst is mark.entries and not dirty[0]
            expected = len(seen) if only_appended else None
            got = appended_since(lst, mark)
            assert got == expected, (op, mark.length, len(lst))
            if got is not None:  # sound: the seen items are still there, the very objects
                assert len(lst) >= got
                assert all(x is y for x, y in zip(lst[:got], seen, strict=True))
            assert unchanged(lst, mark) == (only_appended and len(lst) == len(seen))


def test_a_list_that_is_not_an_entry_list_is_never_trusted() -> None:
    plain: list[Any] = list(_POOL[:3])
    assert entry_mark(plain) is None
    assert appended_since(plain, None) is None
    lst = EntryList(_POOL[:3])
    mark = entry_mark(lst)
    assert appended_since(plain, mark) is None  # same items, another object
    assert appended_since(lst, None) is None
    assert appended_since(lst, mark) == 3 and unchanged(lst, mark)


@settings(max_examples=150, deadline=None)
@given(steps_st)
def test_a_reader_built_on_the_check_equals_a_fresh_computation(
    steps: list[tuple[str, int, int]],
) -> None:
    """The shape of every caller: keep a derived value, extend it by the appended entries
    when the check allows, recompute otherwise. Here on a region's entries (assigning a list
    to ``Region.entries`` converts it) and the running token sums of its entries."""
    region = SlidingWindow(name="conv", budget=10**6)
    region.entries = list(_POOL[:2])
    seen: EntryMark | None = None
    sums: list[int] = []
    recomputed = 0
    for op, a, b in steps:
        lst, _ = _apply(region.entries, op, a, b)  # type: ignore[arg-type]
        region.entries = lst
        start = appended_since(region.entries, seen)
        if start is None:
            sums, start = [], 0
            recomputed += 1
        for e in region.entries[start:]:
            sums.append((sums[-1] if sums else 0) + e.tokens)
        seen = entry_mark(region.entries)
        fresh = [sum(e.tokens for e in region.entries[: i + 1]) for i in range(len(lst))]
        assert sums == fresh
    if all(op in APPENDS or op == "mark" for op, _, _ in steps):
        assert recomputed == 1  # appends alone never recompute (only the first look does)


_CALLS = [
    Entry("a1", (ToolUse("t1", "read", {}),), "assistant", tokens=4, group="g:t1"),
    Entry("r1", (ToolResult("t1", "out"),), "tool", tokens=6, group="g:t1"),
    Entry("a2", (ToolUse("t2", "job", {}),), "assistant", tokens=3, group="g:t2"),
    Entry("r2", (ToolResult("t2", "running", final=False),), "tool", tokens=2, group="g:t2"),
]


@settings(max_examples=150, deadline=None)
@given(steps_st, st.lists(st.booleans(), min_size=30, max_size=30))
def test_a_regions_reused_unit_analysis_equals_a_fresh_one(
    steps: list[tuple[str, int, int]], looks: list[bool]
) -> None:
    region = SlidingWindow(name="conv", budget=10**6)
    region.entries = [*_POOL[:2], *_CALLS]
    for (op, a, b), look in zip(steps, looks, strict=False):
        if look:
            region.analysis()  # remembered for the entries as they are now
        lst, _ = _apply(region.entries, op, a, b)  # type: ignore[arg-type]
        if op == "evict_front_new" or op == "replace":
            region.entries = lst
        if b % 3 == 0 and len(region.entries) > 1:  # a region's own in-place rewrite
            old = region.entries[0]
            region.rewrite_entry(0, msgspec.structs.replace(old, tokens=old.tokens + 1))
        assert region.analysis() == analyze(region.entries), op
        assert region.analysis() == analyze(list(region.entries))
