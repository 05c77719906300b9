"""Repair of a broken conversation history: :func:`repair_history` over messages.

A history a crash, an old compaction or another framework left broken (a call without its
result, a result without its call, a call id used twice, a group an old compaction split, a
summary that took one half of a call and its result) is refused by every provider, request
after request. :func:`repair_history` makes it valid and says what it changed; nothing is lost
that was not already lost, and the caller keeps the input (``Engine.repair`` keeps every
admitted message in the transcript). It is the render-time repair of
:mod:`regio.layout.repair` (rules 1-6 there decide) applied to a history, with two additions:

0. **Call ids are named first** by the one rule of :mod:`regio.callids`, the rule the engine
   applies where it admits a message and the render-time repair on every request: an id a
   provider refuses is mapped (``id_mapped``), a call whose id an earlier call has is renamed
   ``<id>-<n>`` (``call_renamed``, ``detail``: the new id) and the results after it follow the
   rename (``result_renamed``; the oldest call of that id still unanswered takes a result), so
   neither call loses its result to the other.
7. **A call without a result is closed with a result the agent reads**: by default
   :data:`INTERRUPTED_RESULT` (an error result saying the call was interrupted), where the
   render-time repair gives a neutral placeholder on every request; ``closing`` picks another
   per call (``Engine.repair`` says when an old compaction took the result, and how to bring
   it back). A call whose latest result is a progress report (``ToolResult(final=False)``)
   is a running job, not an orphan, and is left alone.

Each change is a :class:`HistoryRepaired` event (``action`` below, the call id, the index of
the input message concerned): ``id_mapped``, ``call_renamed``, ``result_renamed`` (the id as
sent; ``detail``: the id given), ``call_dropped`` (a
call in a message that is not the assistant's), ``orphan_result_dropped``,
``duplicate_result_dropped`` (an earlier result of a call that has a later one),
``call_closed`` (``detail``: the result's text), ``empty_dropped`` (an empty text block or
message); and, placing the history for a provider: ``results_moved`` (a call's results moved
directly after it), ``merged`` (``message``: the index of the output message that absorbed
the next one), ``conversation_start`` (a user message opens a history that started with the
assistant). The repair is idempotent: repairing its output changes nothing.

System messages are kept where they are, never merged or moved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs

from regio.callids import ID_ACTIONS, ID_PATTERN, CallIdBook, name_blocks
from regio.content import Block, Message, Text, ToolResult, ToolUse
from regio.events import Event
from regio.layout.events import Repaired, ResultSynthesized
from regio.layout.repair import MISSING_RESULT, PENDING_RESULT, PMessage, repair

__all__ = [
    "HISTORY_ACTIONS",
    "INTERRUPTED_RESULT",
    "HistoryRepair",
    "HistoryRepaired",
    "PlainScan",
    "interrupted",
    "needs_repair",
    "repair_history",
]

#: What a call that never returned is closed with (an error result, so the agent reads it as
#: a failed call): fixed text, no timestamp or id, so a repaired history renders the same bytes.
INTERRUPTED_RESULT = (
    "[interrupted: this tool call never returned a result (the session stopped before it "
    "finished); call the tool again if its result is still needed]"
)

#: The actions that change the history itself (the others place it for a provider).
HISTORY_ACTIONS = ID_ACTIONS | frozenset(
    {
        "call_dropped",
        "orphan_result_dropped",
        "duplicate_result_dropped",
        "call_closed",
        "empty_dropped",
    }
)


class HistoryRepaired(Event, frozen=True, tag="history_repaired"):
    """One change the repair of a history made (module doc): ``action``, the ``tool_use_id``
    concerned (empty when none), ``message`` (index of the input message, -1 when none),
    ``entry`` (its entry id, when the history is an engine's window) and ``detail`` (the new
    id of a renamed call, the text of a closing result)."""

    action: str
    tool_use_id: str = ""
    message: int = -1
    entry: str = ""
    detail: str = ""


def interrupted(call: ToolUse) -> ToolResult:
    """The default closing result of ``call``: :data:`INTERRUPTED_RESULT`, as an error."""
    return ToolResult(call.id, INTERRUPTED_RESULT, is_error=True)


@attrs.frozen
class HistoryRepair:
    """What :func:`repair_history` made of a history: ``messages``, the repaired history as a
    provider takes it (results directly after their calls, same roles merged, a user message
    first); ``changes``, every change (:class:`HistoryRepaired`); ``kept``, per input message
    the blocks it keeps in place (renames applied; calls and results the repair dropped left
    out, nothing moved or merged); ``closed``, call id -> the result that closes it, with
    ``closed_at``, call id -> the index of the input message that made the call."""

    messages: list[Message]
    changes: list[HistoryRepaired]
    kept: list[tuple[Block, ...]]
    closed: dict[str, ToolResult]
    closed_at: dict[str, int]

    @property
    def changed(self) -> bool:
        """Whether the history itself changed (an action of :data:`HISTORY_ACTIONS`)."""
        return any(c.action in HISTORY_ACTIONS for c in self.changes)


def _renamed(
    messages: Sequence[Message], changes: list[HistoryRepaired]
) -> list[tuple[Block, ...]]:
    """Rule 0: each message's blocks with their call ids named (:mod:`regio.callids`), the
    changes appended to ``changes``."""
    book = CallIdBook()
    out: list[tuple[Block, ...]] = []
    for i, m in enumerate(messages):
        blocks, named = name_blocks(book, m.role, m.blocks)
        changes.extend(HistoryRepaired(c.action, c.sent, i, detail=c.given) for c in named)
        out.append(blocks)
    return out


def _projected(messages: Sequence[Message], blocks: Sequence[tuple[Block, ...]]) -> list[PMessage]:
    """One :class:`PMessage` per message; each block's info is ``(block index, "<message
    index>")`` so the repair's output says where every block came from. A system message is
    kept in place as a message that never merges (origin ``frozen``), mapped back after."""
    out = []
    for i, (m, bs) in enumerate(zip(messages, blocks, strict=True)):
        info = tuple((q, str(i)) for q in range(len(bs)))
        if m.role == "system":
            out.append(PMessage("user", bs, f"system:{i}", origin="frozen", info=info))
        else:
            out.append(PMessage(m.role, bs, str(i), info=info))
    return out


def repair_history(
    messages: Sequence[Message],
    *,
    closing: Callable[[ToolUse], ToolResult] = interrupted,
) -> HistoryRepair:
    """Repair ``messages`` (module doc): returns the :class:`HistoryRepair`. ``closing`` gives
    the result that closes a call without one (default :func:`interrupted`). Pure: the input
    is not changed. The output is accepted by both providers' request checks
    (:func:`regio.layout.check_anthropic`, :func:`regio.layout.check_openai_chat`, once
    rendered)."""
    changes: list[HistoryRepaired] = []
    renamed = _renamed(messages, changes)
    projected = _projected(messages, renamed)
    repaired, events = repair(projected)
    calls = {
        b.id: (i, b)
        for i, bs in enumerate(renamed)
        if messages[i].role == "assistant"
        for b in bs
        if isinstance(b, ToolUse)
    }
    synthesized = {e.tool_use_id for e in events if isinstance(e, ResultSynthesized)}
    closed = {cid: closing(calls[cid][1]) for cid in synthesized if cid in calls}
    survived = {(int(n[1]), n[0]) for pm in repaired for n in pm.info if n is not None and n[1]}
    kept: list[tuple[Block, ...]] = []
    for i, bs in enumerate(renamed):
        mine: list[Block] = []
        for q, b in enumerate(bs):
            if (i, q) in survived or not _droppable(b, i, calls):
                mine.append(b)
                continue
            if isinstance(b, Text):  # kept in place (harmless there), dropped from the output
                changes.append(HistoryRepaired("empty_dropped", message=i))
                mine.append(b)
                continue
            cid = b.id if isinstance(b, ToolUse) else b.tool_use_id  # type: ignore[union-attr]
            action = "call_dropped" if isinstance(b, ToolUse) else _result_drop(cid, i, calls)
            changes.append(HistoryRepaired(action, cid, i))
        kept.append(tuple(mine))
    for cid, result in closed.items():
        changes.append(HistoryRepaired("call_closed", cid, calls[cid][0], detail=result.content))
    out = _messages(repaired, closed)
    changes.extend(_placements(events, repaired))
    if any(pm.origin == "progress" for pm in repaired):
        # a running job's report became a user message of its own; as plain messages it merges
        # with its neighbours, as the repair does on the next pass
        again, _ = repair(_projected(out, [m.blocks for m in out]))
        out = _messages(again, {})
    return HistoryRepair(out, changes, kept, closed, {c: calls[c][0] for c in closed})


def needs_repair(messages: Iterable[Message]) -> bool:
    """``False`` only when :func:`repair_history` would change nothing of the history itself
    (no action of :data:`HISTORY_ACTIONS` but ``empty_dropped``): a quick O(blocks) check of
    the plain shape, each call made by the assistant with an id the providers accept
    (:data:`regio.callids.ID_PATTERN`), used once, and answered by exactly one final result
    in a later user or tool message before the assistant speaks again; no system message, no
    progress report. Anything else is ``True`` (the full repair decides), so a caller may skip
    the repair on ``False`` (``Engine.repair`` does: a window repaired on every request costs
    its new messages, not its length; it carries a :class:`PlainScan` from one to the next)."""
    scan = PlainScan()
    scan.extend(messages)
    return scan.needs


class PlainScan:
    """:func:`needs_repair`'s check carried over a history read in parts (each part the
    messages appended since the last): the calls made so far, those still open, and whether
    the plain shape is ``broken`` already (then it reads nothing more)."""

    __slots__ = ("broken", "made", "open_calls")

    def __init__(self) -> None:
        self.made: set[str] = set()
        self.open_calls: set[str] = set()
        self.broken = False

    @property
    def needs(self) -> bool:
        """:func:`needs_repair` of the messages read so far."""
        return self.broken or bool(self.open_calls)

    def extend(self, messages: Iterable[Message]) -> None:
        """Read ``messages``, the next ones of the history."""
        if self.broken:
            return
        made, open_calls = self.made, self.open_calls
        for m in messages:
            if m.role == "assistant":
                if open_calls:
                    self.broken = True
                    return
                for b in m.blocks:
                    if isinstance(b, ToolResult):
                        self.broken = True
                        return
                    if isinstance(b, ToolUse):
                        if b.id in made or not ID_PATTERN.fullmatch(b.id):
                            self.broken = True
                            return
                        made.add(b.id)
                        open_calls.add(b.id)
            elif m.role in ("user", "tool"):
                for b in m.blocks:
                    if isinstance(b, ToolUse):
                        self.broken = True
                        return
                    if isinstance(b, ToolResult):
                        if not b.is_final or b.tool_use_id not in open_calls:
                            self.broken = True
                            return
                        open_calls.discard(b.tool_use_id)
            else:
                self.broken = True
                return


def _droppable(block: Block, at: int, calls: dict[str, tuple[int, ToolUse]]) -> bool:
    """Blocks whose absence from the repaired output is a change the history keeps: calls,
    final results, progress reports of no earlier call, and empty text (a progress report of a
    call is re-rendered as a message of its own, never dropped here)."""
    if isinstance(block, ToolResult):
        made = calls.get(block.tool_use_id)
        return block.is_final or made is None or made[0] >= at
    if isinstance(block, Text):
        return not block.text
    return isinstance(block, ToolUse)


def _result_drop(cid: str, at: int, calls: dict[str, tuple[int, ToolUse]]) -> str:
    """``duplicate_result_dropped`` for a result of a call made before it (a later result
    won), else ``orphan_result_dropped``."""
    made = calls.get(cid)
    return (
        "duplicate_result_dropped" if made is not None and made[0] < at else "orphan_result_dropped"
    )


def _messages(repaired: Sequence[PMessage], closed: dict[str, ToolResult]) -> list[Message]:
    """The repaired :class:`PMessage` s as messages, each synthesized placeholder replaced by
    its closing result and each kept system message back in its role."""
    out = []
    for pm in repaired:
        blocks: list[Block] = []
        for b, n in pm.pairs():
            if (
                n is None
                and isinstance(b, ToolResult)
                and b.tool_use_id in closed
                and b.content in (MISSING_RESULT, PENDING_RESULT)
            ):
                b = closed[b.tool_use_id]
            blocks.append(b)
        role = "system" if pm.source.startswith("system:") else pm.role
        out.append(Message(role, tuple(blocks)))
    return out


def _placements(events: Sequence[Event], repaired: Sequence[PMessage]) -> list[HistoryRepaired]:
    """The layout's placement events as :class:`HistoryRepaired` (module doc)."""
    origin = {
        b.tool_use_id: int(n[1])
        for pm in repaired
        for b, n in pm.pairs()
        if isinstance(b, ToolResult) and n is not None and n[1]
    }
    out = []
    for e in events:
        if isinstance(e, Repaired) and e.action == "moved_results":
            out.append(
                HistoryRepaired("results_moved", e.tool_use_id, origin.get(e.tool_use_id, -1))
            )
        elif isinstance(e, Repaired) and e.action in ("merged", "conversation_start"):
            out.append(HistoryRepaired(e.action, message=e.message))
    return out
