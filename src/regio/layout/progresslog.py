"""Progress reports in the render log: a newer result replaces a report in place.

A call whose latest result is a progress report (``ToolResult(final=False)``) is rendered with
that report in its ``tool`` message right after the calling assistant message (the *shell*,
:func:`regio.layout.repair.repair`). When a newer report (or the final result) arrives, a full
repair differs from the log's repaired front in exactly three places: the shell's result
block, the call's ``moved_results`` event (the result's position), and — when the window
took the superseded report's entry out (:mod:`regio.regions.superseded`) — the positions of
everything after that entry. :func:`drop_removed_reports` and :func:`show_latest` make those
edits on the :class:`regio.layout.renderlog.RenderLog`, so a request after a progress report
re-chains the prefix hashes from the shell on (sha256 of two digests per block) and renders
only the shell again, instead of repairing, hashing and rendering the whole conversation from
the start. The bytes are those of a full render (the render-log property tests compare them).

Anything else (a result for a call the front took as missing, a result after a final one, a
partly rewritten entry) still resets the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from regio.content import Block, Entry, ToolResult

from .events import LayoutEvent, OrphanResultDropped, Repaired
from .model import LayoutBlock, chain_hash
from .repair import PENDING_RESULT, BlockInfo, PMessage, ProgressCall, StaleFront

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
    committed; their calls wait for the newer result (:func:`show_latest`). Returns False
    (nothing changed) for any other difference."""
    removed = _removed(log, conversation, start)
    if not removed:
        return False
    front = log.front
    gones: list[int] = []
    calls = {b.tool_use_id for i in removed for b in log.entries[i].blocks}
    if any(isinstance(ev, Repaired) and ev.tool_use_id in calls for ev in front.ev_results):
        return False  # a duplicate of these calls was dropped before: the caller starts over
    for cid in calls:
        committed = front.progress[cid].committed
        assert committed is not None
        gones.append(committed[2])
    if _may_meet_its_call(front, set(gones)):
        return False
    for cid in calls:
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
    (its call's index is not kept; the caller starts over). Tracked calls are placed again
    by :func:`show_latest`."""
    return any(
        isinstance(ev, Repaired)
        and ev.action == "moved_results"
        and ev.tool_use_id not in front.progress
        and ev.message - 1 in gones
        for ev in front.ev_place
    )


def show_latest(
    log: Any, late: Late, count_block: Callable[[Block], int], *, complete: bool
) -> None:
    """Make the log's shells show the latest result of each tracked call: ``late`` (a
    repair run's) or else the committed one. With ``complete`` (the last run of a request),
    a tracked call left with no result raises :class:`StaleFront` (the caller resets)."""
    for cid, pc in list(log.front.progress.items()):
        found = late.get(cid)
        want = found[:3] if found is not None else None
        if want is None and pc.committed is not None:
            want = pc.committed[:3]
        if want is None:
            if complete:
                raise StaleFront(cid)
            continue
        # the event first, even for a result already shown: taking a removed report out
        # (:func:`drop_removed_reports`) can bring the shown result next to its call
        _place_event(log.front, cid, pc, want[2])
        if pc.shown is not None and pc.shown[0] is want[0] and pc.shown[2] == want[2]:
            continue
        _reshell(log, cid, pc, want[0], want[1], count_block)
        pc.shown = want


def _place_event(front: Any, cid: str, pc: ProgressCall, at: int) -> None:
    """The call's ``moved_results`` event for its result at cleaned index ``at``."""
    events: list[LayoutEvent] = front.ev_place
    wanted = at != pc.call_i + 1
    if pc.has_ev and wanted:
        events[pc.ev_at] = Repaired("moved_results", cid, at)
        return
    if not pc.has_ev and not wanted:
        return
    if pc.has_ev:
        del events[pc.ev_at]
    else:
        events.insert(pc.ev_at, Repaired("moved_results", cid, at))
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
    pending = any(
        isinstance(b, ToolResult) and (b.content == PENDING_RESULT or not b.is_final)
        for b, _ in pairs
    )
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
