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
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from regio.content import Block, Message, Text, ToolResult, ToolUse

from .chat import chat_messages, content_text

__all__ = ["RegioHistory"]


def _to_regio(message: Any) -> list[Message]:
    out: list[Message] = []
    if isinstance(message, ModelResponse):
        blocks: list[Block] = []
        for part in message.parts:
            if isinstance(part, TextPart) and part.content:
                blocks.append(Text(part.content))
            elif isinstance(part, ToolCallPart):
                blocks.append(ToolUse(part.tool_call_id, part.tool_name, part.args_as_dict()))
        return [Message("assistant", tuple(blocks))] if blocks else []
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            out.append(Message("user", (Text(content_text(part.content)),)))
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
            request.append(UserPromptPart(message.text))
    if request:
        out.append(ModelRequest(parts=request))
    return out


class RegioHistory:
    """History processor over ``engine`` (module doc); one per conversation."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.seen = 0

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Append the messages new since the last call; return regio's window."""
        for message in messages[self.seen :]:
            for converted in _to_regio(message):
                self.engine.add_message(converted)
        window = _from_chat(self.engine.request("openai")[1]["messages"])
        self.seen = len(window)  # pydantic-ai replaces its history with what is returned
        return window
