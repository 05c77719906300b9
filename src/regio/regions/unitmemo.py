"""What a region knows of its entries' units between two writes, kept from one to the next.

A conversation reads its unit structure several times per admitted message: its growth per
request (the number of turn groups), the newest turn the admission must keep (the protected
units: open groups and the newest user message's), and, when something has to go, the whole
:class:`regio.policies.UnitAnalysis`. :class:`UnitMemo` keeps, for the entry list as it was
(an :class:`regio.regions.entrylist.EntryMark`), the grouping, the newest turn start, the
tokens relief took from them and the analysis once one was asked for. After appends only, the
appended entries are read (the grouping from the first open group on,
:func:`regio.policies.units.appended_grouping`); any other change reads them all again; the
analysis is built only when asked for. Never saved.
"""

from __future__ import annotations

from collections.abc import Sequence

from regio.content import Entry, ToolResult
from regio.policies import UnitAnalysis, analyze, is_user_turn_start
from regio.policies.units import appended_grouping
from regio.regions import entrylist
from regio.regions.entrylist import EntryMark, entry_mark, entry_number
from regio.turngroups import Grouping, group_entries

__all__ = ["ResultNumbers", "UnitMemo", "relieved_tokens", "units_of"]


def relieved_tokens(entries: Sequence[Entry]) -> int:
    """Tokens relief edits took from ``entries``: per entry with ``meta["admitted_tokens"]``
    (what it had when admitted), that less its tokens now."""
    return sum(e.meta["admitted_tokens"] - e.tokens for e in entries if "admitted_tokens" in e.meta)


class UnitMemo:
    """The unit structure of an entry list at ``mark`` (module doc): ``grouping``
    (:func:`regio.turngroups.group_entries`), ``turn_start`` (index of the newest
    :func:`regio.policies.is_user_turn_start` entry, ``len(entries)`` when none),
    ``relieved`` (:func:`relieved_tokens` of them), ``results`` (entry id -> index of each
    entry holding a tool result; the dict grows with the list: an older memo of the same
    list may see later entries in it), ``numbers`` (of those entries: ``top``, the highest
    entry number, ``-1`` for none, and ``odd``, ``(number, index)`` of each whose id is not
    the window's ``e<n>`` or whose number is not above every earlier one: an entry a caller
    made; a reader looks those up by number, not by id) and ``analysis`` (``None`` until
    asked for)."""

    __slots__ = ("analysis", "grouping", "mark", "numbers", "relieved", "results", "turn_start")

    def __init__(
        self,
        mark: EntryMark | None,
        grouping: Grouping,
        turn_start: int,
        relieved: int,
        results: dict[str, int],
        numbers: ResultNumbers,
    ) -> None:
        self.mark = mark
        self.grouping = grouping
        self.turn_start = turn_start
        self.relieved = relieved
        self.results = results
        self.numbers = numbers
        self.analysis: UnitAnalysis | None = None

    def unit_analysis(self, entries: Sequence[Entry]) -> UnitAnalysis:
        """:func:`regio.policies.analyze` of ``entries`` (the list this memo was made of),
        built once."""
        if self.analysis is None:
            self.analysis = analyze(entries, grouping=self.grouping)
        return self.analysis

    def protected_units(self) -> set[int]:
        """The units ``analyze`` protects (the current turn protected): the open groups and
        the newest user message's unit. O(groups after the oldest open group)."""
        grouping = self.grouping
        groups = grouping.groups
        protected: set[int] = set()
        wanted = len(grouping.open_groups)
        u = len(groups) - 1
        while wanted and u >= 0:  # open groups are found from the newest back
            if groups[u].open:
                protected.add(u)
                wanted -= 1
            u -= 1
        if self.turn_start < len(grouping.assignment):
            protected.add(grouping.assignment[self.turn_start])
        return protected


def units_of(entries: Sequence[Entry], memo: UnitMemo | None) -> UnitMemo:
    """The :class:`UnitMemo` of ``entries`` now: ``memo`` itself when the list is unchanged
    since it was made, one built from it when entries were only appended since (reading
    those), else one built from scratch. O(appended) + the regrouped tail, or O(entries)."""
    kept = entrylist.appended_since(entries, memo.mark) if memo is not None else None
    n = len(entries)
    if memo is not None and kept == n:
        return memo
    if memo is not None and kept is not None and kept == len(memo.grouping.assignment):
        grouping = appended_grouping(memo.grouping, entries)
        starts = [i for i in range(kept, n) if is_user_turn_start(entries[i])]
        turn_start = starts[-1] if starts else (memo.turn_start if memo.turn_start < kept else n)
        relieved = memo.relieved + relieved_tokens(entries[kept:])
        numbers = ResultNumbers(memo.numbers.top, memo.numbers.odd)
        results = _with_results(memo.results, numbers, entries, kept)
        return UnitMemo(entry_mark(entries), grouping, turn_start, relieved, results, numbers)
    turn_start = next((i for i in range(n - 1, -1, -1) if is_user_turn_start(entries[i])), n)
    relieved = relieved_tokens(entries)
    numbers = ResultNumbers(-1, [])
    results = _with_results({}, numbers, entries, 0)
    return UnitMemo(
        entry_mark(entries), group_entries(entries), turn_start, relieved, results, numbers
    )


class ResultNumbers:
    """The entry numbers of a list's result-holding entries (:class:`UnitMemo`): ``top`` and
    ``odd``; ``odd`` grows with the list like ``results``."""

    __slots__ = ("odd", "top")

    def __init__(self, top: int, odd: list[tuple[int, int]]) -> None:
        self.top = top
        self.odd = odd

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResultNumbers):
            return NotImplemented
        return (self.top, self.odd) == (other.top, other.odd)

    __hash__ = None  # type: ignore[assignment]


def _with_results(
    results: dict[str, int], numbers: ResultNumbers, entries: Sequence[Entry], start: int
) -> dict[str, int]:
    """``results`` with the entries from ``start`` on that hold a tool result (id -> index);
    ``numbers`` moved on over them."""
    for i in range(start, len(entries)):
        e = entries[i]
        if any(isinstance(b, ToolResult) for b in e.blocks):
            results[e.id] = i
            number = entry_number(e.id)
            if number is None:
                continue
            if number <= numbers.top or e.id != f"e{number}":
                numbers.odd.append((number, i))
            numbers.top = max(numbers.top, number)
    return results
