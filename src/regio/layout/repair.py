"""Validate-and-repair of the conversation projection.

:func:`repair` works on the provider-neutral message list, so the Anthropic and OpenAI renderers
render the same repaired conversation. It never edits the canonical log: it
returns a new list and the events describing each change.

Rules, in order:

1. Empty text blocks and empty messages are dropped (providers refuse them).
2. Tool call ids are named by the one rule of :mod:`regio.callids` (:func:`named`): an id
   no provider accepts is mapped (``id_mapped``), a call whose id an earlier call has is
   renamed and the results that answer it follow (``call_renamed``, ``result_renamed``; W-A.4:
   no id twice). A call in a message that is not the assistant's is dropped
   (``call_dropped``).
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

from regio.callids import CallIdBook, name_blocks
from regio.content import Block, Text, ToolResult, ToolUse
from regio.errors import RegioError

from .events import (
    LayoutEvent,
    OrphanResultDropped,
    Repaired,
    ResultSynthesized,
)
from .model import Origin
from .repairstate import (
    FROZEN,
    BlockInfo,
    PMessage,
    ProgressCall,
    RepairFront,
    RepairRun,
    StaleFront,
    advance,
    is_frozen,
    run_events,
)
from .wellformed import anthropic_problems, openai_chat_problems

__all__ = [
    "CONVERSATION_START",
    "FROZEN",
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
    "is_frozen",
    "named",
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


def report_message(report: ToolResult) -> PMessage:
    """The ``user`` message rendering progress report ``report`` (``ToolResult(final=False)``)
    where it was added: a fixed label naming the call, the report's text, then its media.
    Never merged with a neighbour (its own message, so a newer report takes it out whole)."""
    label = f"[progress report of tool call {report.tool_use_id}; not its final result]\n"
    blocks: tuple[Block, ...] = (Text(label + report.content), *report.media)
    return PMessage("user", blocks, REPORT + report.tool_use_id, origin="progress")


def _is_user_text(m: PMessage) -> bool:
    return (
        m.role == "user"
        and not is_frozen(m)
        and any(not isinstance(b, ToolResult) for b in m.blocks)
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
        and not is_frozen(m)
        and not is_frozen(prev)
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


def _named(
    cleaned: list[PMessage], front: RepairFront, events: list[LayoutEvent]
) -> tuple[list[PMessage], CallIdBook]:
    """Rule 2's naming (:mod:`regio.callids`) over the front's calls: the messages with their
    call ids named, and the run's book (a child of the front's)."""
    book = front.ids.child()
    out: list[PMessage] = []
    for k, m in enumerate(cleaned):
        blocks, changes = name_blocks(book, m.role, m.blocks)
        if changes:
            i = front.cleaned + k
            events.extend(Repaired(c.action, c.sent, i, c.given) for c in changes)
            m = m.rebuilt([(b, n) for b, (_, n) in zip(blocks, m.pairs(), strict=True)])
        out.append(m)
    return out, book


def named(front: RepairFront, messages: Sequence[PMessage]) -> list[PMessage]:
    """``messages`` (projected, after ``front``) with their call ids as the repair names them
    (rule 2), nothing recorded: what the render log reads its watermarks from. The same
    objects when no id changes."""
    return _named(list(messages), front, [])[0]


def _dedup(
    cleaned: list[PMessage], front: RepairFront, events: list[LayoutEvent]
) -> tuple[list[PMessage], dict[str, int]]:
    """Rule 2's drop: a call in a message that is not the assistant's; returns the messages and
    where each call is made (cleaned index). The ids are named already (unique)."""
    call_at: dict[str, int] = {}
    deduped: list[PMessage] = []
    for k, m in enumerate(cleaned):
        i = front.cleaned + k
        kept: list[tuple[Block, BlockInfo | None]] = []
        for b, n in m.pairs():
            if isinstance(b, ToolUse):
                if m.role != "assistant":
                    events.append(Repaired("call_dropped", b.id, i))
                    continue
                call_at[b.id] = i
            kept.append((b, n))
        deduped.append(m.rebuilt(kept) if len(kept) != len(m.blocks) else m)
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
    ev_names: list[LayoutEvent] = []
    ev_dedup: list[LayoutEvent] = []
    ev_results: list[LayoutEvent] = []
    ev_place: list[LayoutEvent] = []
    ev_merge: list[LayoutEvent] = []
    cleaned, ids = _named(_clean(messages, front), front, ev_names)
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
        ev_names=ev_names,
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
        ids=ids,
    )


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
