"""Unit boundaries of a region's entries: where a cut may fall, and what is protected.

A **unit** is a standalone entry or a whole turn group (:func:`regio.content.group_entries`;
a group may be non-contiguous). Every eviction, compaction mark, release and clear removes a
prefix ``entries[:k]`` where ``k`` is a **safe cut**: no group has members on both sides of
``k``. So what is kept is always a suffix of whole units (field cases FC-01, FC-04, FC-33).

**Protected** (field-cases.md section 0): the current turn (the newest ``user`` message that is
not only tool results, and everything after it) and every open group (calls without results)
are never evicted or compacted. ``limit`` is the largest position a cut may reach.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.content import Entry, ToolResult, group_entries

__all__ = ["UnitAnalysis", "analyze", "is_user_turn_start"]


def is_user_turn_start(entry: Entry) -> bool:
    """True for a ``user`` message that is not only tool results (it starts a turn)."""
    if entry.role != "user":
        return False
    return not entry.blocks or not all(isinstance(b, ToolResult) for b in entry.blocks)


class UnitAnalysis(msgspec.Struct, frozen=True):
    """Unit structure of a list of entries (n entries).

    * ``safe[k]`` for ``k`` in ``0..n``: cutting before entry ``k`` splits no group;
    * ``limit``: protected content starts here (cuts must be ``<= limit``);
    * ``suffix_tokens[k]``: tokens of ``entries[k:]``;
    * ``units_from[k]``: number of whole units in ``entries[k:]`` (valid at safe ``k``);
    * ``unit_of[i]``: index of the unit of entry ``i``;
    * ``open_groups``: ids of open groups.
    """

    safe: tuple[bool, ...]
    limit: int
    suffix_tokens: tuple[int, ...]
    units_from: tuple[int, ...]
    unit_of: tuple[int, ...]
    open_groups: tuple[str, ...]

    @property
    def size(self) -> int:
        """Number of entries analysed."""
        return len(self.safe) - 1

    def safe_cuts(self) -> list[int]:
        """All safe cuts ``0..limit`` in increasing order (0 is always one)."""
        return [k for k in range(self.limit + 1) if self.safe[k]]

    def smallest_cut(
        self,
        *,
        min_cut: int = 0,
        max_tokens: int | None = None,
        max_units: int | None = None,
        max_entries: int | None = None,
        max_cut: int | None = None,
    ) -> int | None:
        """Smallest safe cut ``k >= min_cut``, ``k <= limit`` whose suffix meets every given cap.

        ``max_tokens`` caps ``suffix_tokens[k]``, ``max_entries`` caps ``n - k`` and
        ``max_units`` caps ``units_from[k]``; ``max_cut`` caps ``k`` below ``limit``. ``None``
        when no allowed cut meets them.
        """
        n = self.size
        top = self.limit if max_cut is None else min(max_cut, self.limit)
        for k in range(max(0, min_cut), top + 1):
            if not self.safe[k]:
                continue
            if max_tokens is not None and self.suffix_tokens[k] > max_tokens:
                continue
            if max_entries is not None and n - k > max_entries:
                continue
            if max_units is not None and self.units_from[k] > max_units:
                continue
            return k
        return None

    def largest_cut(self, upto: int | None = None) -> int:
        """Largest safe cut ``<= min(upto, limit)`` (0 when nothing may go)."""
        top = self.limit if upto is None else min(upto, self.limit)
        for k in range(top, -1, -1):
            if self.safe[k]:
                return k
        return 0

    def unit_cut_after(self, index: int) -> int | None:
        """Smallest safe cut that removes entry ``index`` (and so its whole unit), or None."""
        for k in range(index + 1, self.size + 1):
            if self.safe[k]:
                return k
        return None


def analyze(entries: Sequence[Entry], *, protect_current_turn: bool = True) -> UnitAnalysis:
    """Analyse ``entries`` into units. O(n + calls).

    With ``protect_current_turn`` the newest :func:`is_user_turn_start` entry and everything
    after it is protected; open groups are always protected.
    """
    n = len(entries)
    grouping = group_entries(entries)
    last_member = [0] * n
    first_member = [0] * n
    for group in grouping.groups:
        lo, hi = group.members[0], group.members[-1]
        for m in group.members:
            last_member[m] = hi
            first_member[m] = lo
    safe = [True] * (n + 1)
    reach = -1
    for k in range(1, n + 1):
        reach = max(reach, last_member[k - 1])
        safe[k] = reach < k
    limit = n
    if protect_current_turn:
        for i in range(n - 1, -1, -1):
            if is_user_turn_start(entries[i]):
                limit = i
                break
    for group in grouping.groups:
        if group.open:
            limit = min(limit, group.members[0])
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + entries[i].tokens
    units_from = [0] * (n + 1)
    seen: set[int] = set()
    for i in range(n - 1, -1, -1):
        g = grouping.assignment[i]
        # a unit is counted at its first member, so units_from[k] is exact at safe cuts
        if first_member[i] == i:
            seen.add(g)
        units_from[i] = len(seen)
    return UnitAnalysis(
        safe=tuple(safe),
        limit=limit,
        suffix_tokens=tuple(suffix),
        units_from=tuple(units_from),
        unit_of=tuple(grouping.assignment),
        open_groups=grouping.open_groups,
    )
