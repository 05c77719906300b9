"""A pydantic-ai history processor that hands the model regio's window (extra
``regio[pydantic-ai]``).

``Agent(model, capabilities=[ProcessHistory(RegioHistory(engine))])``
(``pydantic_ai.capabilities.ProcessHistory``): before each model request pydantic-ai passes
the message history (https://ai.pydantic.dev/message-history/); the
processor appends what is new to the engine (user prompts, the model's text and tool calls,
tool returns) and returns the engine's laid-out window as pydantic-ai messages: pinned
instructions as a system prompt, then the compacted history and the recent turns. pydantic-ai
replaces the run's history with the returned window, so the next call passes the window plus
what happened since.

Images and documents travel both ways: a ``UserPromptPart``'s ``ImageUrl``, ``DocumentUrl`` and
``BinaryContent`` (an image, a PDF or plain text) become regio image / document blocks, and the
window's media come back as ``BinaryContent`` (inline bytes) or ``ImageUrl`` / ``DocumentUrl``
(https://ai.pydantic.dev/input/). Audio and video have no regio block and raise
:class:`regio.runtime.sdk.SDKInputError` naming the part.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from regio.callargs import function_arguments
from regio.content import Block, Document, Image, Message, Text, ToolResult, ToolUse
from regio.media import Base64Source, URLSource
from regio.runtime.sdk import SDKInputError

from .chat import chat_messages, content_text

__all__ = ["RegioHistory"]


def _binary_block(item: BinaryContent, where: str) -> Block:
    if item.is_image:
        return Image.from_bytes(item.data, item.media_type)
    if item.media_type == "application/pdf":
        return Document.pdf(item.data, title=item.identifier)
    if item.media_type.startswith("text/"):
        return Document.text(item.data.decode("utf-8", "replace"), title=item.identifier)
    raise SDKInputError(
        f"{where}: cannot read BinaryContent of type {item.media_type!r}; regio reads images, "
        "PDFs and plain text"
    )


def _user_blocks(content: Any, where: str) -> tuple[Block, ...]:
    """The blocks of a ``UserPromptPart.content`` (a string or a list of user content)."""
    if isinstance(content, str):
        return (Text(content),)
    blocks: list[Block] = []
    for n, item in enumerate(content):
        at = f"{where}[{n}]"
        if isinstance(item, str):
            blocks.append(Text(item))
        elif isinstance(item, ImageUrl):
            blocks.append(Image(URLSource(item.url, item.media_type or "")))
        elif isinstance(item, DocumentUrl):
            blocks.append(Document(URLSource(item.url, item.media_type or "")))
        elif isinstance(item, BinaryContent):
            blocks.append(_binary_block(item, at))
        else:
            raise SDKInputError(
                f"{at}: cannot read a {type(item).__name__}; regio reads text, ImageUrl, "
                "DocumentUrl and BinaryContent (images, PDFs, plain text)"
            )
    return tuple(blocks) or (Text(""),)


def _user_content(message: Message) -> Any:
    """A ``UserPromptPart.content`` of a regio user message: its text, or text and media."""
    if not any(isinstance(b, Image | Document) for b in message.blocks):
        return message.text
    out: list[Any] = []
    for b in message.blocks:
        if isinstance(b, Text):
            out.append(b.text)
        elif isinstance(b, Image | Document) and isinstance(b.source, URLSource):
            kind = ImageUrl if isinstance(b, Image) else DocumentUrl
            out.append(kind(b.source.url, media_type=b.source.media_type or None))
        elif isinstance(b, Image | Document) and isinstance(b.source, Base64Source):
            data = base64.b64decode(b.source.data)
            title = b.title if isinstance(b, Document) else None
            out.append(BinaryContent(data, media_type=b.source.media_type, identifier=title))
    return out


def _to_regio(message: Any) -> list[Message]:
    out: list[Message] = []
    if isinstance(message, ModelResponse):
        blocks: list[Block] = []
        for part in message.parts:
            if isinstance(part, TextPart) and part.content:
                blocks.append(Text(part.content))
            elif isinstance(part, ToolCallPart):
                args = function_arguments(part.args)  # unreadable: the shared invalid form
                blocks.append(ToolUse(part.tool_call_id, part.tool_name, args))
        return [Message("assistant", tuple(blocks))] if blocks else []
    for n, part in enumerate(message.parts):
        if isinstance(part, UserPromptPart):
            out.append(Message("user", _user_blocks(part.content, f"parts[{n}].content")))
        elif isinstance(part, ToolReturnPart):
            result = ToolResult(part.tool_call_id, part.model_response_str())
            out.append(Message.tool((result,)))
    return out


def _from_chat(messages: list[dict[str, Any]]) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    system = "\n\n".join(
        content_text(m.get("content")) for m in messages if m.get("role") == "system"
    )
    names: dict[str, str] = {}
    request: list[Any] = [SystemPromptPart(system)] if system else []
    for message in chat_messages(messages):
        if message.role == "assistant":
            if request:
                out.append(ModelRequest(parts=request))
                request = []
            parts: list[Any] = [TextPart(b.text) for b in message.blocks if isinstance(b, Text)]
            for call in message.tool_calls:
                names[call.id] = call.name
                parts.append(ToolCallPart(call.name, json.dumps(call.input), tool_call_id=call.id))
            out.append(ModelResponse(parts=parts))
        elif message.role == "user" and message.tool_results:
            for r in message.tool_results:
                name = names.get(r.tool_use_id, "tool")
                request.append(ToolReturnPart(name, r.content, tool_call_id=r.tool_use_id))
        else:
            request.append(UserPromptPart(_user_content(message)))
    if request:
        out.append(ModelRequest(parts=request))
    return out


class RegioHistory:
    """History processor over ``engine`` (module doc); one per conversation."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.last: list[ModelMessage] = []

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Append the messages new since the last call; return regio's window. pydantic-ai
        replaces its history with what is returned, so a call that continues it starts with
        the window returned last; a run without ``message_history`` does not, and all of its
        messages are new."""
        last = self.last
        new = messages[len(last) :] if messages[: len(last)] == last else messages
        for message in new:
            for converted in _to_regio(message):
                self.engine.add_message(converted)
        window = _from_chat(self.engine.request("openai")[1]["messages"])
        self.last = window
        return window
