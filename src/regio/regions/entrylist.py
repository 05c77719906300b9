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
"""

from __future__ import annotations

from typing import Any, SupportsIndex

from regio.content import Entry

__all__ = ["EntryList", "as_entry_list"]


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
