"""The list that holds a region's entries and counts its rewrites (the
layout caches need an O(1) answer to "was this conversation only appended to since the last
request?").

:class:`EntryList` is a plain ``list`` whose ``rewrite_epoch`` (an ``int``, starting at 0) is
bumped by every mutation that is *not* an append at the end: item / slice assignment and
deletion, ``insert``, ``pop``, ``remove``, ``clear``, ``sort``, ``reverse`` and ``*=``.
``append``, ``extend`` and ``+=`` leave it unchanged. A reader that remembers ``(the list
object, rewrite_epoch, len)`` therefore knows, when the object and epoch are unchanged, that the
first ``len`` items are the very same objects as before and anything after them was appended.
Assigning a new list to ``Region.entries`` gives a new :class:`EntryList` object (a reader then
falls back to comparing items).

That reader's check is :func:`appended_since`: a reader keeps an :class:`EntryMark` (taken with
:func:`entry_mark` when it last looked) and asks, in O(1), how many leading entries are still
the very objects it saw (the rest were appended), or ``None`` when the list was rewritten,
replaced, or is not an :class:`EntryList` at all (then the reader recomputes).
"""

from __future__ import annotations

from typing import Any, SupportsIndex

from regio.content import Entry

__all__ = ["EntryList", "EntryMark", "appended_since", "as_entry_list", "entry_mark", "unchanged"]


class EntryList(list[Entry]):
    """A ``list`` of entries with a rewrite counter (see module docstring)."""

    __slots__ = ("rewrite_epoch",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.rewrite_epoch = 0

    def __setitem__(self, index: Any, value: Any) -> None:
        self.rewrite_epoch += 1
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        self.rewrite_epoch += 1
        super().__delitem__(index)

    def __imul__(self, n: SupportsIndex) -> EntryList:
        self.rewrite_epoch += 1
        super().__imul__(n)
        return self

    def insert(self, index: SupportsIndex, entry: Entry) -> None:
        self.rewrite_epoch += 1
        super().insert(index, entry)

    def pop(self, index: SupportsIndex = -1) -> Entry:
        self.rewrite_epoch += 1
        return super().pop(index)

    def remove(self, entry: Entry) -> None:
        self.rewrite_epoch += 1
        super().remove(entry)

    def clear(self) -> None:
        self.rewrite_epoch += 1
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self.rewrite_epoch += 1
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self.rewrite_epoch += 1
        super().reverse()


def as_entry_list(value: Any) -> EntryList:
    """``value`` itself when it is an :class:`EntryList`, else a new one holding its items
    (the ``Region.entries`` converter)."""
    return value if isinstance(value, EntryList) else EntryList(value)


class EntryMark:
    """Where a reader left an :class:`EntryList`: the list object itself (compared by
    identity), its ``rewrite_epoch`` then, and ``length``, how many of its entries the reader
    took (its length then). Taken with :func:`entry_mark`, checked with
    :func:`appended_since`; never changed once taken (a plain slotted class: marks are taken
    on every request, an attrs frozen class costs four times as much to build)."""

    __slots__ = ("entries", "epoch", "length")

    def __init__(self, entries: EntryList, epoch: int, length: int) -> None:
        self.entries = entries
        self.epoch = epoch
        self.length = length

    def __repr__(self) -> str:
        return f"EntryMark(epoch={self.epoch}, length={self.length})"


def entry_mark(entries: Any) -> EntryMark | None:
    """The :class:`EntryMark` of ``entries`` now (``length``: ``len(entries)``); ``None`` when
    ``entries`` is not an :class:`EntryList` (it has no rewrite counter to trust)."""
    if not isinstance(entries, EntryList):
        return None
    return EntryMark(entries, entries.rewrite_epoch, len(entries))


def appended_since(entries: Any, mark: EntryMark | None) -> int | None:
    """``mark.length`` when ``entries`` was only appended to since ``mark`` was taken: it is
    the marked :class:`EntryList` object, with the same ``rewrite_epoch`` and at least
    ``mark.length`` entries, so ``entries[:mark.length]`` are the very objects the reader saw
    and anything after them was appended. ``None`` otherwise (no mark, another list object, a
    rewrite since, or a list that is not an :class:`EntryList`): the reader recomputes. O(1)."""
    if (
        mark is None
        or entries is not mark.entries
        or entries.rewrite_epoch != mark.epoch
        or len(entries) < mark.length
    ):
        return None
    return mark.length


def unchanged(entries: Any, mark: EntryMark | None) -> bool:
    """Whether ``entries`` is exactly as ``mark`` saw it (only appended to, and by nothing)."""
    return appended_since(entries, mark) == len(entries)
