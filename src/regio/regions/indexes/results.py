"""Where each call's live result is: the window's index, per conversation region, from a call
id to the entries that hold its ``tool_result`` or ``tool_use`` blocks, so the newest live
result of a call (what ``context_restore`` compares with the original) is found in O(1)
however far back the call is, never by walking the conversation.

:class:`ResultIndex` maps each call id to the positions, increasing, of the entries of the
region that mention it (a result of the call or the call itself). It is brought up to date
when it is asked (:meth:`ResultIndex.newest_result`), from the entry list's mark
(:mod:`regio.regions.entrylist`):

* appended entries are indexed: O(appended);
* entries replaced in place since (a relief edit: clear, trim, dedupe; a partly superseded
  progress report) are indexed again at their position: O(replaced)
  (:func:`regio.regions.entrylist.replaced_since`); a position whose new entry no longer
  mentions a call stays listed and is skipped when read;
* any other change (entries removed: eviction, compaction, release, clear, reclaim, a
  dropped progress report; an insert; a loaded state; more replacements than the list
  keeps) rebuilds the index, O(entries), once, at the first lookup that the newest
  :data:`NEAR` entries do not answer (a recent call is answered from them, the walk the
  index replaces, cut short): the change itself already cost O(entries)
  (``Region.remove_ids`` builds a new list).

Nothing is done per turn: an index that is never asked costs nothing. State of the session
that owns the window (:meth:`regio.regions.window.Window.result_index`); never saved, rebuilt
from the entries on first use after a load.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from regio.content import Entry, ToolResult, ToolUse
from regio.regions.entrylist import EntryMark, entry_mark, replaced_since, unchanged

__all__ = ["NEAR", "ResultIndex", "newest_result_scan"]

#: the newest entries walked, before a rebuild, for a lookup the index cannot follow to
NEAR = 64


def _calls(entry: Entry) -> list[str]:
    """The call ids ``entry``'s blocks mention (results and calls; repeats kept)."""
    out = []
    for b in entry.blocks:
        if isinstance(b, ToolResult):
            out.append(b.tool_use_id)
        elif isinstance(b, ToolUse):
            out.append(b.id)
    return out


def _answer(entry: Entry, call_id: str) -> bool | None:
    """Read from ``entry``'s last block about ``call_id``: ``True`` a result (the entry is the
    answer), ``False`` the call itself (there is no result after it), ``None`` no such block
    (or a summary entry: the walk passes over those)."""
    if entry.meta.get("summary"):
        return None
    for b in reversed(entry.blocks):
        if isinstance(b, ToolResult) and b.tool_use_id == call_id:
            return True
        if isinstance(b, ToolUse) and b.id == call_id:
            return False
    return None


def newest_result_scan(entries: Sequence[Entry], call_id: str) -> Entry | None:
    """The reference walk (O(entries back to the call)): the newest entry of ``entries``, not
    a summary, holding a result of ``call_id`` after its last ``tool_use`` (blocks read from
    the last); ``None`` when the call comes first or neither is there."""
    for i in range(len(entries) - 1, -1, -1):
        found = _answer(entries[i], call_id)
        if found is not None:
            return entries[i] if found else None
    return None


def _walk_near(entries: Sequence[Entry], call_id: str) -> tuple[bool, Entry | None]:
    """:func:`newest_result_scan` over the newest :data:`NEAR` entries only: ``(True,
    answer)`` when it is decided there (or the list is no longer), else ``(False, None)``."""
    stop = max(-1, len(entries) - 1 - NEAR)
    for i in range(len(entries) - 1, stop, -1):
        found = _answer(entries[i], call_id)
        if found is not None:
            return True, entries[i] if found else None
    return stop == -1, None


@attrs.define(eq=False)
class ResultIndex:
    """Call id -> positions of the entries mentioning it, for one region (module docstring).

    ``holders[call_id]``: increasing positions in the entry list, a superset of the entries
    that mention the call now (every such entry is listed; a listed one may no longer);
    ``rebuilds``: the full passes made."""

    holders: dict[str, list[int]] = attrs.field(factory=dict)
    rebuilds: int = 0
    _seen: EntryMark | None = None

    def newest_result(self, entries: Sequence[Entry], call_id: str) -> Entry | None:
        """What :func:`newest_result_scan` answers on ``entries`` (the region's entry list).
        The index follows ``entries`` since the last look (module docstring); then the answer
        costs O(entries listed for ``call_id``), about two. When it cannot follow them (it
        would rebuild), the newest :data:`NEAR` entries are walked first: a call among them is
        answered without the rebuild, which the first call further back pays."""
        if not self._follow(entries):
            done, found = _walk_near(entries, call_id)
            if done:
                return found
            self.sync(entries)
        for at in reversed(self.holders.get(call_id, ())):
            answer = _answer(entries[at], call_id)
            if answer is not None:
                return entries[at] if answer else None
        return None

    def sync(self, entries: Sequence[Entry]) -> None:
        """Bring the index up to date with ``entries``: follow the appends and in-place
        replacements since the last look, or rebuild (O(entries); module docstring)."""
        if not self._follow(entries):
            self.holders = {}
            self.rebuilds += 1
            self._index(entries, 0)

    def _follow(self, entries: Sequence[Entry]) -> bool:
        """Index what was appended or replaced in place since the last look; ``False`` (and
        nothing done) when ``entries`` changed otherwise."""
        mark = self._seen
        if unchanged(entries, mark):
            return True  # the common case, O(1)
        replaced = replaced_since(entries, mark)
        if replaced is None or mark is None:
            return False
        for at, _ in replaced:
            if at < mark.length:
                self._relist(at, entries[at])
        self._index(entries, mark.length)
        return True

    def _index(self, entries: Sequence[Entry], start: int) -> None:
        """List the entries from position ``start`` on (appended since the last look)."""
        holders = self.holders
        for at in range(start, len(entries)):
            for b in entries[at].blocks:  # _calls inlined: a rebuild reads every block
                if isinstance(b, ToolResult):
                    cid = b.tool_use_id
                elif isinstance(b, ToolUse):
                    cid = b.id
                else:
                    continue
                listed = holders.get(cid)
                if listed is None:
                    holders[cid] = [at]
                elif listed[-1] != at:
                    listed.append(at)
        self._seen = entry_mark(entries)

    def _relist(self, at: int, entry: Entry) -> None:
        """List position ``at`` (replaced by ``entry``) for each call ``entry`` mentions."""
        for cid in _calls(entry):
            listed = self.holders.setdefault(cid, [])
            if at not in listed:
                listed.append(at)
                listed.sort()
