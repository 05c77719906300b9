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

A reader that can follow an entry replaced in place (``entries[i] = entry``, what
``SlidingWindow.rewrite_entry`` and a keyed region's replacing write do) asks
:func:`replaced_since` instead: the positions replaced since its mark, in order, each with the
group of the entry it replaced, so a relief edit does not make it recompute. The list keeps
the last :data:`REPLACEMENTS_KEPT` replacements (a longer run, or any other rewrite, and the
answer is ``None``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, SupportsIndex, overload

from regio.content import Entry

__all__ = [
    "REPLACEMENTS_KEPT",
    "EntryList",
    "EntryMark",
    "appended_since",
    "as_entry_list",
    "entry_mark",
    "entry_number",
    "replaced_since",
    "unchanged",
]

#: how many of its latest replacements an :class:`EntryList` remembers (a bound on what it
#: keeps: a tuple per replacement)
REPLACEMENTS_KEPT = 256


class EntryList(list[Entry]):
    """A ``list`` of entries with a rewrite counter (see module docstring).

    ``replaced``: ``(position, group of the entry replaced)`` of each item assignment, one
    per epoch after ``replaced_from`` (``rewrite_epoch - replaced_from == len(replaced)``);
    any other rewrite empties it and moves ``replaced_from`` to the new epoch."""

    __slots__ = ("replaced", "replaced_from", "rewrite_epoch")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.rewrite_epoch = 0
        self.replaced: list[tuple[int, str | None]] = []
        self.replaced_from = 0

    def _rewritten(self) -> None:
        """A rewrite that is not one item replaced: the replacements before it are forgotten."""
        self.rewrite_epoch += 1
        self.replaced_from = self.rewrite_epoch
        if self.replaced:
            self.replaced = []

    @overload
    def __setitem__(self, index: SupportsIndex, value: Entry) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[Entry]) -> None: ...

    def __setitem__(self, index: Any, value: Any) -> None:
        # Any: the body forwards either overload's pair to list.__setitem__, whose overloads
        # take no union pair; callers are checked against the two overloads above.
        n = len(self)
        if type(index) is not int or not -n <= index < n:
            self._rewritten()  # a slice, or an index out of range (the list raises)
            super().__setitem__(index, value)
            return
        at = index % n
        old = super().__getitem__(at)
        super().__setitem__(at, value)
        self.rewrite_epoch += 1
        self.replaced.append((at, getattr(old, "group", None)))
        if len(self.replaced) > REPLACEMENTS_KEPT:
            drop = len(self.replaced) - REPLACEMENTS_KEPT // 2
            del self.replaced[:drop]
            self.replaced_from += drop

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._rewritten()
        super().__delitem__(index)

    def __imul__(self, n: SupportsIndex) -> EntryList:
        self._rewritten()
        super().__imul__(n)
        return self

    def insert(self, index: SupportsIndex, entry: Entry) -> None:
        self._rewritten()
        super().insert(index, entry)

    def pop(self, index: SupportsIndex = -1) -> Entry:
        self._rewritten()
        return super().pop(index)

    def remove(self, entry: Entry) -> None:
        self._rewritten()
        super().remove(entry)

    def clear(self) -> None:
        self._rewritten()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._rewritten()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._rewritten()
        super().reverse()


def as_entry_list(value: Iterable[Entry]) -> EntryList:
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


def entry_mark(entries: object) -> EntryMark | None:
    """The :class:`EntryMark` of ``entries`` now (``length``: ``len(entries)``); ``None`` when
    ``entries`` is not an :class:`EntryList` (it has no rewrite counter to trust)."""
    if not isinstance(entries, EntryList):
        return None
    return EntryMark(entries, entries.rewrite_epoch, len(entries))


def appended_since(entries: Sequence[Entry] | None, mark: EntryMark | None) -> int | None:
    """``mark.length`` when ``entries`` was only appended to since ``mark`` was taken: it is
    the marked :class:`EntryList` object, with the same ``rewrite_epoch`` and at least
    ``mark.length`` entries, so ``entries[:mark.length]`` are the very objects the reader saw
    and anything after them was appended. ``None`` otherwise (no mark, another list object, a
    rewrite since, no list, or a list that is not an :class:`EntryList`): the reader
    recomputes. O(1)."""
    if (
        mark is None
        or entries is not mark.entries
        or mark.entries.rewrite_epoch != mark.epoch
        or len(entries) < mark.length
    ):
        return None
    return mark.length


def unchanged(entries: Sequence[Entry], mark: EntryMark | None) -> bool:
    """Whether ``entries`` is exactly as ``mark`` saw it (only appended to, and by nothing)."""
    return appended_since(entries, mark) == len(entries)


def replaced_since(
    entries: Sequence[Entry], mark: EntryMark | None
) -> list[tuple[int, str | None]] | None:
    """The entries replaced in place since ``mark`` was taken, in order: ``(position, group of
    the entry replaced)`` per item assignment (``[]``: only appended to), when ``entries`` is
    the marked :class:`EntryList`, still holds at least ``mark.length`` entries and was changed
    since only by appends and item assignments (of which it keeps the last
    :data:`REPLACEMENTS_KEPT`). ``None`` otherwise: the reader recomputes. O(replacements)."""
    if mark is None or entries is not mark.entries or len(entries) < mark.length:
        return None
    skip = mark.epoch - mark.entries.replaced_from
    if skip < 0:
        return None
    return mark.entries.replaced[skip:]


def entry_number(entry_id: str) -> int | None:
    """The number of an entry id the window gave (``e12`` -> 12), else ``None``."""
    digits = entry_id[1:] if entry_id.startswith("e") else ""
    return int(digits) if digits.isdigit() else None
