"""Incremental repair: :func:`regio.layout.repair.repair` resumed from the previous request's
work (DESIGN.md section 6: per-turn cost proportional to what changed, not to the window).

The conversation projection is append-mostly: between two requests the messages before the
newest turn are the very same objects. :func:`repair_resume` keeps a :class:`RepairTrace` of a
run — every intermediate list of the repair passes, append-only per input position — and
*checkpoints* at safe cuts. A cut before input ``p`` is safe when the repair of the inputs
before ``p`` can no longer depend on what follows (field-cases.md section 0, rules W and L):

* every ``tool_use`` recorded before ``p`` is answered before ``p``, or is *decided missing*:
  it has no result before ``p`` but a user text message follows it before ``p`` (so its
  synthesized result is :data:`MISSING_RESULT` whatever comes later) — a later result for such
  a call invalidates the checkpoint (checked while resuming; the run then starts over);
* the merge pass is resumed with the last merged message of the prefix, which may still absorb
  the next message.

Everything else the later inputs need from the prefix is the set of call ids seen and of calls
answered. Resuming therefore gives exactly what a full :func:`repair` gives — messages and
events, in the same order (each pass's events are kept per pass). Purity: by default a trace
is never mutated; a resumed run copies the prefix of the trace's lists (C-level slices) and
extends the copies. A caller that owns the trace (:mod:`regio.layout.convcache` takes it out of
its cache first) passes ``consume=True``: the lists are then cut and extended in place, so a
resumed run costs what changed, not the length of the conversation.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import compress, count
from operator import is_not
from typing import TypeVar

import attrs

from regio.content import Block, Text, ToolResult, ToolUse

from .events import LayoutEvent, OrphanResultDropped, Repaired
from .repair import (
    CONVERSATION_START,
    LayoutError,
    PMessage,
    _is_user_text,
    _merge_into,
    _place,
)

__all__ = ["Checkpoint", "RepairTrace", "common_prefix", "extend_prefix", "repair_resume"]


@attrs.frozen
class Checkpoint:
    """Lengths of every trace list after the inputs before ``inputs`` (a safe cut), the last
    merged message at that point and the decided-missing call ids before it."""

    inputs: int
    deduped: int
    calls: int
    results: int
    ev_dedup: int
    ev_results: int
    ev_place: int
    merged: int
    merged_last: PMessage | None
    ev_merge: int
    user_texts: int
    missing: frozenset[str]


_T = TypeVar("_T")

#: The fixed first message of a conversation that would start with the assistant (one object,
#: so an unchanged conversation is the same message list on every request).
_START_MESSAGE = PMessage("user", (Text(CONVERSATION_START),), "synthetic:start")

_START = Checkpoint(0, 0, 0, 0, 0, 0, 0, 0, None, 0, 0, frozenset())


@attrs.frozen
class RepairTrace:
    """Everything one repair run derived, per pass, in input order (read-only)."""

    inputs: list[PMessage]
    deduped: list[PMessage]
    call_ids: list[str]
    call_pos: list[int]
    result_ids: list[str]
    result_blocks: list[ToolResult]
    result_pos: list[int]
    ev_dedup: list[LayoutEvent]
    ev_dedup_pos: list[int]
    ev_results: list[LayoutEvent]
    ev_results_pos: list[int]
    ev_place: list[LayoutEvent]
    merged: list[PMessage]
    ev_merge: list[LayoutEvent]
    user_texts: list[int]
    checkpoints: list[Checkpoint]
    checkpoint_inputs: list[int]
    output: list[PMessage]
    events: list[LayoutEvent]
    #: how many leading ``output`` messages are certainly the same objects as in the output of
    #: the trace this run resumed from (a lower bound; 0 for a run from the start)
    stable: int = 0


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` by object identity (a C-level
    scan: no Python code runs per element)."""
    return next(compress(count(), map(is_not, a, b)), min(len(a), len(b)))


def extend_prefix(a: Sequence[object], b: Sequence[object], known: int) -> int:
    """:func:`common_prefix` of ``a`` and ``b`` given that their first ``known`` items are
    already known to be the same objects: only the items from ``known`` on are compared (a
    Python loop that stops at the first difference, so the cost is what changed, not the
    length)."""
    n = min(len(a), len(b))
    k = min(known, n)
    while k < n and a[k] is b[k]:
        k += 1
    return k


def _resume_point(
    messages: Sequence[PMessage], trace: RepairTrace | None, same: int | None
) -> Checkpoint:
    if trace is None:
        return _START
    if same is None:
        same = common_prefix(messages, trace.inputs)
    else:
        same = extend_prefix(messages, trace.inputs, same)
    k = bisect_right(trace.checkpoint_inputs, same) - 1
    return trace.checkpoints[k] if k >= 0 else _START


def repair_resume(
    messages: Sequence[PMessage],
    trace: RepairTrace | None = None,
    *,
    same: int | None = None,
    consume: bool = False,
) -> tuple[list[PMessage], list[LayoutEvent], RepairTrace]:
    """:func:`regio.layout.repair.repair` of ``messages``, reusing ``trace`` (the trace of an
    earlier run) up to the latest safe cut inside the common prefix; returns
    ``(messages, events, trace)`` with the same messages and events a full repair gives.

    ``same``: optional; the caller knows that ``messages[:same]`` are the same objects as
    ``trace.inputs[:same]`` (then only the rest is compared, instead of the whole prefix).
    The new trace's ``stable`` tells how many leading output messages are the same objects as
    in ``trace.output`` (a lower bound; exact with ``consume``).

    ``consume``: the caller hands ``trace`` over (nothing else holds it): its lists are cut
    and extended in place instead of copied, and ``trace`` must not be used afterwards (also
    not after an exception). Without it ``trace`` is never mutated.

    Raises :class:`LayoutError` for a ``system`` message (as :func:`repair` does).
    """
    cp = _resume_point(messages, trace, same)
    if cp is not _START and trace is not None:
        out = _run(messages, cp, trace, consume)
        if out is not None:
            return out
    out = _run(messages, _START, None)
    assert out is not None
    return out


def _prefix(items: list[_T], n: int, consume: bool) -> list[_T]:
    """The first ``n`` items of ``items``: the list itself cut in place when it is consumed,
    else a copy (a C-level slice)."""
    if consume:
        del items[n:]
        return items
    return items[:n]


def _run(
    messages: Sequence[PMessage],
    cp: Checkpoint,
    trace: RepairTrace | None,
    consume: bool = False,
) -> tuple[list[PMessage], list[LayoutEvent], RepairTrace] | None:
    """One run from checkpoint ``cp`` of ``trace`` (``_START``: a full run). ``None`` when a
    later result answers a call the checkpoint took as missing. With ``consume`` the trace's
    lists are cut and extended in place (the trace is left unusable)."""
    t = trace
    deduped = _prefix(t.deduped, cp.deduped, consume) if t else []
    call_ids = _prefix(t.call_ids, cp.calls, consume) if t else []
    call_pos = _prefix(t.call_pos, cp.calls, consume) if t else []
    result_ids = _prefix(t.result_ids, cp.results, consume) if t else []
    result_blocks = _prefix(t.result_blocks, cp.results, consume) if t else []
    result_pos = _prefix(t.result_pos, cp.results, consume) if t else []
    ev_dedup = _prefix(t.ev_dedup, cp.ev_dedup, consume) if t else []
    ev_dedup_pos = _prefix(t.ev_dedup_pos, cp.ev_dedup, consume) if t else []
    ev_results = _prefix(t.ev_results, cp.ev_results, consume) if t else []
    ev_results_pos = _prefix(t.ev_results_pos, cp.ev_results, consume) if t else []
    ev_place = _prefix(t.ev_place, cp.ev_place, consume) if t else []
    merged = _prefix(t.merged, cp.merged, consume) if t else []
    if cp.merged_last is not None:
        merged[-1] = cp.merged_last
    ev_merge = _prefix(t.ev_merge, cp.ev_merge, consume) if t else []
    user_texts = _prefix(t.user_texts, cp.user_texts, consume) if t else []
    n_cp = bisect_right(t.checkpoint_inputs, cp.inputs) if t else 0
    checkpoints = _prefix(t.checkpoints, n_cp, consume) if t else []
    checkpoint_inputs = _prefix(t.checkpoint_inputs, n_cp, consume) if t else []
    call_at = dict(zip(call_ids, call_pos, strict=True))
    answered = set(result_ids)
    missing = cp.missing

    # pass 1+2: clean (drop empty text blocks / messages) and drop duplicate calls
    start_d = len(deduped)
    input_of: list[int] = []  # input position of each new deduped message
    for p in range(cp.inputs, len(messages)):
        m = messages[p]
        if m.role == "system":
            raise LayoutError(
                f"conversation message {p} (source {m.source!r}) has role 'system'; "
                "put system content in a pinned region instead"
            )
        blocks = tuple(b for b in m.blocks if not (isinstance(b, Text) and not b.text))
        if not blocks:
            continue
        i = len(deduped)
        kept: list[Block] = []
        for b in blocks:
            if isinstance(b, ToolUse):
                if b.id in call_at or m.role != "assistant":
                    ev_dedup.append(Repaired("duplicate_call_dropped", b.id, i))
                    ev_dedup_pos.append(i)
                    continue
                call_at[b.id] = i
                call_ids.append(b.id)
                call_pos.append(i)
            kept.append(b)
        deduped.append(PMessage(m.role, tuple(kept), m.source, m.separate))
        input_of.append(p)

    # pass 3: assign results to their calls
    result_for = dict(zip(result_ids, result_blocks, strict=True))
    result_from = dict(zip(result_ids, result_pos, strict=True))
    for j in range(start_d, len(deduped)):
        for b in deduped[j].blocks:
            if not isinstance(b, ToolResult):
                continue
            cid = b.tool_use_id
            at = call_at.get(cid)
            if at is None or at >= j:
                ev_results.append(OrphanResultDropped(cid, j))
                ev_results_pos.append(j)
            elif cid in result_for:
                ev_results.append(Repaired("duplicate_result_dropped", cid, j))
                ev_results_pos.append(j)
            else:
                if cid in missing:
                    return None
                result_for[cid] = b
                result_from[cid] = j
                result_ids.append(cid)
                result_blocks.append(b)
                result_pos.append(j)
                answered.add(cid)
        if _is_user_text(deduped[j]):
            user_texts.append(j)
    last_user_text = user_texts[-1] if user_texts else -1

    # pass 4+5: place results after their calls, then merge same-role neighbours; record a
    # checkpoint after every input where the prefix no longer depends on what follows
    open_calls: set[str] = set()
    n_user = cp.user_texts
    for k in range(start_d, len(deduped)):
        m = deduped[k]
        for pm in _place(m, k, result_for, result_from, last_user_text, ev_place):
            _merge_into(merged, pm, ev_merge)
        open_calls.update(b.id for b in m.blocks if isinstance(b, ToolUse))
        # calls answered by a result in this message are settled
        for b in m.blocks:
            if isinstance(b, ToolResult) and result_from.get(b.tool_use_id) == k:
                open_calls.discard(b.tool_use_id)
        if n_user < len(user_texts) and user_texts[n_user] == k:
            n_user += 1
            unanswered = open_calls - answered
            if unanswered:
                missing = missing | unanswered
                open_calls -= unanswered
        if not open_calls:
            at = input_of[k - start_d] + 1
            checkpoints.append(
                Checkpoint(
                    inputs=at,
                    deduped=k + 1,
                    calls=bisect_right(call_pos, k),
                    results=bisect_right(result_pos, k),
                    ev_dedup=bisect_right(ev_dedup_pos, k),
                    ev_results=bisect_right(ev_results_pos, k),
                    ev_place=len(ev_place),
                    merged=len(merged),
                    merged_last=merged[-1] if merged else None,
                    ev_merge=len(ev_merge),
                    user_texts=n_user,
                    missing=missing,
                )
            )
            checkpoint_inputs.append(at)

    events: list[LayoutEvent] = [*ev_dedup, *ev_results, *ev_place, *ev_merge]
    start = bool(merged) and merged[0].role == "assistant"
    if start:
        events.append(Repaired("conversation_start", "", 0))
    # merged[: cp.merged - 1] are the resumed trace's own objects; from cp.merged >= 2 on the
    # first message (so the synthetic start message) is the same too
    stable = max(0, cp.merged - 1) if t is not None else 0
    old = t.output if t is not None and consume else None
    if old is not None and bool(old) and (old[0] is _START_MESSAGE) == start and stable:
        # extend the previous output in place: keep its identical front, then the new rest
        s0 = 1 if start else 0
        k, n = stable, min(len(merged), len(old) - s0)
        while k < n and merged[k] is old[k + s0]:
            k += 1
        del old[k + s0 :]
        old.extend(merged[k:])
        output, stable = old, k + s0
    else:
        output = [_START_MESSAGE, *merged] if start else list(merged)
        stable = min(stable, len(output))
    if consume and t is not None:
        inputs = t.inputs
        del inputs[cp.inputs :]
        inputs.extend(messages[cp.inputs :])
    else:
        inputs = list(messages)
    new_trace = RepairTrace(
        inputs=inputs,
        deduped=deduped,
        call_ids=call_ids,
        call_pos=call_pos,
        result_ids=result_ids,
        result_blocks=result_blocks,
        result_pos=result_pos,
        ev_dedup=ev_dedup,
        ev_dedup_pos=ev_dedup_pos,
        ev_results=ev_results,
        ev_results_pos=ev_results_pos,
        ev_place=ev_place,
        merged=merged,
        ev_merge=ev_merge,
        user_texts=user_texts,
        checkpoints=checkpoints,
        checkpoint_inputs=checkpoint_inputs,
        output=output,
        events=events,
        stable=stable,
    )
    return output, events, new_trace
