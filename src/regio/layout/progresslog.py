"""Progress reports in the render log: the call's bytes stay, the report moves to the tail.

A call whose latest result is a progress report (``ToolResult(final=False)``) is rendered with
the fixed :data:`regio.layout.repair.RUNNING_RESULT` in its ``tool`` message right after the
calling assistant message (the *shell*), and the report itself as a ``user`` message of its own
where it was added (:func:`regio.layout.repair.report_message`), usually near the end. A newer
report leaves the shell as it is: the window takes the superseded report's entry out
(:mod:`regio.regions.superseded`) and :func:`drop_removed_reports` takes its message out of the
:class:`regio.layout.renderlog.RenderLog` (re-chaining the prefix hashes of the messages after
it, usually none or one turn), and the new report is repaired with the newest turn. The final
result changes the shell once (:func:`show_latest`: one re-chain from the call on, at
completion). Two shapes around the superseded report follow too: an entry that held it beside
other blocks (the results of parallel calls) is rewritten by the window without it, and the
log replaces the entry and gives the blocks it kept their token shares in the new entry
(:func:`retoken`); and the messages before and after the report's message merge when they
would in a full repair (same role: a report between two user texts). The bytes are those of a
full render (the render-log property tests compare them).

Anything else (a result for a call the front took as missing, a result after a final one, an
entry otherwise rewritten, a removed report a note is anchored to) still resets the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from regio.callids import ID_ACTIONS
from regio.content import Block, Entry, Text, ToolResult

from .events import LayoutEvent, OrphanResultDropped, Repaired
from .model import LayoutBlock, chain_hash
from .protocols import RenderLogSurface
from .repair import (
    PENDING_RESULT,
    REPORT,
    RUNNING_RESULT,
    START_MESSAGE,
    BlockInfo,
    PMessage,
    ProgressCall,
    RepairFront,
    StaleFront,
)

__all__ = ["drop_removed_reports", "retoken", "show_latest"]

Late = dict[str, tuple[ToolResult, BlockInfo | None, int, str]]


def _committed_report(b: Block, entry_id: str, progress: dict[str, ProgressCall]) -> bool:
    """Whether ``b`` is a progress report of a tracked call whose committed latest result is
    in entry ``entry_id``."""
    if not isinstance(b, ToolResult) or b.is_final:
        return False
    pc = progress.get(b.tool_use_id)
    return pc is not None and pc.committed is not None and pc.committed[3] == entry_id


def _removed_report(entry: Entry, progress: dict[str, ProgressCall]) -> bool:
    """Whether ``entry`` holds only the committed latest reports of tracked calls."""
    return bool(entry.blocks) and all(
        _committed_report(b, entry.id, progress) for b in entry.blocks
    )


def _lost_reports(old: Entry, new: Entry, progress: dict[str, ProgressCall]) -> list[str]:
    """The calls whose reports ``new`` lost, when it is ``old`` (the same entry, rewritten in
    place by :func:`regio.regions.superseded.drop_superseded_progress`) without some of the
    committed latest reports of tracked calls, its other blocks the same objects in the same
    order and one of them kept by the repair (not an empty text); else an empty list."""
    if (new.id, new.role, new.key, new.turn, new.group) != (
        old.id,
        old.role,
        old.key,
        old.turn,
        old.group,
    ) or not any(not (isinstance(b, Text) and not b.text) for b in new.blocks):
        return []
    kept = iter(new.blocks)
    upcoming = next(kept, None)
    lost: list[str] = []
    for b in old.blocks:
        if b is upcoming:
            upcoming = next(kept, None)
        elif _committed_report(b, old.id, progress):
            lost.append(b.tool_use_id)  # type: ignore[union-attr]
        else:
            return []
    return lost if upcoming is None else []


def _removed(
    log: RenderLogSurface, conversation: Sequence[Entry], start: int
) -> tuple[list[int], dict[int, tuple[Entry, list[str]]]] | None:
    """Positions (in ``log.entries``) of the consumed entries missing from ``conversation``,
    and of those rewritten without some reports (position -> the new entry, the calls of the
    reports it lost), when each holds only committed reports of tracked calls and the rest is
    in order; else ``None``."""
    entries: list[Entry] = log.entries
    removed: list[int] = []
    slimmed: dict[int, tuple[Entry, list[str]]] = {}
    progress = log.front.progress
    c = start
    for i in range(start, len(entries)):
        e = entries[i]
        new = conversation[c] if c < len(conversation) else None
        if new is e:
            c += 1
        elif new is not None and (lost := _lost_reports(e, new, progress)):
            slimmed[i] = (new, lost)
            c += 1
        elif _removed_report(e, progress) and e.id not in log.extras:
            removed.append(i)
        else:
            return None
    return removed, slimmed


def _shift(event: LayoutEvent, gone: int) -> LayoutEvent:
    if isinstance(event, Repaired | OrphanResultDropped) and event.message > gone:
        return msgspec.structs.replace(event, message=event.message - 1)
    return event


def drop_removed_reports(log: RenderLogSurface, conversation: Sequence[Entry], start: int) -> bool:
    """Take out of ``log`` the consumed entries that ``conversation`` no longer holds (from
    position ``start`` on), when each held only superseded progress reports the log
    committed, with their rendered report messages; their calls wait for the newer result
    (:func:`show_latest`). An entry rewritten without such reports (a report beside results
    of parallel calls) is replaced, its report messages taken out, and the blocks it kept
    get their token shares in the new entry later (``log.slimmed``, :func:`retoken`).
    Returns False for any other difference (the caller resets the log, which may be partly
    changed)."""
    if any(isinstance(ev, Repaired) and ev.action in ID_ACTIONS for ev in log.front.ev_names):
        return False  # the entries' call ids are not the front's: the caller starts over
    found = _removed(log, conversation, start)
    if found is None or not (found[0] or found[1]):
        return False
    removed, slimmed = found
    front = log.front
    # every block of a removed entry is a committed report (:func:`_removed_report`)
    gone_calls = [
        b.tool_use_id for i in removed for b in log.entries[i].blocks if isinstance(b, ToolResult)
    ]
    calls = list(dict.fromkeys([*gone_calls, *(c for _, lost in slimmed.values() for c in lost)]))
    if any(isinstance(ev, Repaired) and ev.tool_use_id in calls for ev in front.ev_results):
        return False  # a duplicate of these calls was dropped before: the caller starts over
    gones: set[int] = set()
    for cid in dict.fromkeys(gone_calls):
        committed = front.progress[cid].committed
        assert committed is not None
        gones.add(committed[2])
    if _may_meet_its_call(front, gones):
        return False
    for cid in calls:
        if not _unrender(log, cid):
            return False
        front.progress[cid].committed = None
    for gone in sorted(gones, reverse=True):
        _shift_front(front, gone)
    front.inputs -= len(removed)
    front.cleaned -= len(gones)
    for i, (new, _) in slimmed.items():
        log.slimmed.append((log.entries[i], new))
        log.entries[i] = new
    drop = set(removed)
    log.entries = [e for i, e in enumerate(log.entries) if i not in drop]
    log.entry_index = {e.id: i for i, e in enumerate(log.entries)}
    return True


def _shift_front(front: RepairFront, gone: int) -> None:
    """The front's cleaned indexes once cleaned message ``gone`` is taken out."""
    for events in (front.ev_names, front.ev_dedup, front.ev_results, front.ev_place):
        events[:] = [_shift(ev, gone) for ev in events]
    for pc in front.progress.values():
        pc.call_i -= pc.call_i > gone
        if pc.committed is not None and pc.committed[2] > gone:
            pc.committed = (*pc.committed[:2], pc.committed[2] - 1, pc.committed[3])
        if pc.shown is not None and pc.shown[2] > gone:
            pc.shown = (*pc.shown[:2], pc.shown[2] - 1)


def retoken(log: RenderLogSurface, split: Callable[[Entry], list[int]]) -> None:
    """Give the blocks that the entries rewritten without reports kept (``log.slimmed``:
    ``(old entry, new entry)``) their token shares in the new entry (``split``): the log's
    block and the running sums after it, or the front's carry. A block not rendered (a
    dropped result) has nothing to change."""
    want: list[tuple[Block, int]] = []
    for old, new in log.slimmed:
        was = iter(zip(old.blocks, split(old), strict=True))
        for b, n in zip(new.blocks, split(new), strict=True):
            share = next(m for a, m in was if a is b)  # the kept blocks are in order
            if share != n:
                want.append((b, n))
    log.slimmed.clear()
    for blk, n in want:
        carry = log.front.carry
        if carry is not None and any(b is blk for b in carry.blocks):
            pairs = [(b, (n, i[1] if i else None) if b is blk else i) for b, i in carry.pairs()]
            log.front.carry = carry.rebuilt(pairs)
            continue
        _retoken_block(log, blk, n)


def _retoken_block(log: RenderLogSurface, blk: Block, tokens: int) -> None:
    """The log's block of ``blk`` (searched from the end) counted ``tokens``: the running
    sums after it follow, and a rendered form keyed on it stays."""
    blocks: list[LayoutBlock] = log.blocks
    j = len(blocks) - 1
    while j >= 0 and blocks[j].block is not blk:
        j -= 1
    if j < 0:
        return
    old = blocks[j]
    blocks[j] = msgspec.structs.replace(old, tokens=tokens)
    delta = tokens - old.tokens
    cum = log.cum
    for k in range(j + 1, len(cum)):
        cum[k] += delta
    for units in log.rendered.values():
        unit = units.get(old.message or 0)
        if unit is not None and unit[0] is old:
            units[old.message or 0] = (blocks[j], *unit[1:])


def _may_meet_its_call(front: RepairFront, gones: set[int]) -> bool:
    """Whether a final result the front moved (``moved_results``) sits right after a removed
    report: it may come next to its call, and lose the event a fresh repair would not emit
    (its call's index is not kept; the caller starts over)."""
    return any(
        isinstance(ev, Repaired)
        and ev.action == "moved_results"
        and ev.tool_use_id not in front.progress
        and ev.message - 1 in gones
        for ev in front.ev_place
    )


def _mergeable(a: LayoutBlock, b: LayoutBlock | PMessage) -> bool:
    """Rule 5 of :mod:`regio.layout.repair` for the message of ``a`` followed by the message
    of ``b`` (no message of the render log is ``separate``): same role, and neither is a
    frozen tail copy, a progress report or the conversation-start message."""
    return a.role == b.role and not {a.origin, b.origin} & {"frozen", "progress", "synthetic"}


def _merge_events(front: RepairFront, report: int, merge: bool) -> None:
    """The front's merge events once the report message at merged index ``report`` is gone:
    a later index is one less; with ``merge`` (the messages around the report merged) two
    less, after a new merge event at ``report`` (the events are in order of their index)."""
    out: list[LayoutEvent] = []
    insert = merge
    for ev in front.ev_merge:
        if isinstance(ev, Repaired) and ev.message > report:
            if insert:
                out.append(Repaired("merged", "", report))
                insert = False
            ev = msgspec.structs.replace(ev, message=ev.message - (2 if merge else 1))
        out.append(ev)
    if insert:
        out.append(Repaired("merged", "", report))
    front.ev_merge[:] = out


def _unrender(log: RenderLogSurface, cid: str) -> bool:
    """Take the rendered report message of call ``cid`` out of the log (the front's carry or
    its final blocks); the messages around it merge when a full repair merges them (the one
    after it may be the front's carry). False when the report is not there."""
    front = log.front
    source = REPORT + cid
    carry = front.carry
    if carry is not None and carry.source == source:
        front.carry = _unfinalize(log)
        return True
    blocks: list[LayoutBlock] = log.blocks
    e = len(blocks)
    while e and blocks[e - 1].source != source:
        e -= 1
    if not e:
        return False
    s = e
    while s and blocks[s - 1].source == source:
        s -= 1
    before = blocks[s - 1] if s else None
    after = blocks[e] if e < len(blocks) else None
    report = (blocks[s].message or 0) - (log.messages - front.merged)
    merge = before is not None and after is not None and _mergeable(before, after)
    _rechain(log, s, e, before if merge else None)
    front.merged -= 2 if merge else 1
    if before is not None and after is None and carry is not None and _mergeable(before, carry):
        last = _unfinalize(log)  # the message before the report absorbs the carry
        assert last is not None
        front.carry = last.rebuilt([*last.pairs(), *carry.pairs()])
        merge = True
    _merge_events(front, report, merge)
    return True


def _rechain(log: RenderLogSurface, s: int, e: int, merge: LayoutBlock | None = None) -> None:
    """Remove the message of the log's blocks ``[s:e)``: the later blocks get the prefix
    hashes, running sums and message indexes (one less) they have without it, and keep their
    rendered forms. With ``merge`` (the last block of the message before it) the message after
    it joins that message (its source and origin; the later messages two less)."""
    blocks: list[LayoutBlock] = log.blocks
    index = blocks[s].message or 0
    h = blocks[s - 1].prefix_hash if s else (log.root or "")
    for b in blocks[s:]:
        log.hashes.discard(b.prefix_hash)
    gone = 1 if merge is None else 2
    new: list[LayoutBlock] = []
    firsts: dict[int, LayoutBlock] = {}
    for b in blocks[e:]:
        h = chain_hash(h, b.digest)
        if merge is not None and b.message == index + 1:
            nb = msgspec.structs.replace(
                b, prefix_hash=h, message=index - 1, source=merge.source, origin=merge.origin
            )
        else:
            nb = msgspec.structs.replace(b, prefix_hash=h, message=(b.message or 0) - gone)
        new.append(nb)
        firsts.setdefault(nb.message or 0, nb)
    _splice(log, s, new)
    log.hashes.update(b.prefix_hash for b in new)
    last = log.messages
    log.messages -= gone
    first = index + 1 - gone  # the first message whose rendered form changes
    for units in log.rendered.values():
        moved = [(k, units.pop(k)) for k in range(first, last) if k in units]
        for k, v in moved:
            if k > index + gone - 1 and k - gone in firsts:
                units[k - gone] = (firsts[k - gone], *v[1:])


def _splice(log: RenderLogSurface, start: int, new: list[LayoutBlock]) -> None:
    """Put ``new`` in place of the log's blocks from ``start`` on, and their running token
    sums in place of the old ones."""
    log.blocks[start:] = new
    cum = log.cum
    del cum[start + 1 :]
    for b in new:
        cum.append(cum[-1] + b.tokens)


def _unfinalize(log: RenderLogSurface) -> PMessage | None:
    """The log's last final message taken back out of its final blocks (it becomes the
    front's carry again, which may absorb the next message); ``None`` when there is none."""
    blocks: list[LayoutBlock] = log.blocks
    if not log.messages or not blocks or blocks[-1].source == START_MESSAGE.source:
        return None
    index = log.messages - 1
    s = len(blocks)
    while s and (blocks[s - 1].message or 0) == index:
        s -= 1
    old = blocks[s:]
    message = PMessage(
        old[0].role,  # type: ignore[arg-type]
        tuple(b.block for b in old),  # type: ignore[misc]
        old[0].source,
        origin=old[0].origin,
        info=tuple((b.tokens, b.region) for b in old),
    )
    _rechain(log, s, len(blocks))
    log.front.merged -= 1
    return message


def show_latest(
    log: RenderLogSurface, late: Late, count_block: Callable[[Block], int], *, complete: bool
) -> None:
    """Make the log's shells show what a full repair shows for each tracked call:
    :data:`regio.layout.repair.RUNNING_RESULT` while its latest result (``late``, a repair
    run's, or else the committed one) is a progress report, the final result once it
    arrives. With ``complete`` (the last run of a request), a tracked call left with no
    result raises :class:`StaleFront` (the caller resets)."""
    for cid, pc in list(log.front.progress.items()):
        found = late.get(cid)
        if found is None and pc.committed is None:
            if complete:
                raise StaleFront(cid)
            continue
        want = found[:3] if found is not None and found[0].is_final else None
        _place_event(log.front, cid, pc, want[2] if want is not None else None)
        if want is None and pc.shown is None:
            continue
        if (
            want is not None
            and pc.shown is not None
            and (pc.shown[0] is want[0] and pc.shown[2] == want[2])
        ):
            continue
        if want is None:
            _reshell(log, cid, pc, ToolResult(cid, RUNNING_RESULT), None, count_block)
        else:
            _reshell(log, cid, pc, want[0], want[1], count_block)
        pc.shown = want


def _place_event(front: RepairFront, cid: str, pc: ProgressCall, at: int | None) -> None:
    """The call's ``moved_results`` event for its final result at cleaned index ``at`` (none
    while ``at`` is ``None``, the shell showing :data:`RUNNING_RESULT`)."""
    events: list[LayoutEvent] = front.ev_place
    wanted = at is not None and at != pc.call_i + 1
    if pc.has_ev and wanted:
        events[pc.ev_at] = Repaired("moved_results", cid, at or 0)
        return
    if not pc.has_ev and not wanted:
        return
    if pc.has_ev:
        del events[pc.ev_at]
    else:
        events.insert(pc.ev_at, Repaired("moved_results", cid, at or 0))
    delta = 1 if wanted else -1
    for other in front.progress.values():
        if other is pc:
            continue
        if other.ev_at > pc.ev_at or (
            other.ev_at == pc.ev_at and (other.call_i, other.order) > (pc.call_i, pc.order)
        ):
            other.ev_at += delta
    pc.has_ev = wanted


def _shell(message: PMessage, cid: str, result: ToolResult, info: BlockInfo | None) -> PMessage:
    """The shell ``message`` with ``result`` for call ``cid`` (tag and source follow)."""
    pairs = [
        (result, info) if isinstance(b, ToolResult) and b.tool_use_id == cid else (b, n)
        for b, n in message.pairs()
    ]
    pending = any(isinstance(b, ToolResult) and b.content == PENDING_RESULT for b, _ in pairs)
    tag = "pending" if pending else "results"
    first = message.source.partition(":")[2]
    return msgspec.structs.replace(message.rebuilt(pairs), source=f"{tag}:{first}", origin=tag)


def _is_shell(source: str, first: str) -> bool:
    return source in (f"pending:{first}", f"results:{first}")


def _reshell(
    log: RenderLogSurface,
    cid: str,
    pc: ProgressCall,
    result: ToolResult,
    info: BlockInfo | None,
    count_block: Callable[[Block], int],
) -> None:
    """Put ``result`` into the call's shell: the front's carry, or the log's final blocks
    (re-chaining the prefix hashes after it and keeping the rendered forms of the later
    messages)."""
    carry = log.front.carry
    if carry is not None and _is_shell(carry.source, pc.first):
        log.front.carry = _shell(carry, cid, result, info)
        return
    blocks: list[LayoutBlock] = log.blocks
    end = len(blocks)
    while end and not _is_shell(blocks[end - 1].source, pc.first):
        end -= 1
    if not end:
        raise StaleFront(cid)
    start = end
    while start and blocks[start - 1].source == blocks[end - 1].source:
        start -= 1
    old = blocks[start:end]
    m = old[0].message or 0
    message = PMessage(
        "tool",
        tuple(b.block for b in old),  # type: ignore[misc]
        old[0].source,
        origin=old[0].origin,
        info=tuple((b.tokens, b.region) for b in old),
    )
    h = blocks[start - 1].prefix_hash if start else (log.root or "")
    new = log._layout_blocks([_shell(message, cid, result, info)], m, h, count_block)
    firsts: dict[int, LayoutBlock] = {}
    h = new[-1].prefix_hash
    for b in blocks[end:]:
        h = chain_hash(h, b.digest)
        nb = msgspec.structs.replace(b, prefix_hash=h)
        new.append(nb)
        firsts.setdefault(nb.message or 0, nb)
    _splice(log, start, new)
    log.hashes = {b.prefix_hash for b in blocks}
    for api, units in log.rendered.items():
        log.rendered[api] = {
            k: (firsts[k], *v[1:]) if k > m else v
            for k, v in units.items()
            if k < m - 1 or (k > m and k in firsts)
        }
