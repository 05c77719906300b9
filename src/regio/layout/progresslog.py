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
completion). The bytes are those of a full render (the render-log property tests compare them).

Anything else (a result for a call the front took as missing, a result after a final one, a
partly rewritten entry, a removed report whose neighbours would merge) still resets the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from regio.content import Block, Entry, ToolResult

from .events import LayoutEvent, OrphanResultDropped, Repaired
from .model import LayoutBlock, chain_hash
from .repair import (
    PENDING_RESULT,
    REPORT,
    RUNNING_RESULT,
    START_MESSAGE,
    BlockInfo,
    PMessage,
    ProgressCall,
    StaleFront,
)

__all__ = ["drop_removed_reports", "show_latest"]

Late = dict[str, tuple[ToolResult, BlockInfo | None, int, str]]


def _removed_report(entry: Entry, progress: dict[str, ProgressCall]) -> bool:
    """Whether ``entry`` holds only the committed latest reports of tracked calls."""
    for b in entry.blocks:
        if not isinstance(b, ToolResult) or b.is_final:
            return False
        pc = progress.get(b.tool_use_id)
        if pc is None or pc.committed is None or pc.committed[3] != entry.id:
            return False
    return bool(entry.blocks)


def _removed(log: Any, conversation: Sequence[Entry], start: int) -> list[int] | None:
    """Positions (in ``log.entries``) of the consumed entries missing from ``conversation``
    when all of them are removed reports and the rest is in order; else ``None``."""
    entries: list[Entry] = log.entries
    removed: list[int] = []
    c = start
    for i in range(start, len(entries)):
        e = entries[i]
        if c < len(conversation) and conversation[c] is e:
            c += 1
        elif _removed_report(e, log.front.progress) and e.id not in log.extras:
            removed.append(i)
        else:
            return None
    return removed


def _shift(event: LayoutEvent, gone: int) -> LayoutEvent:
    if isinstance(event, Repaired | OrphanResultDropped) and event.message > gone:
        return msgspec.structs.replace(event, message=event.message - 1)
    return event


def drop_removed_reports(log: Any, conversation: Sequence[Entry], start: int) -> bool:
    """Take out of ``log`` the consumed entries that ``conversation`` no longer holds (from
    position ``start`` on), when each held only superseded progress reports the log
    committed, with their rendered report messages; their calls wait for the newer result
    (:func:`show_latest`). Returns False for any other difference (the caller resets the log,
    which may be partly changed)."""
    removed = _removed(log, conversation, start)
    if not removed:
        return False
    front = log.front
    gones: list[int] = []
    calls = list(dict.fromkeys(b.tool_use_id for i in removed for b in log.entries[i].blocks))
    if any(isinstance(ev, Repaired) and ev.tool_use_id in calls for ev in front.ev_results):
        return False  # a duplicate of these calls was dropped before: the caller starts over
    for cid in calls:
        committed = front.progress[cid].committed
        assert committed is not None
        gones.append(committed[2])
    if _may_meet_its_call(front, set(gones)):
        return False
    for cid in calls:
        if not _unrender(log, cid):
            return False
        front.progress[cid].committed = None
    for gone in sorted(set(gones), reverse=True):
        for events in (front.ev_dedup, front.ev_results, front.ev_place):
            events[:] = [_shift(ev, gone) for ev in events]
        for pc in front.progress.values():
            pc.call_i -= pc.call_i > gone
            if pc.committed is not None and pc.committed[2] > gone:
                pc.committed = (*pc.committed[:2], pc.committed[2] - 1, pc.committed[3])
            if pc.shown is not None and pc.shown[2] > gone:
                pc.shown = (*pc.shown[:2], pc.shown[2] - 1)
    front.inputs -= len(removed)
    front.cleaned -= len(set(gones))
    drop = set(removed)
    log.entries = [e for i, e in enumerate(log.entries) if i not in drop]
    log.entry_index = {e.id: i for i, e in enumerate(log.entries)}
    return True


def _may_meet_its_call(front: Any, gones: set[int]) -> bool:
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


def _mergeable(a: LayoutBlock, b: LayoutBlock) -> bool:
    """Whether the messages of ``a`` and ``b`` may merge in a repair (conservative: same role
    and neither a frozen tail copy nor a progress report)."""
    return (
        a.role == b.role
        and "frozen" not in (a.origin, b.origin)
        and "progress"
        not in (
            a.origin,
            b.origin,
        )
    )


def _unrender(log: Any, cid: str) -> bool:
    """Take the rendered report message of call ``cid`` out of the log (the front's carry or
    its final blocks); False when it is not there or its neighbours would merge."""
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
    after = blocks[e] if e < len(blocks) else None
    if s and after is not None and _mergeable(blocks[s - 1], after):
        return False
    if s and after is None and carry is not None:
        last = blocks[s - 1]
        if last.role == carry.role and "frozen" not in (last.origin, carry.origin):
            return False
    index = blocks[s].message or 0
    merged_index = index - (log.messages - front.merged)
    _rechain(log, s, e)
    front.merged -= 1
    front.ev_merge[:] = [
        msgspec.structs.replace(ev, message=ev.message - 1)
        if isinstance(ev, Repaired) and ev.message > merged_index
        else ev
        for ev in front.ev_merge
    ]
    return True


def _rechain(log: Any, s: int, e: int) -> None:
    """Remove the message of the log's blocks ``[s:e)``: the later blocks get the prefix
    hashes, running sums and message indexes (one less) they have without it, and keep their
    rendered forms."""
    blocks: list[LayoutBlock] = log.blocks
    index = blocks[s].message or 0
    h = blocks[s - 1].prefix_hash if s else (log.root or "")
    for b in blocks[s:]:
        log.hashes.discard(b.prefix_hash)
    new: list[LayoutBlock] = []
    firsts: dict[int, LayoutBlock] = {}
    for b in blocks[e:]:
        h = chain_hash(h, b.digest)
        nb = msgspec.structs.replace(b, prefix_hash=h, message=(b.message or 0) - 1)
        new.append(nb)
        firsts.setdefault(nb.message or 0, nb)
    blocks[s:] = new
    cum = log.cum
    del cum[s + 1 :]
    for b in new:
        cum.append(cum[-1] + b.tokens)
        log.hashes.add(b.prefix_hash)
    last = log.messages
    log.messages -= 1
    for units in log.rendered.values():
        moved = [(k, units.pop(k)) for k in range(index, last) if k in units]
        for k, v in moved:
            if k > index and k - 1 in firsts:
                units[k - 1] = (firsts[k - 1], *v[1:])


def _unfinalize(log: Any) -> PMessage | None:
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
    log: Any, late: Late, count_block: Callable[[Block], int], *, complete: bool
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


def _place_event(front: Any, cid: str, pc: ProgressCall, at: int | None) -> None:
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
    log: Any,
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
    blocks[start:] = new
    cum = log.cum
    del cum[start + 1 :]
    for b in new:
        cum.append(cum[-1] + b.tokens)
    log.hashes = {b.prefix_hash for b in blocks}
    for api, units in log.rendered.items():
        log.rendered[api] = {
            k: (firsts[k], *v[1:]) if k > m else v
            for k, v in units.items()
            if k < m - 1 or (k > m and k in firsts)
        }
