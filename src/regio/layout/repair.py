"""Validate-and-repair of the conversation projection (field-cases.md section 0, rules W and L).

:func:`repair` works on the provider-neutral message list, so the Anthropic and OpenAI renderers
render the same repaired conversation (FC-07(b), FC-30). It never edits the canonical log: it
returns a new list and the events describing each change.

Rules, in order:

1. Empty text blocks and empty messages are dropped (providers refuse them).
2. A ``tool_use`` id seen before is dropped from the later message (W-A.4).
3. A ``tool_result`` whose call is absent, or only appears later, is dropped
   (:class:`OrphanResultDropped`, naming the id). A second result for one call is dropped.
4. Every call's result is moved into one ``tool`` message directly after the calling assistant
   message, in call order (W-A.1-3, W-O.1-2). A call with no result gets a fixed neutral result:
   :data:`PENDING_RESULT` for a call of the open current-turn group (FC-10), else
   :data:`MISSING_RESULT` (FC-07(b)). The strings carry no timestamp, id or counter.
5. Adjacent messages of the same role merge (unless the later one is ``separate``, or either
   is a frozen tail copy — source ``frozen:``, see :mod:`regio.layout.tail` — which keeps its
   own message so it renders exactly as it did in the tail).
6. If the conversation would start with an assistant message, the fixed user message
   :data:`CONVERSATION_START` is inserted first (rule L; FC-09 item 4).

The pass is idempotent and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from regio.content import Block, Role, Text, ToolResult, ToolUse

from .events import (
    LayoutEvent,
    OrphanResultDropped,
    Repaired,
    ResultSynthesized,
)
from .wellformed import (
    ChatState,
    anthropic_first_message,
    anthropic_range,
    openai_chat_end,
    openai_chat_range,
)

__all__ = [
    "CONVERSATION_START",
    "MISSING_RESULT",
    "PENDING_RESULT",
    "LayoutError",
    "PMessage",
    "check_anthropic",
    "check_first_message",
    "check_openai_chat",
    "repair",
]

MISSING_RESULT = "[no result was recorded for this tool call]"
PENDING_RESULT = "[result pending: this tool call has not returned yet]"
CONVERSATION_START = "[The conversation continues from the context above.]"


class LayoutError(ValueError):
    """Input the layout cannot turn into a request; the message names the place and the fix."""


class PMessage(msgspec.Struct, frozen=True):
    """A projected message: ``role``, ``blocks``, ``source`` (entry id, ``note:<id>`` or
    ``synthetic:<reason>``) and ``separate`` (never merged into the previous message)."""

    role: Role
    blocks: tuple[Block, ...]
    source: str = ""
    separate: bool = False


#: Source prefix of frozen tail copies (:mod:`regio.layout.tail`): never merged with a
#: neighbour, and not a user turn (they do not close the open current-turn group).
FROZEN = "frozen:"


def _frozen(m: PMessage) -> bool:
    return m.source.startswith(FROZEN)


def _is_user_text(m: PMessage) -> bool:
    return (
        m.role == "user" and not _frozen(m) and any(not isinstance(b, ToolResult) for b in m.blocks)
    )


def _place(
    m: PMessage,
    i: int,
    result_for: dict[str, ToolResult],
    result_from: dict[str, int],
    last_user_text: int,
    events: list[LayoutEvent],
) -> list[PMessage]:
    """Rule 4 for deduplicated message ``i``: the message without its tool results (a ``tool``
    message becomes ``user``), then, if it makes calls, one ``tool`` message with each call's
    result in call order (a synthesized one when absent). Appends the events to ``events``."""
    placed: list[PMessage] = []
    rest = tuple(b for b in m.blocks if not isinstance(b, ToolResult))
    if rest:
        placed.append(PMessage(m.role if m.role != "tool" else "user", rest, m.source, m.separate))
    calls = [b for b in m.blocks if isinstance(b, ToolUse)]
    if not calls:
        return placed
    results: list[Block] = []
    pending_any = False
    for call in calls:
        found = result_for.get(call.id)
        if found is None:
            pending = i > last_user_text
            pending_any = pending_any or pending
            events.append(ResultSynthesized(call.id, pending))
            found = ToolResult(call.id, PENDING_RESULT if pending else MISSING_RESULT)
        elif result_from[call.id] != i + 1:
            events.append(Repaired("moved_results", call.id, result_from[call.id]))
        results.append(found)
    pending_any = pending_any or any(
        isinstance(r, ToolResult) and r.content == PENDING_RESULT for r in results
    )
    tag = "pending" if pending_any else "results"
    placed.append(PMessage("tool", tuple(results), f"{tag}:{calls[0].id}"))
    return placed


def _merge_into(merged: list[PMessage], m: PMessage, events: list[LayoutEvent]) -> None:
    """Rule 5: append ``m`` to ``merged``, or merge it into the last message when both have the
    same role, ``m`` is not ``separate`` and neither is a frozen tail copy (event appended)."""
    if (
        merged
        and merged[-1].role == m.role
        and not m.separate
        and not _frozen(m)
        and not _frozen(merged[-1])
    ):
        prev = merged[-1]
        events.append(Repaired("merged", "", len(merged)))
        merged[-1] = PMessage(prev.role, prev.blocks + m.blocks, prev.source, prev.separate)
    else:
        merged.append(m)


def repair(messages: Sequence[PMessage]) -> tuple[list[PMessage], list[LayoutEvent]]:
    """Repair a projected conversation; returns ``(messages, events)``.

    Raises :class:`LayoutError` for a ``system`` message in the conversation (system content
    belongs in a pinned region; FC-17).
    """
    events: list[LayoutEvent] = []
    cleaned: list[PMessage] = []
    for i, m in enumerate(messages):
        if m.role == "system":
            raise LayoutError(
                f"conversation message {i} (source {m.source!r}) has role 'system'; "
                "put system content in a pinned region instead"
            )
        blocks = tuple(b for b in m.blocks if not (isinstance(b, Text) and not b.text))
        if blocks:
            cleaned.append(PMessage(m.role, blocks, m.source, m.separate))

    # where each call is made; duplicate call ids dropped
    call_at: dict[str, int] = {}
    deduped: list[PMessage] = []
    for i, m in enumerate(cleaned):
        kept: list[Block] = []
        for b in m.blocks:
            if isinstance(b, ToolUse):
                if b.id in call_at or m.role != "assistant":
                    events.append(Repaired("duplicate_call_dropped", b.id, i))
                    continue
                call_at[b.id] = i
            kept.append(b)
        deduped.append(PMessage(m.role, tuple(kept), m.source, m.separate))

    # assign results to their calls
    result_for: dict[str, ToolResult] = {}
    result_from: dict[str, int] = {}
    for j, m in enumerate(deduped):
        for b in m.blocks:
            if not isinstance(b, ToolResult):
                continue
            at = call_at.get(b.tool_use_id)
            if at is None or at >= j:
                events.append(OrphanResultDropped(b.tool_use_id, j))
            elif b.tool_use_id in result_for:
                events.append(Repaired("duplicate_result_dropped", b.tool_use_id, j))
            else:
                result_for[b.tool_use_id] = b
                result_from[b.tool_use_id] = j

    last_user_text = max((i for i, m in enumerate(deduped) if _is_user_text(m)), default=-1)

    placed: list[PMessage] = []
    for i, m in enumerate(deduped):
        placed += _place(m, i, result_for, result_from, last_user_text, events)

    merged: list[PMessage] = []
    for m in placed:
        _merge_into(merged, m, events)

    if merged and merged[0].role == "assistant":
        events.append(Repaired("conversation_start", "", 0))
        merged.insert(0, PMessage("user", (Text(CONVERSATION_START),), "synthetic:start"))
    return merged, events


# ---------------------------------------------------------------- checks on rendered payloads


def check_anthropic(payload: dict[str, Any]) -> list[str]:
    """Problems of an Anthropic Messages payload under W-A and L (empty list: well formed).

    The resumable check (:func:`regio.layout.wellformed.anthropic_range`) run over every
    message, then rule L (:func:`regio.layout.wellformed.anthropic_first_message`).
    """
    messages = payload.get("messages", [])
    return anthropic_range(messages, 0, {}) + anthropic_first_message(messages)


def check_openai_chat(payload: dict[str, Any]) -> list[str]:
    """Problems of an OpenAI Chat Completions payload under W-O and L (empty: well formed).

    The resumable check (:func:`regio.layout.wellformed.openai_chat_range`) run over every
    message from the empty :class:`~regio.layout.wellformed.ChatState`, then the
    end-of-payload problems (:func:`regio.layout.wellformed.openai_chat_end`).
    """
    messages = payload.get("messages", [])
    problems, states = openai_chat_range(messages, 0, ChatState())
    return problems + openai_chat_end(states[-1] if states else ChatState())


def check_first_message(messages: Sequence[PMessage]) -> bool:
    """Rule L on a projected list: the first message carries no tool result."""
    return not messages or not any(isinstance(b, ToolResult) for b in messages[0].blocks)
