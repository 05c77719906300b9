"""W/L checks of rendered payloads (rules W-A, W-O and L of the tool-call pairing rules).

The one implementation of those rules, run over a whole payload's messages:
:func:`anthropic_problems` (Anthropic Messages: every ``tool_use`` answered once in the next
message, results first in their message, no id twice, no result in the first message, every
``tool_use`` id and ``tool_use_id`` matching ``^[a-zA-Z0-9_-]+$``: W-A.5) and
:func:`openai_chat_problems` (Chat Completions: ``tool`` messages answer the pending calls of
the assistant message before them, each once, none after a user or system message, the first
conversational message is not a ``tool`` message, every ``tool_calls[].id`` and
``tool_call_id`` text of 1 to 40 characters: W-O.4). The id rules are the providers' (HTTP 400
"String should match pattern" from Anthropic, ``string_above_max_length`` from OpenAI), read by
:func:`regio.callids.id_problem`. :func:`regio.layout.check_anthropic` and
:func:`regio.layout.check_openai_chat` apply them to a payload.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from regio.callids import MAX_ID_CHARS, id_problem

__all__ = ["AnthropicProgress", "anthropic_problems", "openai_chat_problems", "tool_use_ids"]

#: The field holding the call id of each Anthropic block type that has one.
_ID_FIELDS = {"tool_use": "id", "tool_result": "tool_use_id"}


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


class AnthropicProgress:
    """How far :func:`anthropic_problems` got through a list of messages that later lists
    start with too (a session's final conversation prefix,
    :class:`regio.layout.render.prefix.MessagePrefix`): ``checked`` messages, the problems
    found in them and the ``tool_use`` ids they made (id -> message number). Messages are
    checked with their neighbours, so the caller lets the check run only over messages whose
    neighbours are settled too."""

    __slots__ = ("checked", "problems", "seen")

    def __init__(self) -> None:
        self.checked = 0
        self.problems: list[str] = []
        self.seen: dict[str, int] = {}


def _check_anthropic_message(
    messages: Sequence[dict[str, Any]], n: int, seen: dict[str, int], problems: list[str]
) -> None:
    """Append the W-A problems of message ``n`` (read with ``n - 1`` and ``n + 1``)."""
    msg = messages[n]
    blocks = _blocks_of(msg)
    for b in blocks:
        key = _ID_FIELDS.get(b.get("type", ""))
        problem = id_problem(b.get(key), max_chars=None) if key else None
        if problem is not None:
            problems.append(f"W-A.5: {b['type']} in message {n}: {problem}")
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
                    problems.append(f"W-A.2: tool_use {cid} not answered once in message {n + 1}")
        return
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


def anthropic_problems(
    messages: Sequence[dict[str, Any]],
    progress: AnthropicProgress | None = None,
    settled: int = 0,
) -> list[str]:
    """W-A and L problems of an Anthropic Messages list, in message order (empty: well
    formed). With ``progress`` (of a list ``messages`` starts with: what an earlier call
    checked of it), the check resumes where it stopped, when that is at most ``settled``
    messages in, and moves ``progress`` on to ``settled``: the first ``settled`` messages and
    the one after them are the same in every later list checked with it. O(messages after
    ``progress.checked``)."""
    if progress is None or progress.checked > settled:
        progress = None
        seen: dict[str, int] = {}
        problems: list[str] = []
        start = 0
    else:
        for n in range(progress.checked, min(settled, len(messages))):
            _check_anthropic_message(messages, n, progress.seen, progress.problems)
            progress.checked = n + 1
        seen, problems, start = dict(progress.seen), list(progress.problems), progress.checked
    for n in range(start, len(messages)):
        _check_anthropic_message(messages, n, seen, problems)
    if messages and any(b.get("type") == "tool_result" for b in _blocks_of(messages[0])):
        problems.append("L: the first message carries a tool_result")
    return problems


def openai_chat_problems(messages: Sequence[dict[str, Any]]) -> list[str]:
    """W-O and L problems of an OpenAI Chat Completions message list, in message order
    (empty: well formed)."""
    problems: list[str] = []
    open_calls: list[str] = []
    answered: set[str] = set()
    prev_role: str | None = None
    first_conv = True
    for n, msg in enumerate(messages):
        role = msg["role"]
        problems.extend(_openai_id_problems(msg, n))
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
    missing = [c for c in open_calls if c not in answered]
    if missing:
        problems.append(f"W-O.2: calls {missing} unanswered at the end")
    return problems


def _openai_id_problems(msg: dict[str, Any], n: int) -> list[str]:
    """W-O.4 for message ``n``: its call ids (``tool_calls[].id``, ``tool_call_id``) are text
    of 1 to :data:`regio.callids.MAX_ID_CHARS` characters (OpenAI checks no character set)."""
    ids = [c.get("id") for c in msg.get("tool_calls") or []]
    if msg["role"] == "tool":
        ids.append(msg.get("tool_call_id"))
    return [
        f"W-O.4: call id {cid!r} in message {n} is not text of 1 to {MAX_ID_CHARS} characters"
        for cid in ids
        if not isinstance(cid, str) or not 0 < len(cid) <= MAX_ID_CHARS
    ]
