"""``Engine.repair``: make an engine's conversation a valid history, in place.

The rules are :func:`regio.engine._history.repair_history`'s (themselves the render-time
repair's, :mod:`regio.layout.repair`), applied to the conversation region's entries:

* a call with no result gets a result entry right after the entry that made it: when the
  session's transcript holds a result of the call (an old compaction took the result and left
  the call: the summary lost its pairing), the result says so and how to get it back
  (``context_restore`` when the engine offers it, the transcript otherwise); when it holds none,
  :data:`regio.engine._history.INTERRUPTED_RESULT`, an error result the agent reads;
* a result whose call is not in the window (the call compacted or evicted without it, or never
  made) and an earlier result of a call that has a later one leave the window; a call in a
  message that is not the assistant's too; an entry left with nothing leaves whole;
* call ids are named by the one rule of :mod:`regio.callids` (the rule admission applies, so
  only a window admitted before it, or by another way, needs it): an id a provider refuses is
  mapped, a call id used again is renamed ``<id>-<n>`` with the results that answer it (the
  entry keeps the id it was made with in ``meta["call_ids"]``, :mod:`regio.session._callnames`).

Nothing leaves the transcript: the admitted messages stay as they were; the transcript gets a
``write`` record for each entry the repair wrote (a closing result, an entry rewritten without
a block) and a ``release`` record naming the entries it took out of the window. Results are not
moved and messages not merged in the window (each request places them,
:mod:`regio.layout.repair`). Each change is a
:class:`regio.engine._history.HistoryRepaired` event on the engine's bus, with its entry id.
The repair is idempotent, and a repaired conversation needs nothing from the render-time
repair but placement: no result synthesized or dropped.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import msgspec

from regio.callids import provider_id
from regio.content import Block, Entry, Text, ToolResult, ToolUse, split_weight
from regio.regions.entrylist import appended_since, entry_mark
from regio.session._callnames import META_KEY
from regio.session._session import Session
from regio.session._toolspecs import restore_offered

from ._history import HISTORY_ACTIONS, HistoryRepaired, PlainScan, interrupted, repair_history

__all__ = ["compacted_result", "repair_window"]

#: The changes the window takes (an empty text block or message stays: each request drops it).
_ACTIONS = HISTORY_ACTIONS - {"empty_dropped"}


def compacted_result(call: ToolUse, restorable: bool) -> ToolResult:
    """The result closing ``call`` whose own result an old compaction took from the window
    (it stays in the transcript): fixed text naming the call and how to bring it back."""
    how = (
        f'context_restore(call_id="{call.id}") brings it back'
        if restorable
        else "it is kept in the session transcript"
    )
    return ToolResult(
        call.id,
        f"[the result of this {call.name} call left the context when older messages were "
        f"compacted; {how}]",
    )


def _needs_repair(c: Session, entries: Sequence[Entry]) -> bool:
    """:func:`regio.engine._history.needs_repair` of the conversation ``entries``, reading
    only the entries appended since the last call (the session state carries the
    :class:`regio.engine._history.PlainScan` and where it stopped while the shape is plain)."""
    state = c.state
    carried = state.plain_scan if state is not None else None
    start = appended_since(entries, carried[0]) if carried is not None else None
    scan = carried[1] if carried is not None and start is not None else PlainScan()
    scan.extend(e.message for e in itertools.islice(entries, start or 0, None))
    if state is not None:
        state.plain_scan = None if scan.broken else (entry_mark(entries), scan)
    return scan.needs


def repair_window(c: Session) -> list[HistoryRepaired]:
    """Repair the conversation of ``c``'s window in place (module doc); returns the changes
    (also emitted on the window's bus). Nothing changes when the conversation is valid."""
    window = c.window
    conv = window.conversation
    if conv is None:
        return []
    if not _needs_repair(c, conv.entries):  # the usual case: nothing to repair
        return []
    entries = list(conv.entries)
    restorable = restore_offered(c.options.context_tools, c.options.relief)

    def closing(call: ToolUse) -> ToolResult:
        if c.transcript.result_record(call.id) is not None:
            return compacted_result(call, restorable)
        return interrupted(call)

    plan = repair_history([e.message for e in entries], closing=closing)
    if not any(ch.action in _ACTIONS for ch in plan.changes):
        return []
    renamed = _renamed_groups(entries, plan.kept)
    made_with: dict[int, dict[str, str]] = {}
    for ch in plan.changes:
        if ch.action == "call_renamed":
            made_with.setdefault(ch.message, {})[ch.detail] = provider_id(ch.tool_use_id)
    new: list[Entry] = []
    gone: list[str] = []
    written: list[Entry] = []
    closers = _closers(c, entries, plan.closed, plan.closed_at)
    for i, (entry, blocks) in enumerate(zip(entries, plan.kept, strict=True)):
        if blocks != entry.blocks:
            if not any(not (isinstance(b, Text) and not b.text) for b in blocks):
                gone.append(entry.id)
            else:
                group = _group_after(entry, blocks, renamed)
                meta = entry.meta
                if i in made_with:
                    meta = {**meta, META_KEY: {**meta.get(META_KEY, {}), **made_with[i]}}
                entry = msgspec.structs.replace(
                    entry, blocks=blocks, tokens=_share(entry, blocks), group=group, meta=meta
                )
                written.append(entry)
        if entry.id not in gone:
            new.append(entry)
        for closer in closers.get(i, ()):
            new.append(closer)
            written.append(closer)
    _apply(c, conv.name, new, renamed)
    if c.state is not None:
        c.state.call_names = None  # read again from the repaired entries
    changes = [
        msgspec.structs.replace(ch, entry=entries[ch.message].id if ch.message >= 0 else "")
        for ch in plan.changes
        if ch.action in _ACTIONS
    ]
    at = c.clock()
    for entry in written:
        c.transcript.add("write", conv.name, turn=window.turn, entry=entry, at=at)
    if gone:
        c.transcript.add("release", conv.name, turn=window.turn, ids=gone, at=at)
    for change in changes:
        window.events.emit(change)
    return changes


def _closers(
    c: Session,
    entries: list[Entry],
    closed: dict[str, ToolResult],
    closed_at: dict[str, int],
) -> dict[int, list[Entry]]:
    """The entries closing the calls without a result, by the index of the entry that made
    the call (each goes right after it, in call order), in the calling entry's group and turn."""
    out: dict[int, list[Entry]] = {}
    for cid, result in closed.items():
        i = closed_at[cid]
        caller = entries[i]
        entry = c.window.make_entry(
            (result,), role="tool", meta={"repaired": "closed"}, group=caller.group
        )
        out.setdefault(i, []).append(msgspec.structs.replace(entry, turn=caller.turn))
    return out


def _renamed_groups(entries: list[Entry], kept: list[tuple[Block, ...]]) -> dict[str, str]:
    """Renamed call id -> the group of the assistant entry that makes it: ``g:<its first call
    id>`` after the renames when its first call was renamed (it shared its group id with the
    earlier call's), else its group."""
    out: dict[str, str] = {}
    for entry, blocks in zip(entries, kept, strict=True):
        before = [b.id for b in entry.blocks if isinstance(b, ToolUse)]
        after = [b.id for b in blocks if isinstance(b, ToolUse)]
        if entry.role != "assistant" or before == after or not after:
            continue
        group = f"g:{after[0]}" if before[:1] != after[:1] else entry.group or f"g:{after[0]}"
        for old, new in zip(before, after, strict=False):
            if old != new:
                out[new] = group
    return out


def _group_after(entry: Entry, blocks: tuple[Block, ...], renamed: dict[str, str]) -> Any:
    """The group of ``entry`` rewritten as ``blocks``: that of a renamed call it makes or
    answers, else its own."""
    for b in blocks:
        cid = (
            b.id if isinstance(b, ToolUse) else b.tool_use_id if isinstance(b, ToolResult) else None
        )
        if cid is not None and cid in renamed:
            return renamed[cid]
    return entry.group


def _share(entry: Entry, blocks: tuple[Block, ...]) -> int:
    """``entry``'s measured tokens shared over the blocks it keeps (by
    :func:`regio.content.split_weight`; at least 1)."""
    total = sum(split_weight(b) for b in entry.blocks) or 1
    kept = sum(split_weight(b) for b in blocks)
    return max(1, round(entry.tokens * kept / total))


def _apply(c: Session, name: str, entries: list[Entry], renamed: dict[str, str]) -> None:
    """Put ``entries`` in region ``name`` through the window's own state restore (its call
    index, result and progress indexes rebuilt from them), the region's version bumped; a
    queued compaction marking an entry that changed or left is dropped (``compaction_failed``;
    the next flush queues what is due again)."""
    window = c.window
    state = window.snapshot_state()
    keep = {id(e) for e in entries}
    old = window.region(name).entries
    changed = {e.id for e in old if id(e) not in keep}
    regions = [
        msgspec.structs.replace(rs, entries=entries, version=rs.version + 1)
        if rs.name == name
        else rs
        for rs in state.regions
    ]
    calls = {**state.call_groups, **renamed}
    window.restore_state(msgspec.structs.replace(state, regions=regions, call_groups=calls))
    for p in window.pending_compactions():
        if changed & set(p.entry_ids):
            window.fail_compaction(p.id, "the history repair changed entries it marked")
