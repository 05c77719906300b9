"""An entry list says which entries were replaced in place since a mark: every item
assignment, in order, with the group of the entry it replaced, as long as nothing else but
appends changed it and it still remembers them; after any other rewrite, a new list or a
long run of replacements it says it does not know (``None``), never something wrong."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.regions.entrylist import (
    REPLACEMENTS_KEPT,
    EntryList,
    entry_mark,
    replaced_since,
)
from test_regions_entrylist_epoch import APPENDS, REWRITES, _mutate

_GROUPED = [
    Entry(f"g{i}", (Text(f"grouped {i}"),), "user", tokens=2, group=f"g:{i % 3}") for i in range(6)
]

#: every other mutation (``setitem`` is an item assignment: ``set`` here)
_OTHER = [op for op in REWRITES if op != "setitem"]
_OPS = st.tuples(
    st.sampled_from([*APPENDS, "set", "set", "set_negative", *_OTHER]),
    st.integers(0, 9),
    st.integers(0, 5),
)


def _do(lst: EntryList, op: str, a: int, b: int) -> tuple[str, int, str | None]:
    """Apply ``op``; returns what it was (``append``, ``set`` or ``rewrite``) and, for a
    ``set``, the position and the group of the entry replaced."""
    if op in ("set", "set_negative") and lst:
        at = a % len(lst)
        group = lst[at].group
        lst[at - len(lst) if op == "set_negative" else at] = _GROUPED[b]
        return "set", at, group
    if op in ("set", "set_negative") or op in APPENDS:
        lst.append(_GROUPED[b])
        return "append", -1, None
    n = len(lst)
    _mutate(lst, op, a, b)  # a rewrite of an empty list it makes an append
    empty = not n and op not in ("setslice", "delslice", "insert", "clear", "sort", "reverse")
    return ("append" if empty and op != "imul" else "rewrite"), -1, None


@settings(max_examples=200, deadline=None)
@given(st.lists(_OPS, max_size=8), st.lists(_OPS, max_size=12))
def test_replaced_since_lists_exactly_the_item_assignments_since_the_mark(
    before: list[Any], after: list[Any]
) -> None:
    lst = EntryList()
    for op in before:
        _do(lst, *op)
    mark = entry_mark(lst)
    was = list(lst)
    kinds, sets = [], []
    for op in after:
        kind, at, group = _do(lst, *op)
        kinds.append(kind)
        if kind == "set":
            sets.append((at, group))
    replaced = replaced_since(lst, mark)
    if "rewrite" in kinds:
        assert replaced is None
        return
    assert replaced == sets
    changed = {at for at, _ in sets}
    assert len(lst) >= len(was)
    assert all(lst[i] is was[i] for i in range(len(was)) if i not in changed)


def test_a_replacement_of_the_same_object_is_still_listed() -> None:
    lst = EntryList(_GROUPED[:3])
    mark = entry_mark(lst)
    lst[1] = lst[1]
    assert replaced_since(lst, mark) == [(1, "g:1")]


def test_only_the_latest_replacements_are_remembered() -> None:
    lst = EntryList(_GROUPED[:3])
    early = entry_mark(lst)
    for i in range(3 * REPLACEMENTS_KEPT):
        lst[i % 3] = msgspec.structs.replace(_GROUPED[i % 3], tokens=i + 1)
    late = entry_mark(lst)
    lst[0] = _GROUPED[0]
    assert len(lst.replaced) <= REPLACEMENTS_KEPT
    assert replaced_since(lst, early) is None  # forgotten: the reader recomputes
    assert replaced_since(lst, late) == [(0, "g:0")]
    assert replaced_since(EntryList(lst), late) is None  # another list object
