"""Unit boundaries of a region's entries: what may be removed, in which order, and what is
protected.

A **unit** is a standalone entry or a whole turn group (:func:`regio.turngroups.group_entries`;
a group may be non-contiguous). Every eviction, compaction mark, release and clear removes a
union of whole units, so no group is ever split.

**Protected**: the newest user message (a ``user`` entry that is not
only tool results; plain-text agents that send observations as ``user`` messages protect their
newest observation) and every open group (calls without results) are never summarized,
cleared or evicted. Completed groups after the newest user message (a long single-turn tool
loop) are *not* protected: they may be compacted or evicted.

Two kinds of removal:

* **Removal order** (token caps, compaction, clear, ``release(oldest=N)``): the units that are
  not protected, ordered by their first entry, oldest first. A removal always takes the first
  ``j`` units of that order. What is kept is therefore the protected units plus the newest
  unprotected units, in their original relative order. Before the newest user message this is
  exactly a suffix of whole units; past it, the cut skips over the protected user message and
  any open group and continues into the completed groups of the current turn.
* **History windows** (``max_items``, ``max_turns``, ``max_tool_calls``): windows
  select from earlier turns only, the current turn is always kept in full. A history window
  is a *cut* ``k``: ``entries[:k]`` goes, ``entries[k:]`` stays. ``k`` is **safe** (no group
  has members on both sides) and at most ``limit`` (the newest user message, or the first entry
  of an open group if one starts earlier). At a safe ``k <= limit``, ``entries[:k]`` is exactly
  the first :meth:`UnitAnalysis.units_before` units of the removal order, so both kinds compose.
  The open group of a running job (a call with progress reports, ``ToolResult(final=False)``)
  neither limits nor blocks a cut: the removal skips it, so it stays whole (its call and
  latest report) while the history window evicts the complete units around it. The caps
  count what is kept, the job's entries, unit and calls included (they are never the ones
  cut): ``max_items: 6`` keeps six items in all.

The kept list stays well-formed: whole units keep every
tool result with its call, and the first kept entry is the first entry of a unit (a user
message, a standalone message or an assistant message with calls), never a tool result,
unless the input already held an orphan result (the layout's repair handles those).
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Sequence

import msgspec

from regio.content import Entry, ToolResult, ToolUse
from regio.turngroups import Grouping, TurnGroup, group_entries

__all__ = ["HistoryCaps", "HistoryCounts", "UnitAnalysis", "analyze", "is_user_turn_start"]


def is_user_turn_start(entry: Entry) -> bool:
    """True for a ``user`` message that is not only tool results (it starts a turn)."""
    if entry.role != "user":
        return False
    return not entry.blocks or not all(isinstance(b, ToolResult) for b in entry.blocks)


class HistoryCaps(msgspec.Struct, frozen=True):
    """Caps of a history window; ``None`` means no cap.

    * ``max_entries``: kept entries (the whole region, current turn included);
    * ``max_units``: kept units (the whole region, current turn included);
    * ``max_turns``: earlier turns kept (a turn starts at a user message; the current turn is
      not counted and always kept);
    * ``max_tool_calls``: ``tool_use`` blocks kept in earlier turns (each call goes with its
      results, oldest first).
    """

    max_entries: int | None = None
    max_units: int | None = None
    max_turns: int | None = None
    max_tool_calls: int | None = None

    @property
    def empty(self) -> bool:
        """True when no cap is set."""
        return (
            self.max_entries is None
            and self.max_units is None
            and self.max_turns is None
            and self.max_tool_calls is None
        )


class HistoryCounts(msgspec.Struct, frozen=True):
    """Running counts of an entry list that decide whether its history window keeps
    everything (cut 0), updated in O(1) per appended entry (the per-turn fast path of
    ``sliding_window`` writes with ``max_turns`` / ``max_tool_calls``).

    ``entries``: entries counted; ``starts``: user turn starts (:func:`is_user_turn_start`);
    ``first_is_start``: entry 0 is a turn start; ``calls``: ``tool_use`` blocks in all entries;
    ``calls_at_last_start``: ``tool_use`` blocks before the newest turn start.
    """

    entries: int = 0
    starts: int = 0
    first_is_start: bool = False
    calls: int = 0
    calls_at_last_start: int = 0

    def extend(self, entry: Entry) -> HistoryCounts:
        """The counts with ``entry`` appended."""
        calls = sum(1 for b in entry.blocks if isinstance(b, ToolUse))
        if is_user_turn_start(entry):
            return HistoryCounts(
                self.entries + 1,
                self.starts + 1,
                self.first_is_start or self.entries == 0,
                self.calls + calls,
                self.calls,
            )
        return HistoryCounts(
            self.entries + 1,
            self.starts,
            self.first_is_start,
            self.calls + calls,
            self.calls_at_last_start,
        )

    def keeps_all(self, max_turns: int | None, max_tool_calls: int | None) -> bool:
        """True when :meth:`UnitAnalysis.history_cut` with only these caps is ``(0, True)``:
        ``turns_kept(0) <= max_turns`` and ``calls_kept(0) <= max_tool_calls``."""
        if self.starts:
            turns = self.starts - 1 + (0 if self.first_is_start else 1)
            calls = self.calls_at_last_start
        else:
            turns = 1 if self.entries else 0
            calls = self.calls
        if max_turns is not None and turns > max_turns:
            return False
        return max_tool_calls is None or calls <= max_tool_calls


class UnitAnalysis(msgspec.Struct, frozen=True):
    """Unit structure of a list of ``n`` entries.

    * ``safe[k]`` for ``k`` in ``0..n``: cutting before entry ``k`` splits no group;
    * ``limit``: history windows cut at most here (newest user message or earliest open group);
    * ``turn_start``: index of the newest user message (``n`` when there is none);
    * ``turn_starts``: indexes of every user message that starts a turn, increasing;
    * ``suffix_tokens[k]``: tokens of ``entries[k:]``;
    * ``units_from[k]``: number of whole units in ``entries[k:]`` (valid at safe ``k``);
    * ``unit_of[i]``: index of the unit of entry ``i`` (units ordered by first entry);
    * ``units[u]``: entry indexes of unit ``u``, increasing;
    * ``unit_tokens[u]``: tokens of unit ``u``;
    * ``protected[u]``: unit ``u`` is protected (newest user message or open group);
    * ``removable``: unprotected unit indexes in removal order (oldest first);
    * ``removed_tokens[j]`` / ``removed_entries[j]``: tokens / entries of the first ``j``
      removable units;
    * ``calls_before[k]``: ``tool_use`` blocks in ``entries[:k]``;
    * ``open_groups``: ids of open groups;
    * ``held_entries[k]`` / ``held_units[k]`` / ``held_calls[k]``: entries, units (by first
      entry) and ``tool_use`` blocks before ``k`` of running jobs' open groups, which a cut at
      ``k`` keeps: history windows count them (they are never the ones cut).
    """

    safe: tuple[bool, ...]
    limit: int
    turn_start: int
    turn_starts: tuple[int, ...]
    suffix_tokens: tuple[int, ...]
    units_from: tuple[int, ...]
    unit_of: tuple[int, ...]
    units: tuple[tuple[int, ...], ...]
    unit_tokens: tuple[int, ...]
    protected: tuple[bool, ...]
    removable: tuple[int, ...]
    removed_tokens: tuple[int, ...]
    removed_entries: tuple[int, ...]
    calls_before: tuple[int, ...]
    open_groups: tuple[str, ...]
    held_entries: tuple[int, ...] = ()
    held_units: tuple[int, ...] = ()
    held_calls: tuple[int, ...] = ()

    @property
    def size(self) -> int:
        """Number of entries analysed."""
        return len(self.safe) - 1

    @property
    def total_tokens(self) -> int:
        """Tokens of all entries."""
        return self.suffix_tokens[0]

    # ----- removal order ------------------------------------------------------------------
    @property
    def removable_count(self) -> int:
        """Number of units that may be removed (the length of the removal order)."""
        return len(self.removable)

    def is_protected(self, index: int) -> bool:
        """True when entry ``index`` belongs to a protected unit."""
        return self.protected[self.unit_of[index]]

    def removal(self, j: int) -> list[int]:
        """Entry indexes (increasing) of the first ``j`` units of the removal order."""
        out: list[int] = []
        for u in self.removable[: max(0, j)]:
            out.extend(self.units[u])
        out.sort()
        return out

    def fewest_removals(
        self,
        *,
        max_tokens: int | None = None,
        max_entries: int | None = None,
        max_units: int | None = None,
        min_removals: int = 0,
    ) -> int | None:
        """Smallest ``j >= min_removals`` such that, after removing the first ``j`` units of the
        removal order, the kept tokens are ``<= max_tokens``, the kept entries
        ``<= max_entries`` and the kept units ``<= max_units``. ``None`` when even removing every
        removable unit does not meet the caps."""
        n, total, units = self.size, self.total_tokens, len(self.units)
        for j in range(max(0, min_removals), len(self.removable) + 1):
            if max_tokens is not None and total - self.removed_tokens[j] > max_tokens:
                continue
            if max_entries is not None and n - self.removed_entries[j] > max_entries:
                continue
            if max_units is not None and units - j > max_units:
                continue
            return j
        return None

    def units_before(self, cut: int) -> int:
        """Removable units whose first entry is before ``cut``: at a safe ``cut <= limit``,
        removing that many units of the removal order removes exactly ``entries[:cut]``."""
        return sum(1 for u in self.removable if self.units[u][0] < cut)

    # ----- history windows (suffix cuts) --------------------------------------------------
    def largest_cut(self, upto: int | None = None) -> int:
        """Largest safe cut ``<= min(upto, limit)`` (0 when nothing may go)."""
        top = self.limit if upto is None else min(upto, self.limit)
        for k in range(top, -1, -1):
            if self.safe[k]:
                return k
        return 0

    def turns_kept(self, cut: int) -> int:
        """Earlier turns (before ``turn_start``) that keep at least one entry after ``cut``;
        entries before the first user message count as one turn."""
        if cut >= self.turn_start:
            return 0
        starts = self.turn_starts
        lo = bisect.bisect_left(starts, cut)
        hi = bisect.bisect_left(starts, self.turn_start)
        inside = 0 if lo < len(starts) and starts[lo] == cut else 1
        return hi - lo + inside

    def calls_kept(self, cut: int) -> int:
        """``tool_use`` blocks of earlier turns kept by ``cut`` (``entries[cut:turn_start]``
        and the running jobs' calls before it)."""
        # a running job's call before the cut stays (its count at the cut's position)
        held = self.held_calls[min(cut, self.turn_start)] if self.held_calls else 0
        if cut >= self.turn_start:
            return held
        return self.calls_before[self.turn_start] - self.calls_before[cut] + held

    def kept_entries(self, cut: int) -> int:
        """Entries a cut at ``cut`` keeps: ``entries[cut:]`` and the running jobs' entries
        before it."""
        return self.size - cut + (self.held_entries[cut] if self.held_entries else 0)

    def kept_units(self, cut: int) -> int:
        """Units a cut at safe ``cut`` keeps, the running jobs' groups included."""
        return self.units_from[cut] + (self.held_units[cut] if self.held_units else 0)

    def history_cut(self, caps: HistoryCaps) -> tuple[int, bool]:
        """The history window of ``caps``: the smallest safe cut ``k <= limit`` that meets every
        cap (so as much as possible is kept), and whether the caps are met.

        With ``max_turns`` the window starts on a user message (the cut is moved forward to
        the next turn start that is a safe cut, or to ``limit``). When no cut meets the caps
        (only the current turn and open groups are left) the result is the largest allowed
        cut and ``False``.
        """
        if caps.empty:
            return 0, True
        starts = set(self.turn_starts)
        chosen: int | None = None
        for k in range(self.limit + 1):
            if not self.safe[k]:
                continue
            if caps.max_turns is not None and not (k in starts or k == 0 or k == self.limit):
                continue
            if caps.max_entries is not None and self.kept_entries(k) > caps.max_entries:
                continue
            if caps.max_units is not None and self.kept_units(k) > caps.max_units:
                continue
            if caps.max_turns is not None and self.turns_kept(k) > caps.max_turns:
                continue
            if caps.max_tool_calls is not None and self.calls_kept(k) > caps.max_tool_calls:
                continue
            chosen = k
            break
        if chosen is None:
            return self.largest_cut(), False
        return chosen, True


def _reports_progress(group: TurnGroup, entries: Sequence[Entry]) -> bool:
    """Whether ``group`` is open and holds a progress report (``ToolResult(final=False)``):
    a running background job, whose call and reports stay while history windows cut
    around them."""
    return group.open and any(
        isinstance(b, ToolResult) and not b.is_final
        for m in group.members[1:]
        for b in entries[m].blocks
    )


def appended_grouping(prior: Grouping, entries: Sequence[Entry]) -> Grouping:
    """:func:`regio.content.group_entries` of ``entries`` when ``prior`` is the grouping of
    its first ``len(prior.assignment)`` entries (the rest appended since). Only the entries
    from the first member of ``prior``'s first open group on (the appended ones when none is
    open: a tool loop's window whose last call is answered) are grouped again, when nothing
    in them can reach back: ``prior`` has no orphaned result, no group before that point
    reaches past it, and the entries grouped again make no call of an id made before it and
    answer no call made before it. Then the grouping is ``prior``'s groups before that point
    followed by the regrouped entries' (indexes shifted). Anything else groups all of
    ``entries`` again. O(regrouped + groups)."""
    k = len(prior.assignment)
    if k == 0 or k > len(entries) or prior.orphan_results:
        return group_entries(entries)
    open_ids = set(prior.open_groups)
    cut = min((g.members[0] for g in prior.groups if g.id in open_ids), default=k)
    kept = [g for g in prior.groups if g.members[0] < cut]
    if any(g.members[-1] >= cut for g in kept):
        return group_entries(entries)
    tail = group_entries(entries[cut:])
    made = {c for g in kept for c in g.call_ids}
    if tail.orphan_results or any(c in made for g in tail.groups for c in g.call_ids):
        return group_entries(entries)
    moved = tuple(
        msgspec.structs.replace(g, members=tuple(m + cut for m in g.members)) for g in tail.groups
    )
    return Grouping(
        groups=(*kept, *moved),
        assignment=prior.assignment[:cut] + tuple(a + len(kept) for a in tail.assignment),
        open_groups=tail.open_groups,
        orphan_results=(),
    )


def analyze(
    entries: Sequence[Entry],
    *,
    protect_current_turn: bool = True,
    also_protect: Collection[int] = (),
    grouping: Grouping | None = None,
) -> UnitAnalysis:
    """Analyse ``entries`` into units. O(n + calls).

    With ``protect_current_turn`` the newest :func:`is_user_turn_start` entry is protected and
    history windows keep the current turn whole (``limit``). Open groups are always protected.
    ``also_protect``: entry indexes whose units are protected too (a region planning a write
    protects the entry being written); ``grouping``: ``group_entries(entries)``, if known."""
    n = len(entries)
    grouping = group_entries(entries) if grouping is None else grouping
    groups = grouping.groups
    last_member = [0] * n
    first_member = [0] * n
    running = [_reports_progress(group, entries) for group in groups]
    for u, group in enumerate(groups):
        lo, hi = group.members[0], group.members[-1]
        for m in group.members:
            # a running job's open group is kept whole wherever a cut falls: it blocks none
            last_member[m] = m if running[u] else hi
            first_member[m] = lo
    safe = [True] * (n + 1)
    reach = -1
    for k in range(1, n + 1):
        reach = max(reach, last_member[k - 1])
        safe[k] = reach < k
    turn_starts = tuple(i for i, e in enumerate(entries) if is_user_turn_start(e))
    turn_start = turn_starts[-1] if (turn_starts and protect_current_turn) else n
    protected = [g.open for g in groups]
    if turn_start < n:
        protected[grouping.assignment[turn_start]] = True
    for i in also_protect:
        if 0 <= i < n:
            protected[grouping.assignment[i]] = True
    limit = turn_start
    for u, group in enumerate(groups):
        if protected[u] and not running[u]:
            limit = min(limit, group.members[0])
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + entries[i].tokens
    units_from = [0] * (n + 1)
    seen: set[int] = set()
    for i in range(n - 1, -1, -1):
        # a unit is counted at its first member, so units_from[k] is exact at safe cuts
        if first_member[i] == i:
            seen.add(grouping.assignment[i])
        units_from[i] = len(seen)
    unit_tokens = tuple(sum(entries[m].tokens for m in g.members) for g in groups)
    removable = tuple(u for u in range(len(groups)) if not protected[u])
    removed_tokens = [0]
    removed_entries = [0]
    for u in removable:
        removed_tokens.append(removed_tokens[-1] + unit_tokens[u])
        removed_entries.append(removed_entries[-1] + len(groups[u].members))
    calls, held_entries, held_units, held_calls = _prefix_counts(entries, groups, running)
    return UnitAnalysis(
        safe=tuple(safe),
        limit=limit,
        turn_start=turn_start,
        turn_starts=turn_starts,
        suffix_tokens=tuple(suffix),
        units_from=tuple(units_from),
        unit_of=tuple(grouping.assignment),
        units=tuple(tuple(g.members) for g in groups),
        unit_tokens=unit_tokens,
        protected=tuple(protected),
        removable=removable,
        removed_tokens=tuple(removed_tokens),
        removed_entries=tuple(removed_entries),
        calls_before=calls,
        open_groups=grouping.open_groups,
        held_entries=held_entries,
        held_units=held_units,
        held_calls=held_calls,
    )


def _prefix_counts(
    entries: Sequence[Entry], groups: Sequence[TurnGroup], running: Sequence[bool]
) -> tuple[tuple[int, ...], ...]:
    """Per cut ``k``: ``tool_use`` blocks before ``k``, and the entries, units (by first
    entry) and ``tool_use`` blocks before ``k`` of the running groups."""
    n = len(entries)
    held = [False] * n
    firsts = [False] * n
    for u, group in enumerate(groups):
        if running[u]:
            firsts[group.members[0]] = True
            for m in group.members:
                held[m] = True
    out = [[0] * (n + 1) for _ in range(4)]
    calls, h_entries, h_units, h_calls = out
    for i, e in enumerate(entries):
        c = sum(1 for b in e.blocks if isinstance(b, ToolUse))
        calls[i + 1] = calls[i] + c
        h_entries[i + 1] = h_entries[i] + held[i]
        h_units[i + 1] = h_units[i] + firsts[i]
        h_calls[i + 1] = h_calls[i] + (c if held[i] else 0)
    return tuple(tuple(x) for x in out)
