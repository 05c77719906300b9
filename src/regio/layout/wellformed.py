"""W/L checks of rendered payloads (rules W-A, W-O and L of the tool-call pairing rules).

The one implementation of those rules, run over a payload's messages:
:func:`anthropic_problems` (Anthropic Messages: every ``tool_use`` answered once in the next
message, results first in their message, no id twice, no result in the first message, every
``tool_use`` id and ``tool_use_id`` matching ``^[a-zA-Z0-9_-]+$``: W-A.5),
:func:`openai_chat_problems` (Chat Completions: ``tool`` messages answer the pending calls of
the assistant message before them, each once, none after a user or system message, the first
conversational message is not a ``tool`` message, every ``tool_calls[].id`` and
``tool_call_id`` text of 1 to 40 characters: W-O.4) and :func:`openai_responses_problems`
(Responses ``input``: every output item answers an earlier call item, a custom tool call's
with a custom tool output). The id rules are the providers' (HTTP 400 "String should match
pattern" from Anthropic, ``string_above_max_length`` from OpenAI), read by
:func:`regio.callids.id_problem`. :func:`regio.layout.check_anthropic`,
:func:`regio.layout.check_openai_chat` and
:func:`regio.layout.render.openai.check_openai_responses` apply them to a payload.

Each check reads the list in order, and can resume from a :class:`CheckProgress` kept from an
earlier list the new one starts with (a session's rendered prefix,
:mod:`regio.layout.render.prefix`), so a request checks only the messages after it.
"""

from __future__ import annotations

import copy
from collections import ChainMap
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any, TypeVar

from regio.callids import MAX_ID_CHARS, id_problem
from regio.responses_items import is_call, is_output

__all__ = [
    "CallsProgress",
    "ChatProgress",
    "CheckProgress",
    "anthropic_problems",
    "openai_chat_problems",
    "openai_responses_problems",
    "tool_use_ids",
]

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


_P = TypeVar("_P", bound="CheckProgress")


class CheckProgress:
    """How far a check got through a list of messages (or input items) that later lists start
    with too (a session's final conversation prefix,
    :class:`regio.layout.render.prefix.MessagePrefix`): ``checked`` messages and the problems
    found in them; a subclass adds the check's state after them. A check reads only what
    precedes a message, except the Anthropic one (the message after it too): the caller lets
    the progress move only over messages whose neighbours are settled as well."""

    __slots__ = ("checked", "problems")

    def __init__(self) -> None:
        self.checked = 0
        self.problems: list[str] = []

    def resumed(self: _P) -> _P:
        """A state to go on from without moving this one: the problems copied, the
        subclass's containers copied or layered over this one's (O(1) for the ones that
        grow with the session)."""
        out = copy.copy(self)
        out.problems = list(self.problems)
        return out


def _run(
    messages: Sequence[dict[str, Any]],
    step: Callable[[Sequence[dict[str, Any]], int, _P], None],
    fresh: _P,
    progress: _P | None,
    settled: int,
) -> _P:
    """The state after ``step`` has read every message of ``messages``: from ``fresh``, or,
    with ``progress`` (of a list ``messages`` starts with) that stopped at most ``settled``
    messages in, from ``progress`` moved on to ``settled`` first (``settled``: how many leading
    messages every later list shares). O(messages after ``progress.checked``)."""
    if progress is None or progress.checked > settled:
        state, start = fresh, 0
    else:
        for n in range(progress.checked, min(settled, len(messages))):
            step(messages, n, progress)
            progress.checked = n + 1
        state, start = progress.resumed(), progress.checked
    for n in range(start, len(messages)):
        step(messages, n, state)
    return state


class CallsProgress(CheckProgress):
    """:class:`CheckProgress` of the checks whose state is the calls the checked messages
    made, by call id: :func:`anthropic_problems` (``tool_use`` id -> message number) and
    :func:`openai_responses_problems` (call item id -> item type). A resumed state layers
    its own calls over these (O(1))."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        super().__init__()
        self.calls: MutableMapping[str, Any] = {}

    def resumed(self) -> CallsProgress:
        out = CheckProgress.resumed(self)
        out.calls = ChainMap({}, self.calls)
        return out


def _check_anthropic_message(
    messages: Sequence[dict[str, Any]], n: int, state: CallsProgress
) -> None:
    """Append the W-A problems of message ``n`` (read with ``n - 1`` and ``n + 1``)."""
    made, problems = state.calls, state.problems
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
            if cid in made:
                problems.append(f"W-A.4: tool_use id {cid} appears twice")
            else:
                made[cid] = n
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
    progress: CallsProgress | None = None,
    settled: int = 0,
) -> list[str]:
    """W-A and L problems of an Anthropic Messages list, in message order (empty: well
    formed). With ``progress`` (of a list ``messages`` starts with: what an earlier call
    checked of it), the check resumes where it stopped, when that is at most ``settled``
    messages in, and moves ``progress`` on to ``settled``: the first ``settled`` messages and
    the one after them are the same in every later list checked with it. O(messages after
    ``progress.checked``)."""
    state = _run(messages, _check_anthropic_message, CallsProgress(), progress, settled)
    problems = state.problems
    if messages and any(b.get("type") == "tool_result" for b in _blocks_of(messages[0])):
        problems.append("L: the first message carries a tool_result")
    return problems


class ChatProgress(CheckProgress):
    """:class:`CheckProgress` of :func:`openai_chat_problems`: the calls of the last
    assistant message still open (``open_calls``) and those answered (``answered``), the role
    of the last checked message (``prev_role``), whether no conversational message came yet
    (``first_conv``); ``lead``: how many messages (the system message) came before the ones
    the caller keeps (a progress made with another lead does not apply)."""

    __slots__ = ("answered", "first_conv", "lead", "open_calls", "prev_role")

    def __init__(self, lead: int = 0) -> None:
        super().__init__()
        self.lead = lead
        self.open_calls: list[str] = []
        self.answered: set[str] = set()
        self.prev_role: str | None = None
        self.first_conv = True

    def resumed(self) -> ChatProgress:
        out = CheckProgress.resumed(self)
        out.open_calls, out.answered = list(self.open_calls), set(self.answered)
        return out


def _check_chat_message(messages: Sequence[dict[str, Any]], n: int, state: ChatProgress) -> None:
    """Append the W-O and L problems of message ``n`` (read after the ones before it)."""
    msg, problems = messages[n], state.problems
    role = msg["role"]
    problems.extend(_openai_id_problems(msg, n))
    if role != "system" and state.first_conv:
        state.first_conv = False
        if role == "tool":
            problems.append("L: the first conversational message has role tool")
    if role == "tool":
        if state.prev_role in ("system", "user"):
            problems.append(f"W-O.3: tool message {n} directly after a {state.prev_role} message")
        cid = msg.get("tool_call_id")
        if cid not in state.open_calls:
            problems.append(f"W-O.1: tool message {n} answers {cid}, not a pending call")
        elif cid in state.answered:
            problems.append(f"W-O.2: {cid} answered twice")
        state.answered.add(cid)  # type: ignore[arg-type]
    else:
        missing = [c for c in state.open_calls if c not in state.answered]
        if missing:
            problems.append(f"W-O.2: calls {missing} unanswered before message {n}")
        state.open_calls = []
        state.answered = set()
        if role == "assistant":
            state.open_calls = [c["id"] for c in msg.get("tool_calls") or []]
    state.prev_role = role


def openai_chat_problems(
    messages: Sequence[dict[str, Any]],
    progress: ChatProgress | None = None,
    settled: int = 0,
) -> list[str]:
    """W-O and L problems of an OpenAI Chat Completions message list, in message order
    (empty: well formed). ``progress`` and ``settled`` as for :func:`anthropic_problems`
    (this check reads no message after the one it checks: ``settled`` may be every message
    later lists share)."""
    state = _run(messages, _check_chat_message, ChatProgress(), progress, settled)
    problems = state.problems
    missing = [c for c in state.open_calls if c not in state.answered]
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


def _check_responses_item(items: Sequence[dict[str, Any]], n: int, state: CallsProgress) -> None:
    """Note the call of input item ``n`` or append the problems of its output."""
    item = items[n]
    kind = item.get("type")
    if kind == "function_call" or is_call(kind):
        state.calls[str(item.get("call_id") or item.get("id"))] = kind
    elif kind == "function_call_output" or is_output(kind):
        answered = str(item.get("id") if kind == "local_shell_call_output" else item["call_id"])
        made = state.calls.get(answered)
        if made is None:
            state.problems.append(f"input item {n} answers {answered}, not an earlier call")
        elif (made == "custom_tool_call") != (kind == "custom_tool_call_output"):
            state.problems.append(f"input item {n} ({kind}) answers the {made} {answered}")


def openai_responses_problems(
    items: Sequence[dict[str, Any]],
    progress: CallsProgress | None = None,
    settled: int = 0,
) -> list[str]:
    """Problems of a Responses ``input`` list: every output item (``function_call_output``,
    ``custom_tool_call_output``, ``local_shell_call_output``) answers an earlier call item
    (``function_call``, ``custom_tool_call``, ``local_shell_call``), and a
    ``custom_tool_call`` is answered by a ``custom_tool_call_output`` (empty: well formed).
    ``progress`` and ``settled`` as for :func:`openai_chat_problems`."""
    return _run(items, _check_responses_item, CallsProgress(), progress, settled).problems
