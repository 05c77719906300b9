"""OpenAI message shapes <-> regio messages, shared by the adapters.

Chat Completions messages (https://platform.openai.com/docs/api-reference/chat/create):
``user`` / ``assistant`` (``content``, ``tool_calls``) / ``tool`` (``tool_call_id``); Responses
input items (https://platform.openai.com/docs/api-reference/responses/create): messages with a
``role``, ``function_call`` and ``function_call_output`` items. ``system`` / ``developer``
messages are skipped: the blueprint's pinned regions hold the instructions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from regio.callargs import function_arguments
from regio.content import Block, Message, Text, ToolResult, ToolUse
from regio.runtime.sdk import SDKInputError

__all__ = ["chat_messages", "content_text", "response_items"]


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string, or a list of parts with ``text``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text") or p.get("refusal") or "") if isinstance(p, Mapping) else str(p)
            for p in content
        )
    return str(content)


def chat_messages(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """regio messages of Chat Completions message dicts (module doc). Raises
    :class:`SDKInputError` naming the index for an unknown role."""
    out: list[Message] = []
    for index, m in enumerate(messages):
        role = m.get("role")
        if role in ("system", "developer"):
            continue
        if role == "user":
            out.append(Message("user", (Text(content_text(m.get("content"))),)))
        elif role == "assistant":
            blocks: list[Block] = []
            text = content_text(m.get("content"))
            if text:
                blocks.append(Text(text))
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                blocks.append(
                    ToolUse(
                        str(call["id"]),
                        str(fn.get("name")),
                        function_arguments(fn.get("arguments")),
                    )
                )
            out.append(Message("assistant", tuple(blocks)))
        elif role == "tool":
            result = ToolResult(str(m.get("tool_call_id")), content_text(m.get("content")))
            out.append(Message.tool((result,)))
        else:
            raise SDKInputError(f"messages[{index}]: unknown role {role!r}")
    return out


def response_items(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """regio messages of Responses input items (module doc); consecutive ``function_call``
    items join the assistant message before them. Raises :class:`SDKInputError` naming the
    index for an item it cannot read."""
    out: list[Message] = []
    for index, item in enumerate(items):
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "message" and role in ("system", "developer"):
            continue
        if kind == "message" and role in ("user", "assistant"):
            out.append(Message(role, (Text(content_text(item.get("content"))),)))
        elif kind == "function_call":
            call = ToolUse(
                str(item["call_id"]), str(item["name"]), function_arguments(item.get("arguments"))
            )
            if out and out[-1].role == "assistant":
                out[-1] = Message("assistant", (*out[-1].blocks, call))
            else:
                out.append(Message("assistant", (call,)))
        elif kind == "function_call_output":
            result = ToolResult(str(item["call_id"]), content_text(item.get("output")))
            out.append(Message.tool((result,)))
        elif kind == "reasoning":
            continue
        else:
            raise SDKInputError(
                f"items[{index}]: cannot read a {kind!r} item (role {role!r}); regio reads "
                "messages, function_call and function_call_output items"
            )
    return out
