"""Validate-and-repair of the conversation projection.

:func:`repair` works on the provider-neutral message list, so the Anthropic and OpenAI renderers
render the same repaired conversation. It never edits the canonical log: it
returns a new list and the events describing each change.

Rules, in order:

1. Empty text blocks and empty messages are dropped (providers refuse them).
2. A ``tool_use`` id seen before is dropped from the later message (W-A.4).
3. A ``tool_result`` whose call is absent, or only appears later, is dropped
   (:class:`OrphanResultDropped`, naming the id). Of several results for one call the latest
   is kept and the earlier ones are dropped: progress reports (``ToolResult(final=False)``)
   are superseded by later reports and by the final result.
4. Every call's result is moved into one ``tool`` message directly after the calling assistant
   message, in call order (W-A.1-3, W-O.1-2). A call with no result gets a fixed neutral result:
   :data:`PENDING_RESULT` for a call of the open current-turn group, else
   :data:`MISSING_RESULT`. A call whose latest result is a progress report gets the fixed
   :data:`RUNNING_RESULT` there, and the report itself stays where it was added, as a ``user``
   message of its own (:func:`report_message`, source ``progress:<call id>``): the bytes at the
   call do not change while the job reports, only when its final result arrives. The strings
   carry no timestamp, id or counter.
5. Adjacent messages of the same role merge (unless the later one is ``separate``, or either
   is a frozen tail copy — source ``frozen:``, see :mod:`regio.layout.tail` — which keeps its
   own message so it renders exactly as it did in the tail, or a progress report).
6. If the conversation would start with an assistant message, the fixed user message
   :data:`CONVERSATION_START` is inserted first (a conversation starts with a
   user message).

The pass is idempotent and deterministic.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import attrs
import msgspec

from regio.content import Block, Role, Text, ToolResult, ToolUse
from regio.errors import RegioError

from .events import (
    LayoutEvent,
    OrphanResultDropped,
    Repaired,
    ResultSynthesized,
)
from .model import Origin
from .wellformed import anthropic_problems, openai_chat_problems

__all__ = [
    "CONVERSATION_START",
    "MISSING_RESULT",
    "PENDING_RESULT",
    "RUNNING_RESULT",
    "BlockInfo",
    "LayoutError",
    "PMessage",
    "ProgressCall",
    "RepairFront",
    "RepairRun",
    "StaleFront",
    "advance",
    "check_anthropic",
    "check_first_message",
    "check_openai_chat",
    "repair",
    "repair_after",
    "report_message",
    "run_events",
]

MISSING_RESULT = "[no result was recorded for this tool call]"
PENDING_RESULT = "[result pending: this tool call has not returned yet]"
CONVERSATION_START = "[The conversation continues from the context above.]"
RUNNING_RESULT = (
    "[running: this tool call has not finished; its latest progress report is further down "
    "the conversation]"
)
#: Source prefix of a rendered progress report (:func:`report_message`).
REPORT = "progress:"


class LayoutError(RegioError, ValueError):
    """Input the layout cannot turn into a request; the message names the place and the fix."""


#: What the caller knows of a block: its tokens and the region it came from.
BlockInfo = tuple[int, str | None]


class PMessage(msgspec.Struct, frozen=True):
    """A projected message: ``role``, ``blocks``, ``source`` (entry id, ``note:<id>`` or
    ``synthetic:<reason>``: a label), ``separate`` (never merged into the previous message)
    and ``origin`` (where it comes from, :data:`regio.layout.model.Origin`)."""

    role: Role
    blocks: tuple[Block, ...]
    source: str = ""
    separate: bool = False
    origin: Origin = "entry"
    #: per block, ``(tokens, region)`` when the caller knows them (``None``: unknown; an empty
    #: tuple: unknown for every block). The repair carries them with their blocks.
    info: tuple[BlockInfo | None, ...] = ()

    def pairs(self) -> list[tuple[Block, BlockInfo | None]]:
        """``(block, info)`` for every block."""
        if len(self.info) == len(self.blocks):
            return list(zip(self.blocks, self.info, strict=True))
        return [(b, None) for b in self.blocks]

    def rebuilt(
        self, pairs: Sequence[tuple[Block, BlockInfo | None]], role: Role | None = None
    ) -> PMessage:
        """This message with other ``(block, info)`` pairs (and ``role``)."""
        infos = tuple(i for _, i in pairs)
        return PMessage(
            role or self.role,
            tuple(b for b, _ in pairs),
            self.source,
            self.separate,
            self.origin,
            infos if any(i is not None for i in infos) else (),
        )


#: Source prefix of frozen tail copies (:mod:`regio.layout.tail`): never merged with a
#: neighbour, and not a user turn (they do not close the open current-turn group).
FROZEN = "frozen:"


def _frozen(m: PMessage) -> bool:
    return m.origin == "frozen"


def report_message(report: ToolResult) -> PMessage:
    """The ``user`` message rendering progress report ``report`` (``ToolResult(final=False)``)
    where it was added: a fixed label naming the call, the report's text, then its media.
    Never merged with a neighbour (its own message, so a newer report takes it out whole)."""
    label = f"[progress report of tool call {report.tool_use_id}; not its final result]\n"
    blocks: tuple[Block, ...] = (Text(label + report.content), *report.media)
    return PMessage("user", blocks, REPORT + report.tool_use_id, origin="progress")


def _is_user_text(m: PMessage) -> bool:
    return (
        m.role == "user" and not _frozen(m) and any(not isinstance(b, ToolResult) for b in m.blocks)
    )


def _place(
    m: PMessage,
    i: int,
    result_for: dict[str, tuple[ToolResult, BlockInfo | None]],
    result_from: dict[str, tuple[int, int]],
    last_user_text: int,
    events: list[LayoutEvent],
    marks: dict[str, ProgressCall] | None = None,
    later: Collection[str] = (),
) -> list[PMessage]:
    """Rule 4 for deduplicated message ``i``: the message without its tool results (a ``tool``
    message becomes ``user``), then, if it makes calls, one ``tool`` message with each call's
    result in call order (a synthesized one when absent), then a :func:`report_message` for
    each latest progress report it holds. Appends the events to ``events``."""
    placed: list[PMessage] = []
    rest = [(b, n) for b, n in m.pairs() if not isinstance(b, ToolResult)]
    if rest:
        placed.append(m.rebuilt(rest, m.role if m.role != "tool" else "user"))
    reports = [
        report_message(b)
        for q, b in enumerate(m.blocks)
        if isinstance(b, ToolResult) and not b.is_final and result_from.get(b.tool_use_id) == (i, q)
    ]
    calls = [b for b in m.blocks if isinstance(b, ToolUse)]
    if not calls:
        return placed + reports
    results: list[tuple[Block, BlockInfo | None]] = []
    pending_any = False
    for order, call in enumerate(calls):
        found = result_for.get(call.id)
        if (found is not None and not found[0].is_final) or (found is None and call.id in later):
            if marks is not None:
                marks[call.id] = ProgressCall(i, order, calls[0].id, len(events), False)
            found = (ToolResult(call.id, RUNNING_RESULT), None)
        elif found is None:
            pending = i > last_user_text
            pending_any = pending_any or pending
            events.append(ResultSynthesized(call.id, pending))
            found = (ToolResult(call.id, PENDING_RESULT if pending else MISSING_RESULT), None)
        elif result_from[call.id][0] != i + 1:
            events.append(Repaired("moved_results", call.id, result_from[call.id][0]))
        results.append(found)
    pending_any = pending_any or any(
        isinstance(r, ToolResult) and r.content == PENDING_RESULT for r, _ in results
    )
    tag: Origin = "pending" if pending_any else "results"
    shell = PMessage("tool", (), f"{tag}:{calls[0].id}", origin=tag)
    placed.append(shell.rebuilt(results))
    return placed + reports


def _mergeable(prev: PMessage, m: PMessage) -> bool:
    """Rule 5's test: ``m`` merges into ``prev`` when both have the same role, ``m`` is not
    ``separate`` and neither is a frozen tail copy."""
    return (
        prev.role == m.role
        and not m.separate
        and not _frozen(m)
        and not _frozen(prev)
        and "progress" not in (m.origin, prev.origin)
    )


class _Merged:
    """Rule 5 over a sequence of messages in linear time: the pairs merged into the last
    message are collected and the message is rebuilt once (merging one message at a time
    would copy the growing message again for each one)."""

    def __init__(self, first: PMessage | None, events: list[LayoutEvent], offset: int) -> None:
        self.done: list[PMessage] = []
        self.last = first
        self.extra: list[tuple[Block, BlockInfo | None]] = []
        self.events = events
        self.offset = offset  # merged messages before the first, for the events' index

    def add(self, m: PMessage) -> None:
        """Append ``m``, or merge it into the last message (event appended)."""
        if self.last is not None and _mergeable(self.last, m):
            self.events.append(Repaired("merged", "", self.offset + len(self.done) + 1))
            if not self.extra:
                self.extra = self.last.pairs()
            self.extra.extend(m.pairs())
            return
        self._close()
        self.last = m

    def _close(self) -> None:
        if self.last is not None:
            self.done.append(self.last.rebuilt(self.extra) if self.extra else self.last)
        self.last, self.extra = None, []

    def messages(self) -> list[PMessage]:
        """The merged messages (closes the last one)."""
        self._close()
        return self.done


@attrs.define(eq=False)
class ProgressCall:
    """A call of the front whose result may still be replaced (its latest result was a
    progress report, ``ToolResult(final=False)``, when it was committed): a later result
    changes only the call's ``tool`` message (its *shell*) and one place event, so the render
    log patches them instead of starting over.

    ``call_i``: cleaned index of the calling message; ``order``: the call's position among
    its calls; ``first``: the first call id of that message (the shell's source is
    ``pending:<first>`` or ``results:<first>``); ``ev_at``: index in the front's place events of
    its ``moved_results`` event (``has_ev``), or where it goes; ``committed``: the latest result
    in the front's inputs as ``(result, info, cleaned index, source)`` (``None`` after the
    render log removed it); ``shown``: the final result the front's shell holds (``None``: the
    shell holds :data:`RUNNING_RESULT`)."""

    call_i: int
    order: int
    first: str
    ev_at: int
    has_ev: bool
    committed: tuple[ToolResult, BlockInfo | None, int, str] | None = None
    shown: tuple[ToolResult, BlockInfo | None, int] | None = None


class StaleFront(Exception):
    """A result arrived for a call the repaired front took as missing: the front must be
    repaired again from the start (the caller resets its :class:`RepairFront`)."""


@attrs.define(eq=False)
class RepairFront:
    """What the repaired front of a conversation leaves for the messages after it.

    A front ends at a *watermark*: a point where every call made before it is answered before
    it or is decided missing (a user text follows it), so nothing after the point can change
    how the front is repaired — except a late result for a decided-missing call, which raises
    :class:`StaleFront`. Counters are message counts (inputs, cleaned messages, final merged
    messages); ``carry`` is the last merged message, which may still absorb the next one;
    the four event lists are the front's events per repair pass.
    """

    inputs: int = 0
    cleaned: int = 0
    merged: int = 0
    first_role: str | None = None
    calls: set[str] = attrs.field(factory=set)
    answered: set[str] = attrs.field(factory=set)
    missing: set[str] = attrs.field(factory=set)
    carry: PMessage | None = None
    ev_dedup: list[LayoutEvent] = attrs.field(factory=list)
    ev_results: list[LayoutEvent] = attrs.field(factory=list)
    ev_place: list[LayoutEvent] = attrs.field(factory=list)
    ev_merge: list[LayoutEvent] = attrs.field(factory=list)
    progress: dict[str, ProgressCall] = attrs.field(factory=dict)


@attrs.frozen
class RepairRun:
    """One :func:`repair_after` run: ``messages`` (the front's ``carry`` first, when there is
    one; without the conversation-start message), the events of this run per pass, and the
    bookkeeping :meth:`RepairFront` needs to advance over the run's inputs."""

    messages: list[PMessage]
    ev_dedup: list[LayoutEvent]
    ev_results: list[LayoutEvent]
    ev_place: list[LayoutEvent]
    ev_merge: list[LayoutEvent]
    cleaned: int
    calls: list[str]
    answered: list[str]
    unanswered: list[str]
    #: the latest result in this run of each call of the front's ``progress`` (``(result,
    #: info, cleaned index, source)``), and the calls of this run whose latest result is a
    #: progress report (their :class:`ProgressCall`, place-event index within this run)
    late: dict[str, tuple[ToolResult, BlockInfo | None, int, str]] = attrs.field(factory=dict)
    progress: dict[str, ProgressCall] = attrs.field(factory=dict)


def _clean(messages: Sequence[PMessage], front: RepairFront) -> list[PMessage]:
    """Rule 1: empty text blocks and empty messages dropped; a system message refused."""
    cleaned: list[PMessage] = []
    for p, m in enumerate(messages):
        if m.role == "system":
            raise LayoutError(
                f"conversation message {front.inputs + p} (source {m.source!r}) has role "
                "'system'; put system content in a pinned region instead"
            )
        pairs = [(b, n) for b, n in m.pairs() if not (isinstance(b, Text) and not b.text)]
        if pairs:
            cleaned.append(m.rebuilt(pairs))
    return cleaned


def _dedup(
    cleaned: list[PMessage], front: RepairFront, events: list[LayoutEvent]
) -> tuple[list[PMessage], dict[str, int]]:
    """Rule 2: a call id seen before (here or in the front) is dropped; returns the messages and
    where each new call is made (cleaned index)."""
    call_at: dict[str, int] = {}
    deduped: list[PMessage] = []
    for k, m in enumerate(cleaned):
        i = front.cleaned + k
        kept: list[tuple[Block, BlockInfo | None]] = []
        for b, n in m.pairs():
            if isinstance(b, ToolUse):
                if b.id in call_at or b.id in front.calls or m.role != "assistant":
                    events.append(Repaired("duplicate_call_dropped", b.id, i))
                    continue
                call_at[b.id] = i
            kept.append((b, n))
        deduped.append(m.rebuilt(kept))
    return deduped, call_at


def _assign(
    deduped: list[PMessage],
    call_at: dict[str, int],
    front: RepairFront,
    events: list[LayoutEvent],
    sources: dict[str, str],
) -> tuple[dict[str, tuple[ToolResult, BlockInfo | None]], dict[str, tuple[int, int]]]:
    """Rule 3: each result assigned to its call, orphans and earlier results of a call dropped
    (the latest is kept; ``sources``: the source of each call's latest result). Returns each
    call's latest result and where it is (cleaned index, block index). A result of a call of
    the front's ``progress`` is assigned to it too. Raises :class:`StaleFront` for a result of
    another call of the front (one it took as missing, or a later result of one it answered),
    or a newer result of a call whose report the front still renders."""
    result_for: dict[str, tuple[ToolResult, BlockInfo | None]] = {}
    result_from: dict[str, tuple[int, int]] = {}
    for k, m in enumerate(deduped):
        j = front.cleaned + k
        for q, (b, n) in enumerate(m.pairs()):
            if not isinstance(b, ToolResult):
                continue
            cid = b.tool_use_id
            tracked = front.progress.get(cid)
            if tracked is None:
                if cid in front.calls:
                    raise StaleFront(cid)
                at = call_at.get(cid)
                if at is None or at >= j:
                    events.append(OrphanResultDropped(cid, j))
                    continue
            elif tracked.committed is not None:
                raise StaleFront(cid)  # its report, now superseded, is in the front
            if cid in result_for:
                events.append(Repaired("duplicate_result_dropped", cid, result_from[cid][0]))
            result_for[cid], result_from[cid], sources[cid] = (b, n), (j, q), m.source
    return result_for, result_from


def repair_after(
    front: RepairFront, messages: Sequence[PMessage], later: Collection[str] = ()
) -> RepairRun:
    """Repair ``messages``, the projected conversation after ``front`` (a fresh
    :class:`RepairFront`: the whole conversation). The result equals what :func:`repair` gives
    for the front's inputs followed by ``messages`` and the messages after them, from the
    front's last merged message on; ``later``: the calls whose latest result is a progress
    report in those later messages (:func:`reporting`; their shell shows
    :data:`RUNNING_RESULT`).

    Raises :class:`LayoutError` for a ``system`` message and :class:`StaleFront` when a result
    answers a call the front took as missing.
    """
    ev_dedup: list[LayoutEvent] = []
    ev_results: list[LayoutEvent] = []
    ev_place: list[LayoutEvent] = []
    ev_merge: list[LayoutEvent] = []
    cleaned = _clean(messages, front)
    deduped, call_at = _dedup(cleaned, front, ev_dedup)
    sources: dict[str, str] = {}
    result_for, result_from = _assign(deduped, call_at, front, ev_results, sources)
    last_user_text = max(
        (front.cleaned + k for k, m in enumerate(deduped) if _is_user_text(m)), default=-1
    )
    merger = _Merged(front.carry, ev_merge, front.merged)
    marks: dict[str, ProgressCall] = {}
    for k, m in enumerate(deduped):
        i = front.cleaned + k
        for pm in _place(m, i, result_for, result_from, last_user_text, ev_place, marks, later):
            merger.add(pm)
    for cid, pc in marks.items():
        if cid in result_for:  # else its report is in the later messages
            pc.committed = (*result_for[cid], result_from[cid][0], sources[cid])
    late = {
        c: (*result_for[c], result_from[c][0], sources[c])
        for c in result_for
        if c in front.progress
    }
    return RepairRun(
        messages=merger.messages(),
        ev_dedup=ev_dedup,
        ev_results=ev_results,
        ev_place=ev_place,
        ev_merge=ev_merge,
        cleaned=len(cleaned),
        calls=list(call_at),
        answered=[c for c in result_for if c in call_at],
        unanswered=[c for c in call_at if c not in result_for and c not in later],
        late=late,
        progress=marks,
    )


def advance(front: RepairFront, run: RepairRun, inputs: int) -> list[PMessage]:
    """Move ``front`` over the ``inputs`` messages ``run`` repaired (they must end at a
    watermark); returns the messages that became final (all of ``run.messages`` but the last,
    which is the new ``carry``)."""
    front.inputs += inputs
    front.cleaned += run.cleaned
    front.calls.update(run.calls)
    front.answered.update(run.answered)
    front.missing.update(run.unanswered)
    for cid, late in run.late.items():
        if late[0].is_final:
            del front.progress[cid]  # answered: a later result starts over (StaleFront)
        else:
            front.progress[cid].committed = late
    for cid, pc in run.progress.items():
        pc.ev_at += len(front.ev_place)
        front.progress[cid] = pc
    front.ev_dedup.extend(run.ev_dedup)
    front.ev_results.extend(run.ev_results)
    front.ev_place.extend(run.ev_place)
    front.ev_merge.extend(run.ev_merge)
    if not run.messages:
        return []
    if front.first_role is None:
        front.first_role = run.messages[0].role
    final = run.messages[:-1]
    front.merged += len(final)
    front.carry = run.messages[-1]
    return final


def run_events(front: RepairFront, run: RepairRun) -> list[LayoutEvent]:
    """The events of a whole repair: the front's and the run's, pass by pass, then the
    conversation-start insertion when the conversation starts with the assistant."""
    events: list[LayoutEvent] = [
        *front.ev_dedup,
        *run.ev_dedup,
        *front.ev_results,
        *run.ev_results,
        *front.ev_place,
        *run.ev_place,
        *front.ev_merge,
        *run.ev_merge,
    ]
    first = front.first_role or (run.messages[0].role if run.messages else None)
    if first == "assistant":
        events.append(Repaired("conversation_start", "", 0))
    return events


def repair(messages: Sequence[PMessage]) -> tuple[list[PMessage], list[LayoutEvent]]:
    """Repair a projected conversation; returns ``(messages, events)``.

    Raises :class:`LayoutError` for a ``system`` message in the conversation (system content
    belongs in a pinned region).
    """
    front = RepairFront()
    run = repair_after(front, messages)
    merged = list(run.messages)
    if merged and merged[0].role == "assistant":
        merged.insert(0, START_MESSAGE)
    return merged, run_events(front, run)


#: The fixed first message of a conversation that would start with the assistant.
START_MESSAGE = PMessage("user", (Text(CONVERSATION_START),), "synthetic:start", origin="synthetic")


# ---------------------------------------------------------------- checks on rendered payloads


def check_anthropic(payload: dict[str, Any]) -> list[str]:
    """Problems of an Anthropic Messages payload under W-A and L (empty list: well formed);
    see :func:`regio.layout.wellformed.anthropic_problems`."""
    return anthropic_problems(payload.get("messages", []))


def check_openai_chat(payload: dict[str, Any]) -> list[str]:
    """Problems of an OpenAI Chat Completions payload under W-O and L (empty: well formed);
    see :func:`regio.layout.wellformed.openai_chat_problems`."""
    return openai_chat_problems(payload.get("messages", []))


def check_first_message(messages: Sequence[PMessage]) -> bool:
    """Rule L on a projected list: the first message carries no tool result."""
    return not messages or not any(isinstance(b, ToolResult) for b in messages[0].blocks)
