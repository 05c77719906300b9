"""OpenAI renderers: Chat Completions messages and Responses input items.

Chat Completions (``POST /v1/chat/completions``): one ``system`` message (system blocks joined
by a blank line); ``user`` messages (a string, or text parts when a message has several
blocks); ``assistant`` messages with ``content`` (text, or ``null``) and ``tool_calls`` whose
``arguments`` are canonical JSON strings (sorted keys, no spaces); one ``role: tool`` message
per result; the tail as the last user message. Thinking blocks have no Chat Completions form and
are left out. The result is checked against W-O and L.

Responses (``POST /v1/responses``): ``instructions`` = the system text; ``input`` items:
messages, ``function_call`` (``call_id``, ``name``, ``arguments``) and
``function_call_output`` (``call_id``, ``output``); the tail as the last user item.

Both carry the request's ``prompt_cache_key`` (see :func:`regio.layout.prompt_cache_key`).
"""

from __future__ import annotations

from typing import Any

from regio.content import Text, Thinking, ToolResult, ToolUse, canonical_json

from .model import Request
from .render_common import group_messages_of
from .repair import LayoutError, check_openai_chat

__all__ = ["render_openai_chat", "render_openai_responses", "system_text"]


def system_text(request: Request) -> str:
    """All system blocks joined by a blank line."""
    return "\n\n".join(b.block.text for b in request.level("system") if isinstance(b.block, Text))


def _texts(blocks: Any) -> list[str]:
    return [b.block.text for b in blocks if isinstance(b.block, Text)]


def render_openai_chat(
    request: Request, *, model: str, max_tokens: int | None = None, **extra: Any
) -> dict[str, Any]:
    """The ``chat.completions.create`` payload (``model``, ``messages``, ``tools`` when any,
    ``max_completion_tokens`` when given, ``prompt_cache_key``; ``extra`` added as given).

    Raises :class:`LayoutError` when the result breaks W-O or L.
    """
    messages: list[dict[str, Any]] = []
    sys = system_text(request)
    if sys:
        messages.append({"role": "system", "content": sys})
    for m in group_messages_of(request):
        if m.role == "assistant":
            texts = _texts(m.blocks)
            msg: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
            calls = [b.block for b in m.blocks if isinstance(b.block, ToolUse)]
            if calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": canonical_json(c.input).decode()},
                    }
                    for c in calls
                ]
            if msg["content"] is None and not calls:
                continue  # thinking only: nothing to send
            messages.append(msg)
        elif m.role == "tool":
            for b in m.blocks:
                if isinstance(b.block, ToolResult):
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": b.block.tool_use_id,
                            "content": b.block.content,
                        }
                    )
        elif m.tail:
            messages.append({"role": "user", "content": "\n\n".join(_texts(m.blocks))})
        else:
            texts = [t for t in _texts(m.blocks) if t]
            if not texts:
                continue
            content: Any = (
                texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
            )
            messages.append({"role": "user", "content": content})
    payload: dict[str, Any] = {"model": model, "messages": messages}
    tools = [
        {
            "type": "function",
            "function": {
                "name": b.tool.name,
                "description": b.tool.description,
                "parameters": b.tool.canonical_schema(),
            },
        }
        for b in request.level("tools")
        if b.tool is not None
    ]
    if tools:
        payload["tools"] = tools
    if max_tokens is not None:
        payload["max_completion_tokens"] = max_tokens
    if request.prompt_cache_key:
        payload["prompt_cache_key"] = request.prompt_cache_key
    payload.update(extra)
    problems = check_openai_chat(payload)
    if problems:
        raise LayoutError("rendered OpenAI chat request is malformed: " + "; ".join(problems))
    return payload


def render_openai_responses(
    request: Request, *, model: str, max_tokens: int | None = None, **extra: Any
) -> dict[str, Any]:
    """The ``responses.create`` payload (``model``, ``instructions`` when any, ``input`` items,
    ``tools`` when any, ``max_output_tokens`` when given, ``prompt_cache_key``)."""
    items: list[dict[str, Any]] = []
    for m in group_messages_of(request):
        texts = [t for t in _texts(m.blocks) if t]
        if m.role == "assistant":
            if texts:
                items.append({"role": "assistant", "content": "\n\n".join(texts)})
            for b in m.blocks:
                if isinstance(b.block, ToolUse):
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": b.block.id,
                            "name": b.block.name,
                            "arguments": canonical_json(b.block.input).decode(),
                        }
                    )
        elif m.role == "tool":
            for b in m.blocks:
                if isinstance(b.block, ToolResult):
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": b.block.tool_use_id,
                            "output": b.block.content,
                        }
                    )
        elif texts:
            items.append({"role": "user", "content": "\n\n".join(texts)})
        if any(isinstance(b.block, Thinking) for b in m.blocks) and m.role != "assistant":
            raise LayoutError("thinking block outside an assistant message")
    payload: dict[str, Any] = {"model": model}
    sys = system_text(request)
    if sys:
        payload["instructions"] = sys
    payload["input"] = items
    tools = [
        {
            "type": "function",
            "name": b.tool.name,
            "description": b.tool.description,
            "parameters": b.tool.canonical_schema(),
            "strict": False,
        }
        for b in request.level("tools")
        if b.tool is not None
    ]
    if tools:
        payload["tools"] = tools
    if max_tokens is not None:
        payload["max_output_tokens"] = max_tokens
    if request.prompt_cache_key:
        payload["prompt_cache_key"] = request.prompt_cache_key
    payload.update(extra)
    return payload
