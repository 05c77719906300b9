"""The window's index of tool calls: call id -> the group of the assistant message that made
the call and its ``tool_use`` block, one :class:`CallRecord` per call, so the group and the
block can never disagree (there is one map, not two kept in step).

The index is bounded by the window, not by the calls ever made: :meth:`CallIndex.prune` drops
the calls whose group has no entry left in any region (evicted, compacted, released,
cleared); it is skipped while every region was only appended to since the last pass, or had
entries replaced by entries of the same group (the relief edits). The
index is never saved apart from the call -> group map (``WindowState.call_groups``); a loaded
window finds the ``tool_use`` blocks again in its entries (:meth:`CallIndex.restore`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from regio.content import Entry, ToolUse
from regio.regions.entrylist import EntryMark, appended_since, entry_mark, replaced_since

__all__ = ["CallGroups", "CallIndex", "CallRecord"]


@attrs.frozen
class CallRecord:
    """One tool call of the window: ``group`` (``g:<id>``, the group of the assistant message
    that made it) and its ``tool_use`` block (``None`` when a loaded window's entries no
    longer hold it)."""

    group: str
    tool_use: ToolUse | None


class CallGroups(Mapping[str, str]):
    """A read-only view of a :class:`CallIndex`: call id -> group id (O(1) per lookup)."""

    __slots__ = ("_records",)

    def __init__(self, records: Mapping[str, CallRecord]) -> None:
        self._records = records

    def __getitem__(self, call_id: str) -> str:
        return self._records[call_id].group

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)


@attrs.define(eq=False)
class CallIndex:
    """The calls of one window (see module docstring). State of the session that owns the
    window; ``records`` is call id -> :class:`CallRecord`, oldest call first;
    ``full_passes``: the prunes that read every entry."""

    records: dict[str, CallRecord] = attrs.field(factory=dict)
    full_passes: int = 0
    #: (version, entry count) per region at the last prune, and the calls kept then
    #: each region's entry-list mark at the last full pass
    _seen: tuple[EntryMark | None, ...] = ()
    _kept: int = 0

    @property
    def groups(self) -> CallGroups:
        """Call id -> group id (a read-only view)."""
        return CallGroups(self.records)

    def add(self, call: ToolUse, group: str) -> None:
        """Record ``call`` (made by an assistant message of ``group``). A call id already
        recorded keeps its group and block; a record without a block takes ``call``'s."""
        found = self.records.get(call.id)
        if found is None:
            self.records[call.id] = CallRecord(group, call)
        elif found.tool_use is None:
            self.records[call.id] = CallRecord(found.group, call)

    def outgrown(self) -> bool:
        """Whether the index holds more than twice the calls kept at the last prune, plus 64
        (calls whose results never came): time to prune."""
        return len(self.records) > 2 * self._kept + 64

    def prune(self, regions: Sequence[Any]) -> None:
        """Drop the calls whose group has no entry left in ``regions``; skipped while every
        region was only appended to since the last pass (O(regions)), or had entries replaced
        in place by entries of the same group (a relief edit; O(replacements):
        :func:`regio.regions.entrylist.replaced_since`): then no recorded group can have
        left. Any other change (an eviction, a compaction, a replacement by another group)
        makes a full pass."""
        marks = self._seen
        if len(marks) == len(regions):
            pairs = list(zip(regions, marks, strict=True))
            if all(appended_since(r.entries, m) is not None for r, m in pairs):
                return  # the common case, O(regions)
            kept = [_groups_kept(r.entries, m) for r, m in pairs]
            if all(k is not None for k in kept):
                if any(kept):  # the marks move past the replacements, so none is read twice
                    self._seen = tuple(entry_mark(r.entries) for r in regions)
                return
        self.full_passes += 1
        live = {e.group for r in regions for e in r.entries if e.group is not None}
        self.records = {c: rec for c, rec in self.records.items() if rec.group in live}
        self._seen = tuple(entry_mark(r.entries) for r in regions)
        self._kept = len(self.records)

    def restore(self, call_groups: Mapping[str, str], regions: Sequence[Any]) -> None:
        """Load the saved call -> group map and find each call's ``tool_use`` block in the
        entries of ``regions`` (oldest first: the first block with an id is the one grouped);
        O(blocks)."""
        self.records = {c: CallRecord(g, None) for c, g in call_groups.items()}
        for r in regions:
            for e in r.entries:
                for b in e.blocks:
                    if isinstance(b, ToolUse):
                        found = self.records.get(b.id)
                        if found is not None and found.tool_use is None:
                            self.records[b.id] = CallRecord(found.group, b)
        self._seen, self._kept = (), 0


def _groups_kept(entries: Sequence[Entry], mark: EntryMark | None) -> bool | None:
    """Whether ``entries`` had entries replaced since ``mark`` (``False``: only appended to),
    each by an entry of the group it replaced (then every group there at the mark still is);
    ``None`` when it changed otherwise, or a replacement changed the group."""
    replaced = replaced_since(entries, mark)
    if replaced is None:
        return None
    if any(g is not None and entries[at].group != g for at, g in replaced):
        return None
    return bool(replaced)
