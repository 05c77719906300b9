"""Resumable W/L checks of rendered payloads (field-cases.md section 0, rules W-A, W-O and L).

This is the one implementation of those rules. :func:`regio.layout.repair.check_anthropic` and
:func:`regio.layout.repair.check_openai_chat` run it over a whole payload; the functions here
check a range of messages, from a state carried over the messages before it, so a renderer that
reuses the front of the previous payload (:mod:`regio.layout.rendercache`) validates only the
changed tail:

* Anthropic: the problems of message ``n`` depend on messages ``n - 1`` and ``n + 1`` and on the
  ``tool_use`` ids of messages ``< n`` (``seen``: id -> first message index);
* OpenAI Chat: the problems of message ``n`` depend on a small state (:class:`ChatState`) left
  by the messages before it; :func:`openai_chat_end` gives the end-of-payload problems.

``full = range(0, s) + range(s, len)`` (plus rule L) holds for every split ``s``; the property
tests check a split at a random point against the single whole-range run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

__all__ = [
    "ChatState",
    "anthropic_first_message",
    "anthropic_range",
    "openai_chat_end",
    "openai_chat_range",
    "tool_use_ids",
]


def _blocks_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def tool_use_ids(message: dict[str, Any]) -> tuple[str, ...]:
    """The ``tool_use`` ids of an Anthropic assistant message (empty for other roles)."""
    if message["role"] != "assistant":
        return ()
    return tuple(b["id"] for b in _blocks_of(message) if b.get("type") == "tool_use")


def anthropic_range(
    messages: Sequence[dict[str, Any]],
    start: int,
    seen: dict[str, int],
    stop: int | None = None,
) -> list[str]:
    """W-A problems of ``messages[start:stop]`` (Anthropic Messages; their neighbours outside
    the range are read), in message order.

    ``seen`` maps every ``tool_use`` id of ``messages[:start]`` to the first message carrying
    it; it is updated in place with the ids of the checked messages.
    """
    problems: list[str] = []
    for n in range(start, len(messages) if stop is None else stop):
        msg = messages[n]
        blocks = _blocks_of(msg)
        if msg["role"] == "assistant":
            ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            for cid in ids:
                if cid in seen:
                    problems.append(f"W-A.4: tool_use id {cid} appears twice")
                else:
                    seen[cid] = n
            if ids:
                nxt = _blocks_of(messages[n + 1]) if n + 1 < len(messages) else []
                answers = [b["tool_use_id"] for b in nxt if b.get("type") == "tool_result"]
                for cid in ids:
                    if answers.count(cid) != 1:
                        problems.append(
                            f"W-A.2: tool_use {cid} not answered once in message {n + 1}"
                        )
            continue
        prev_ids: set[str] = set()
        if n > 0 and messages[n - 1]["role"] == "assistant":
            prev_ids = set(tool_use_ids(messages[n - 1]))
        seen_other = False
        for b in blocks:
            if b.get("type") == "tool_result":
                if b["tool_use_id"] not in prev_ids:
                    problems.append(
                        f"W-A.1: tool_result {b['tool_use_id']} in message {n} "
                        "does not answer the message before it"
                    )
                if seen_other:
                    problems.append(f"W-A.3: tool_result after other content in message {n}")
            else:
                seen_other = True
    return problems


def anthropic_first_message(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Rule L on an Anthropic payload: the first message carries no ``tool_result``."""
    if messages and any(b.get("type") == "tool_result" for b in _blocks_of(messages[0])):
        return ["L: the first message carries a tool_result"]
    return []


@attrs.frozen
class ChatState:
    """What the OpenAI Chat check carries between messages: the calls of the last assistant
    message (``open_calls``), those answered since (``answered``), the previous role and
    whether the first conversational message is still to come."""

    open_calls: tuple[str, ...] = ()
    answered: frozenset[str] = frozenset()
    prev_role: str | None = None
    first_conv: bool = True


def openai_chat_range(
    messages: Sequence[dict[str, Any]], start: int, state: ChatState
) -> tuple[list[str], list[ChatState]]:
    """W-O and L problems of ``messages[start:]`` (OpenAI Chat Completions) from ``state``
    (the state before ``messages[start]``); returns the problems and the state after each
    checked message."""
    problems: list[str] = []
    states: list[ChatState] = []
    open_calls = list(state.open_calls)
    answered = set(state.answered)
    prev_role = state.prev_role
    first_conv = state.first_conv
    for n in range(start, len(messages)):
        msg = messages[n]
        role = msg["role"]
        if role != "system" and first_conv:
            first_conv = False
            if role == "tool":
                problems.append("L: the first conversational message has role tool")
        if role == "tool":
            if prev_role in ("system", "user"):
                problems.append(f"W-O.3: tool message {n} directly after a {prev_role} message")
            cid = msg.get("tool_call_id")
            if cid not in open_calls:
                problems.append(f"W-O.1: tool message {n} answers {cid}, not a pending call")
            elif cid in answered:
                problems.append(f"W-O.2: {cid} answered twice")
            answered.add(cid)  # type: ignore[arg-type]
        else:
            missing = [c for c in open_calls if c not in answered]
            if missing:
                problems.append(f"W-O.2: calls {missing} unanswered before message {n}")
            open_calls = []
            answered = set()
            if role == "assistant":
                open_calls = [c["id"] for c in msg.get("tool_calls") or []]
        prev_role = role
        states.append(ChatState(tuple(open_calls), frozenset(answered), prev_role, first_conv))
    return problems, states


def openai_chat_end(state: ChatState) -> list[str]:
    """End-of-payload problems from the state after the last message (calls never
    answered)."""
    missing = [c for c in state.open_calls if c not in state.answered]
    return [f"W-O.2: calls {missing} unanswered at the end"] if missing else []
