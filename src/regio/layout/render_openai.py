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

Incremental rendering (DESIGN.md section 6; :mod:`regio.layout.rendercache`): a *unit* is one
message group of the request (:func:`regio.layout.rendercache.group_runs`); it renders to zero
or more Chat messages / Responses items that depend on its blocks only (OpenAI requests merge
nothing across groups and carry no ``cache_control`` markers). The units whose blocks are the
same objects as in the previous request rendered here are reused (their dicts are shared
between payloads: treat payloads as read-only; a cached dict is never mutated); the rest are
rendered fresh, and the Chat check (W-O, L) resumes from the :class:`ChatState` before the
first fresh unit (:func:`regio.layout.wellformed.openai_chat_range`). The output is
byte-identical to a render with every cache cleared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from regio.content import Text, Thinking, ToolResult, ToolUse, canonical_json

from .model import LayoutBlock, Request
from .render_common import RenderedMessage
from .rendercache import (
    RenderSlot,
    conversation_start,
    find_slot,
    group_runs,
    reusable_units,
    store_slot,
)
from .repair import LayoutError, check_openai_chat
from .wellformed import ChatState, openai_chat_end, openai_chat_range

__all__ = ["render_openai_chat", "render_openai_responses", "system_text"]


def _head(request: Request) -> tuple[LayoutBlock, ...]:
    """The tools and system blocks of ``request`` (they come first)."""
    return request.blocks[: conversation_start(request)]


def _system_text_of(head: Sequence[LayoutBlock]) -> str:
    return "\n\n".join(
        b.block.text for b in head if b.level == "system" and isinstance(b.block, Text)
    )


def system_text(request: Request) -> str:
    """All system blocks joined by a blank line (reads only the tools and system blocks)."""
    return _system_text_of(_head(request))


def _texts(blocks: Any) -> list[str]:
    return [b.block.text for b in blocks if isinstance(b.block, Text)]


def _arguments(call: ToolUse) -> str:
    return canonical_json(call.input).decode()


# ------------------------------------------------------------------------------- Chat


def _chat_unit(m: RenderedMessage) -> list[dict[str, Any]]:
    """The Chat Completions messages of one message group (possibly none)."""
    if m.role == "assistant":
        texts = _texts(m.blocks)
        msg: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        calls = [b.block for b in m.blocks if isinstance(b.block, ToolUse)]
        if calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments(c)},
                }
                for c in calls
            ]
        if msg["content"] is None and not calls:
            return []  # thinking only: nothing to send
        return [msg]
    if m.role == "tool":
        return [
            {"role": "tool", "tool_call_id": b.block.tool_use_id, "content": b.block.content}
            for b in m.blocks
            if isinstance(b.block, ToolResult)
        ]
    if m.tail:
        return [{"role": "user", "content": "\n\n".join(_texts(m.blocks))}]
    texts = [t for t in _texts(m.blocks) if t]
    if not texts:
        return []
    content: Any = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
    return [{"role": "user", "content": content}]


def _chat_messages(
    conv: tuple[LayoutBlock, ...], system: str
) -> tuple[list[dict[str, Any]], list[str], RenderSlot]:
    """The Chat messages of ``system`` and the conversation blocks ``conv``, the W-O / L
    problems of the whole list, and the new slot.

    Slot layout: ``outputs[u]`` is the index among the conversation messages where unit ``u``
    starts, ``states[u]`` the :class:`ChatState` before it, ``data`` the conversation messages
    (a tuple, never mutated) with the state after them, and ``context`` the number of leading
    system messages (0 or 1: it shifts the message indices named in problems and sets the
    first state).
    """
    head: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    n_head = len(head)
    slot = find_slot("openai_chat", conv, n_head)
    k = reusable_units(slot, conv)
    messages = head
    if slot is not None and k:
        at = slot.starts[k]
        kept, end = slot.data
        messages.extend(kept[: slot.outputs[k]] if k < len(slot.outputs) else kept)
        starts, offsets, states = slot.starts[:k], slot.outputs[:k], slot.states[:k]
        state: ChatState = slot.states[k] if k < len(slot.states) else end
        # the reused front was checked when it was rendered (a slot is only stored for a
        # payload without problems), and its problems depend only on the messages before it
        problems: list[str] = []
    else:
        at, starts, offsets, states = 0, [], [], []
        problems, after = openai_chat_range(messages, 0, ChatState())
        state = after[-1] if after else ChatState()
    for begin, m in group_runs(conv, at):
        rendered = _chat_unit(m)
        starts.append(begin)
        offsets.append(len(messages) - n_head)
        states.append(state)
        if rendered:
            first = len(messages)
            messages.extend(rendered)
            found, after = openai_chat_range(messages, first, state)
            problems += found
            state = after[-1]
    starts.append(len(conv))
    problems += openai_chat_end(state)
    new_slot = RenderSlot(
        blocks=conv,
        starts=starts,
        outputs=offsets,
        states=states,
        context=n_head,
        data=(tuple(messages[n_head:]), state),
    )
    return messages, problems, new_slot


def _chat_tools(head: Sequence[LayoutBlock]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": b.tool.name,
                "description": b.tool.description,
                "parameters": b.tool.canonical_schema(),
            },
        }
        for b in head
        if b.level == "tools" and b.tool is not None
    ]


def render_openai_chat(
    request: Request, *, model: str, max_tokens: int | None = None, **extra: Any
) -> dict[str, Any]:
    """The ``chat.completions.create`` payload (``model``, ``messages``, ``tools`` when any,
    ``max_completion_tokens`` (tokens) when given, ``prompt_cache_key``; ``extra`` added as
    given).

    Message groups whose blocks are the same objects as in the previous request rendered here
    are reused, and only the changed tail is checked (see the module docstring).

    Raises :class:`LayoutError` when the result breaks W-O or L (field-cases.md section 0).
    """
    lo = conversation_start(request)
    head = request.blocks[:lo]
    messages, problems, slot = _chat_messages(request.blocks[lo:], _system_text_of(head))
    payload: dict[str, Any] = {"model": model, "messages": messages}
    tools = _chat_tools(head)
    if tools:
        payload["tools"] = tools
    if max_tokens is not None:
        payload["max_completion_tokens"] = max_tokens
    if request.prompt_cache_key:
        payload["prompt_cache_key"] = request.prompt_cache_key
    payload.update(extra)
    overridden = "messages" in extra
    if overridden:
        problems = check_openai_chat(payload)
    if problems:
        raise LayoutError("rendered OpenAI chat request is malformed: " + "; ".join(problems))
    if not overridden:
        store_slot("openai_chat", slot)
    return payload


# ------------------------------------------------------------------------------- Responses


def _responses_unit(m: RenderedMessage) -> list[dict[str, Any]]:
    """The Responses input items of one message group (possibly none).

    Raises :class:`LayoutError` for a thinking block outside an assistant message.
    """
    items: list[dict[str, Any]] = []
    texts = [t for t in _texts(m.blocks) if t]
    if m.role == "assistant":
        if texts:
            items.append({"role": "assistant", "content": "\n\n".join(texts)})
        items.extend(
            {
                "type": "function_call",
                "call_id": b.block.id,
                "name": b.block.name,
                "arguments": _arguments(b.block),
            }
            for b in m.blocks
            if isinstance(b.block, ToolUse)
        )
        return items
    if any(isinstance(b.block, Thinking) for b in m.blocks):
        where = m.blocks[0].source or "?"
        raise LayoutError(
            f"thinking block outside an assistant message (source {where!r}); thinking "
            "belongs to the assistant turn that produced it"
        )
    if m.role == "tool":
        items.extend(
            {
                "type": "function_call_output",
                "call_id": b.block.tool_use_id,
                "output": b.block.content,
            }
            for b in m.blocks
            if isinstance(b.block, ToolResult)
        )
    elif texts:
        items.append({"role": "user", "content": "\n\n".join(texts)})
    return items


def _responses_items(conv: tuple[LayoutBlock, ...]) -> tuple[list[dict[str, Any]], RenderSlot]:
    """The input items of the conversation blocks ``conv`` and the new slot (``outputs[u]``:
    the index in the item list where unit ``u`` starts; ``data``: the whole item list as a
    tuple, never mutated)."""
    slot = find_slot("openai_responses", conv)
    k = reusable_units(slot, conv)
    if slot is not None and k:
        at = slot.starts[k]
        kept: tuple[dict[str, Any], ...] = slot.data
        items = list(kept[: slot.outputs[k]] if k < len(slot.outputs) else kept)
        starts, offsets = slot.starts[:k], slot.outputs[:k]
    else:
        items, at, starts, offsets = [], 0, [], []
    for begin, m in group_runs(conv, at):
        starts.append(begin)
        offsets.append(len(items))
        items.extend(_responses_unit(m))
    starts.append(len(conv))
    new_slot = RenderSlot(blocks=conv, starts=starts, outputs=offsets, states=[], data=tuple(items))
    return items, new_slot


def render_openai_responses(
    request: Request, *, model: str, max_tokens: int | None = None, **extra: Any
) -> dict[str, Any]:
    """The ``responses.create`` payload (``model``, ``instructions`` when any, ``input`` items,
    ``tools`` when any, ``max_output_tokens`` (tokens) when given, ``prompt_cache_key``;
    ``extra`` added as given).

    Message groups whose blocks are the same objects as in the previous request rendered here
    are reused (see the module docstring).

    Raises :class:`LayoutError` for a thinking block outside an assistant message.
    """
    lo = conversation_start(request)
    head = request.blocks[:lo]
    items, slot = _responses_items(request.blocks[lo:])
    payload: dict[str, Any] = {"model": model}
    sys = _system_text_of(head)
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
        for b in head
        if b.level == "tools" and b.tool is not None
    ]
    if tools:
        payload["tools"] = tools
    if max_tokens is not None:
        payload["max_output_tokens"] = max_tokens
    if request.prompt_cache_key:
        payload["prompt_cache_key"] = request.prompt_cache_key
    payload.update(extra)
    store_slot("openai_responses", slot)
    return payload
