"""A client's history items as engine messages, with the engine's own readers.

* Anthropic messages: :func:`regio.sdk._objects.message_of` (text, image, document,
  ``tool_use``, ``tool_result``, ``thinking`` blocks; ``redacted_thinking`` and server tool
  blocks kept as received, :class:`regio.content.ProviderBlock`). A user message that carries
  tool results and text (Claude Code adds reminders beside its results) becomes the ``tool``
  message of its results followed by a ``user`` message of the rest: the renderer merges them
  back into one user turn, results first, as the API requires.
* Chat Completions messages: :func:`regio.adapters.chat.chat_messages` (``user``,
  ``assistant`` with ``tool_calls``, ``tool``).
* Responses input items: :func:`regio.adapters.chat.response_items` (messages,
  ``function_call``, ``function_call_output``, Codex CLI's ``custom_tool_call`` /
  ``local_shell_call`` and their outputs, kept as sent (:mod:`regio.responses_items`);
  built-in tool calls that carry their result, such as ``web_search_call``, kept as received;
  ``reasoning`` items are the server's own and are left out). :func:`merge_calls` then
  joins ``function_call`` items to the assistant message before them, as one model turn.

A ``system`` / ``developer`` message after the history began (the leading ones are the system
prompt, :mod:`regio.proxy.dialects`) is kept in place as a ``user`` message: the conversation
has no system role. An item none of the readers can take (an Anthropic ``compaction`` block, a
Responses ``image_generation_call`` or a built-in call answered by an item of its own, an audio
part) raises :class:`regio.proxy.errors.PassThrough` naming it: the request then goes upstream
as the client sent it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from regio.adapters.chat import chat_messages, content_blocks, received_only, response_items
from regio.content import (
    ANTHROPIC_SERVER_CALLS,
    Block,
    Message,
    ProviderBlock,
    Text,
    ToolResult,
    ToolUse,
)
from regio.errors import RegioError
from regio.sdk._objects import message_of

from .errors import ClientRequestError, PassThrough

__all__ = ["item_messages", "merge_calls", "paused_call"]


def _anthropic(item: dict[str, Any], where: str) -> list[Message]:
    message = message_of(item)
    if message.role != "user":
        return [message]
    results = tuple(b for b in message.blocks if isinstance(b, ToolResult))
    if not results:
        return [message]
    rest = tuple(b for b in message.blocks if not isinstance(b, ToolResult))
    if any(isinstance(b, ToolUse) for b in rest):
        raise ClientRequestError(f"{where}: a user message cannot carry a tool_use block")
    out = [Message.tool(results)]
    if rest:
        out.append(Message("user", rest))
    return out


def _system_as_user(item: dict[str, Any], where: str) -> Message:
    blocks: list[Block] = content_blocks(item.get("content"), f"{where}.content")
    return Message("user", tuple(blocks) if blocks else (Text(""),))


def _next_item(item: dict[str, Any], after: msgspec.Raw | None) -> object:
    """The item after a ``reasoning`` item, decoded (``None`` for any other item: only a
    reasoning item looks ahead, to the built-in call it may go with)."""
    if item.get("type") != "reasoning" or after is None:
        return None
    try:
        return msgspec.json.decode(after)
    except msgspec.DecodeError:
        return None


def item_messages(
    api: str, raw: msgspec.Raw, where: str, after: msgspec.Raw | None = None
) -> list[Message]:
    """The engine messages of one history item of ``api`` (module doc); ``after``: the item
    after it, if any (a Responses ``reasoning`` item is kept only before a built-in call kept
    as received, which OpenAI requires with it). Raises :class:`PassThrough` for an item the
    readers cannot take and :class:`ClientRequestError` for one that is not an object."""
    try:
        item = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ClientRequestError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(item, dict):
        raise ClientRequestError(f"{where}: expected an object, got {type(item).__name__}")
    try:
        if item.get("role") in ("system", "developer") and item.get("type", "message") == "message":
            return [_system_as_user(item, where)]
        if api == "anthropic":
            return _anthropic(item, where)
        if api == "openai_chat":
            return chat_messages([item])
        return response_items([item], then=_next_item(item, after))
    except RegioError as exc:  # SDKInputError, MediaError: a block regio has no type for
        raise PassThrough("unreadable_item", f"{where}: {exc}") from exc
    except (KeyError, TypeError, AttributeError) as exc:
        raise ClientRequestError(
            f"{where}: a field is missing or of the wrong type ({exc})"
        ) from exc


def paused_call(messages: Sequence[Message]) -> str | None:
    """The id of the server or MCP tool call that the last message, an assistant turn the API
    paused (``stop_reason: pause_turn``), leaves unanswered; ``None`` when there is none."""
    if not messages or messages[-1].role != "assistant":
        return None
    blocks = [b.block for b in messages[-1].blocks if isinstance(b, ProviderBlock)]
    answered = [b.get("tool_use_id") for b in blocks if b.get("type") not in ANTHROPIC_SERVER_CALLS]
    calls = [b.get("id") for b in blocks if b.get("type") in ANTHROPIC_SERVER_CALLS]
    return next((str(c) for c in calls if c not in answered), None)  # ids of any JSON type


def merge_calls(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each assistant message made only of tool calls joined to the assistant
    message right before it (Responses sends each ``function_call`` as an item of its own), and
    each made only of items kept as received (a built-in call) joined to one made only of such
    items right before it (its ``reasoning`` item), so they stay together."""
    out: list[Message] = []
    for m in messages:
        received = received_only(m) and bool(out) and received_only(out[-1])
        calls = (
            m.role == "assistant"
            and bool(m.blocks)
            and all(isinstance(b, ToolUse) for b in m.blocks)
            and bool(out)
            and out[-1].role == "assistant"
        )
        if received or calls:
            out[-1] = Message("assistant", (*out[-1].blocks, *m.blocks))
        else:
            out.append(m)
    return out
