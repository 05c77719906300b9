"""OpenAI message shapes <-> regio messages, shared by the adapters.

Chat Completions messages (https://platform.openai.com/docs/api-reference/chat/create):
``user`` / ``assistant`` (``content``, ``tool_calls``) / ``tool`` (``tool_call_id``); Responses
input items (https://platform.openai.com/docs/api-reference/responses/create): messages with a
``role``, ``function_call`` and ``function_call_output`` items, and the custom tool and local
shell calls and their outputs (:mod:`regio.responses_items`: a :class:`ToolUse` /
:class:`ToolResult` keeping the item's own fields, so it renders back as sent), and built-in
tool calls that carry their own result (``web_search_call``, ...:
:data:`regio.content.RESPONSES_PROVIDER_ITEMS`), each an assistant message of one
:class:`regio.content.ProviderBlock`, sent back as received.
``system`` / ``developer`` messages are skipped: the blueprint's pinned regions hold the
instructions.

Content (a string or a list of parts), by :func:`content_blocks`: text parts (``text``,
``input_text``, ``output_text``, ``refusal``) that follow each other become one text block,
joined by a blank line; image and file parts (Chat ``image_url`` / ``file``, Responses
``input_image`` / ``input_file``, Anthropic ``image`` / ``document``) become
:class:`regio.media.Image` / :class:`regio.media.Document` blocks in their place
(:func:`regio.sdk._media.media_of_part`); in a tool result they are the result's
``media``. Any other part (audio, a file id) raises :class:`SDKInputError` naming its index.

A Responses ``reasoning`` item is the server's own; :func:`response_items` leaves it out unless
asked to keep it with its turn (the Agents SDK session does: :func:`reasoning_block`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from regio.callargs import function_arguments
from regio.content import (
    RESPONSES_PROVIDER_ITEMS,
    Block,
    Document,
    Image,
    Message,
    ProviderBlock,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
    canonical_json,
)
from regio.responses_items import call_block, is_call, is_output, output_call_id, output_shell
from regio.sdk._media import media_of_part
from regio.sdk._objects import SDKInputError
from regio.sdk._read import plain_dict

__all__ = [
    "chat_messages",
    "content_blocks",
    "content_text",
    "reasoning_block",
    "reasoning_item",
    "response_items",
]

_TEXT_PARTS = ("text", "input_text", "output_text")


def _part_text(part: object) -> str | None:
    """The text of a text or refusal part (a bare string counts), else ``None``."""
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return None
    if part.get("type") in _TEXT_PARTS:
        return str(part.get("text") or "")
    if part.get("type") == "refusal":
        return str(part.get("refusal") or "")
    if "type" not in part and "text" in part:
        return str(part["text"])
    return None


def content_text(content: object) -> str:
    """The text of a message ``content``: a string, or the text parts of a part list joined by
    a blank line (``"\\n\\n"``); image and file parts have no text and are not part of it."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [_part_text(p) for p in content]
        return "\n\n".join(t for t in texts if t)
    return str(content)


def content_blocks(content: object, where: str = "content") -> list[Block]:
    """The text, image and document blocks of a message ``content`` (module doc), in order.
    Raises :class:`SDKInputError` naming ``where[index]`` for a part that is neither text nor
    an image or file, and :class:`regio.media.MediaError` for bad media data."""
    if content is None:
        return []
    if not isinstance(content, list):
        text = content_text(content)
        return [Text(text)] if text else []
    blocks: list[Block] = []
    texts: list[str] = []
    for n, part in enumerate(content):
        part_text = _part_text(part)
        if part_text is not None:
            if part_text:
                texts.append(part_text)
            continue
        media = media_of_part(part, f"{where}[{n}]") if isinstance(part, Mapping) else None
        if media is None:
            kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
            raise SDKInputError(
                f"{where}[{n}]: cannot read a {kind!r} part; regio reads text, image and file parts"
            )
        if texts:
            blocks.append(Text("\n\n".join(texts)))
            texts = []
        blocks.append(media)
    if texts:
        blocks.append(Text("\n\n".join(texts)))
    return blocks


def _user(content: object, where: str) -> Message:
    blocks = content_blocks(content, where)
    return Message("user", tuple(blocks) if blocks else (Text(""),))


def _result(
    call_id: str,
    content: object,
    where: str,
    item: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET,
) -> ToolResult:
    blocks = content_blocks(content, where)
    text = "\n\n".join(b.text for b in blocks if isinstance(b, Text))
    media = tuple(b for b in blocks if isinstance(b, Image | Document))
    return ToolResult(call_id, text, media=media, item=item)


def _tool_result(call_id: str, content: object, where: str) -> Message:
    return Message.tool((_result(call_id, content, where),))


def _item(raw: object, where: str) -> Mapping[str, Any]:
    """One message or input item as a mapping (an SDK object's ``model_dump``); raises
    :class:`SDKInputError` naming ``where`` for anything else (``None``, a string, ...)."""
    item = plain_dict(raw, exclude_none=True)
    if item is None:
        raise SDKInputError(
            f"{where}: cannot read a {type(raw).__name__}; expected a message or input item "
            "object (a dict with a role or a type)"
        )
    return item


def _id(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise SDKInputError(f"{where}: {key!r} is missing or not text")
    return str(value)


def _thinking_only(message: Message) -> bool:
    return all(isinstance(b, Thinking) for b in message.blocks)


def chat_messages(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """regio messages of Chat Completions message dicts (module doc). Raises
    :class:`SDKInputError` naming the index for an unknown role or part."""
    out: list[Message] = []
    for index, raw in enumerate(messages):
        m = _item(raw, f"messages[{index}]")
        role = m.get("role")
        where = f"messages[{index}].content"
        if role in ("system", "developer"):
            continue
        if role == "user":
            out.append(_user(m.get("content"), where))
        elif role == "assistant":
            blocks: list[Block] = []
            text = content_text(m.get("content"))
            if text:
                blocks.append(Text(text))
            for n, raw_call in enumerate(m.get("tool_calls") or []):
                call = _item(raw_call, f"messages[{index}].tool_calls[{n}]")
                fn = _item(call.get("function") or {}, f"messages[{index}].tool_calls[{n}]")
                args = function_arguments(fn.get("arguments"))
                at = f"messages[{index}].tool_calls[{n}]"
                name = _id(fn, "name", f"{at}.function")
                blocks.append(ToolUse(_id(call, "id", at), name, args))
            out.append(Message("assistant", tuple(blocks)))
        elif role == "tool":
            call_id = _id(m, "tool_call_id", f"messages[{index}]")
            out.append(_tool_result(call_id, m.get("content"), where))
        else:
            raise SDKInputError(f"messages[{index}]: unknown role {role!r}")
    return out


def reasoning_block(item: Mapping[str, Any]) -> Thinking:
    """The thinking block of a Responses ``reasoning`` item: its summary text as the thinking,
    the whole item (canonical JSON, ``None`` fields left out) as the signature, so
    :func:`reasoning_item` gives it back as the model sent it."""
    summary = item.get("summary") or []
    texts = [str(s.get("text") or "") for s in summary if isinstance(s, Mapping)]
    body = {k: v for k, v in item.items() if v is not None}
    return Thinking("\n\n".join(t for t in texts if t), canonical_json(body).decode())


def reasoning_item(block: Thinking) -> dict[str, Any] | None:
    """The Responses ``reasoning`` item a thinking block holds (:func:`reasoning_block`),
    ``None`` for any other thinking block (Anthropic's, a summary without its item)."""
    if not block.signature.startswith("{"):
        return None
    try:
        item = json.loads(block.signature)
    except ValueError:
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


def _calls_next(items: list[Any], index: int, then: object) -> bool:
    """Whether the item after ``items[index]`` (``then`` after the last) is a built-in call
    kept as received."""
    after = items[index + 1] if index + 1 < len(items) else then
    kind = after.get("type") if isinstance(after, Mapping) else None
    return isinstance(kind, str) and kind in RESPONSES_PROVIDER_ITEMS


def received_only(message: Message) -> bool:
    """Whether ``message`` is an assistant message made only of blocks kept as received."""
    return (
        message.role == "assistant"
        and bool(message.blocks)
        and all(isinstance(b, ProviderBlock) for b in message.blocks)
    )


def response_items(
    items: Iterable[Mapping[str, Any]], *, reasoning: bool = False, then: object = None
) -> list[Message]:
    """regio messages of Responses input items (module doc); consecutive ``function_call``
    items join the assistant message before them. ``reasoning``: a ``reasoning`` item opens
    the assistant message of its turn as a thinking block holding the item
    (:func:`reasoning_block`; the message and calls after it join it), else it is left out;
    a built-in call kept as received (:data:`regio.content.RESPONSES_PROVIDER_ITEMS`) and the
    ``reasoning`` item right before it, which OpenAI requires with it, are
    :class:`ProviderBlock` s, consecutive ones in one assistant message; ``then``: the item
    after the last of ``items``, for a caller that reads them one at a time.
    Raises :class:`SDKInputError` naming the index for an item or part it cannot read."""
    out: list[Message] = []
    seq = list(items)
    for index, raw in enumerate(seq):
        item = _item(raw, f"items[{index}]")
        kind = item.get("type", "message")
        role = item.get("role")
        where = f"items[{index}]"
        if kind == "message" and role in ("system", "developer"):
            continue
        if kind == "message" and role == "user":
            out.append(_user(item.get("content"), f"{where}.content"))
        elif kind == "message" and role == "assistant":
            text = Text(content_text(item.get("content")))
            if out and out[-1].role == "assistant" and _thinking_only(out[-1]):
                out[-1] = Message("assistant", (*out[-1].blocks, text))
            else:
                out.append(Message("assistant", (text,)))
        elif kind == "function_call":
            args = function_arguments(item.get("arguments"))
            call = ToolUse(_id(item, "call_id", where), _id(item, "name", where), args)
            if out and out[-1].role == "assistant":
                out[-1] = Message("assistant", (*out[-1].blocks, call))
            else:
                out.append(Message("assistant", (call,)))
        elif kind == "function_call_output":
            output = item.get("output")
            out.append(_tool_result(_id(item, "call_id", where), output, f"{where}.output"))
        elif is_call(kind):
            call = call_block(item, where)
            if out and out[-1].role == "assistant":
                out[-1] = Message("assistant", (*out[-1].blocks, call))
            else:
                out.append(Message("assistant", (call,)))
        elif is_output(kind):
            call_id = output_call_id(item, where)
            shell = output_shell(item)
            out.append(
                Message.tool((_result(call_id, item.get("output"), f"{where}.output", shell),))
            )
        elif (isinstance(kind, str) and kind in RESPONSES_PROVIDER_ITEMS) or (
            kind == "reasoning" and _calls_next(seq, index, then)
        ):
            kept = ProviderBlock.received("openai_responses", item)
            if out and received_only(out[-1]):
                out[-1] = Message("assistant", (*out[-1].blocks, kept))
            else:
                out.append(Message("assistant", (kept,)))
        elif kind == "reasoning" and reasoning:
            block = reasoning_block(item)
            if out and out[-1].role == "assistant" and _thinking_only(out[-1]):
                out[-1] = Message("assistant", (*out[-1].blocks, block))
            else:
                out.append(Message("assistant", (block,)))
        elif kind == "reasoning":
            continue
        else:
            raise SDKInputError(
                f"{where}: cannot read a {kind!r} item (role {role!r}); regio reads "
                "messages, reasoning, function_call, custom_tool_call and local_shell_call "
                "items and their outputs, and built-in tool calls that carry their result "
                f"({', '.join(sorted(RESPONSES_PROVIDER_ITEMS))})"
            )
    return out
