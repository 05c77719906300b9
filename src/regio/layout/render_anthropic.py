"""Anthropic Messages renderer (``POST /v1/messages``; cache-rules.md section 2.1).

* ``tools``: ``{name, description, input_schema}`` in the request's order, schema keys sorted;
* ``system``: a list of text blocks;
* ``messages``: ``tool`` messages become ``user`` messages whose ``tool_result`` blocks come
  first; consecutive messages of one role are merged (unless a block is ``separate``); the tail
  is the last block of the last user message; a request that would end with the assistant gets
  the fixed user turn :data:`CONTINUE_TEXT`;
* each planned breakpoint becomes ``cache_control: {"type": "ephemeral", "ttl": <ttl>}`` on its
  block. Markers are counted after rendering; more than 4 raises :class:`LayoutError`.
"""

from __future__ import annotations

from typing import Any

from regio.content import Text, Thinking, ToolResult, ToolUse

from .breakpoints import MAX_BREAKPOINTS
from .memo import ByIdentity, register
from .model import LayoutBlock, Request
from .render_common import CONTINUE_TEXT, canonical_input
from .rendercache import (
    RenderSlot,
    conversation_start,
    find_slot,
    group_runs,
    reusable_units,
    store_slot,
)
from .repair import LayoutError, check_anthropic
from .wellformed import anthropic_first_message, anthropic_range, tool_use_ids

__all__ = ["count_cache_markers", "render_anthropic"]


def _marker(b: LayoutBlock, out: dict[str, Any]) -> dict[str, Any]:
    if b.breakpoint is not None:
        out["cache_control"] = {"type": "ephemeral", "ttl": b.breakpoint}
    return out


#: Rendered content blocks of unmarked layout blocks, per block object. A cached dict is never
#: mutated: a marked block (``cache_control``) is always rendered fresh.
_RENDERED: ByIdentity[dict[str, Any]] = register(ByIdentity())


def _content(b: LayoutBlock) -> dict[str, Any]:
    """The content-block dict of ``b`` (shared between payloads when ``b`` carries no marker:
    treat payload block dicts as read-only)."""
    if b.breakpoint is None:
        return _RENDERED.get(b, _render_block)
    return _render_block(b)


def _render_block(b: LayoutBlock) -> dict[str, Any]:
    blk = b.block
    if isinstance(blk, Text):
        return _marker(b, {"type": "text", "text": blk.text})
    if isinstance(blk, ToolUse):
        return _marker(
            b,
            {
                "type": "tool_use",
                "id": blk.id,
                "name": blk.name,
                "input": canonical_input(blk.input),
            },
        )
    if isinstance(blk, ToolResult):
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": blk.tool_use_id,
            "content": blk.content,
        }
        if blk.is_error:
            out["is_error"] = True
        return _marker(b, out)
    if isinstance(blk, Thinking):
        return {"type": "thinking", "thinking": blk.thinking, "signature": blk.signature}
    raise LayoutError(f"block {b.source!r} has no content to render")


def count_cache_markers(payload: dict[str, Any]) -> int:
    """Number of ``cache_control`` markers in a rendered Anthropic payload."""
    n = sum(1 for t in payload.get("tools", []) if "cache_control" in t)
    system = payload.get("system", [])
    if isinstance(system, list):
        n += sum(1 for s in system if "cache_control" in s)
    for m in payload.get("messages", []):
        if isinstance(m["content"], list):
            n += sum(1 for c in m["content"] if "cache_control" in c)
    return n + (1 if "cache_control" in payload else 0)


def _count_in(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for c in content if "cache_control" in c)


def _render_messages(
    blocks: tuple[LayoutBlock, ...],
) -> tuple[list[dict[str, Any]], list[str], int, RenderSlot]:
    """The conversation messages of ``blocks`` (conversation-level blocks), the W-A problems
    of the messages that were rendered or whose neighbour was, the number of markers in the
    messages and the new slot. Reuses the previous payload's front (:mod:`.rendercache`)."""
    slot = find_slot("anthropic", blocks)
    k = reusable_units(slot, blocks)
    if slot is not None and k:
        messages: list[dict[str, Any]] = slot.outputs[:k]
        starts = slot.starts[:k]
        states = slot.states[:k]
        begin = slot.starts[k]
        seen: dict[str, int] = dict(slot.data[0])
        marks = [(u, c) for u, c in slot.data[1] if u < k]
        check_from = k - 1
        for u in range(check_from, len(slot.outputs)):
            for cid in slot.states[u]:
                if seen.get(cid) == u:
                    del seen[cid]
    else:
        messages, starts, states, begin, seen, marks, check_from = [], [], [], 0, {}, [], 0
    fresh = len(messages)
    for at, m in group_runs(blocks, begin):
        role = "user" if m.role == "tool" else m.role
        content = [_content(b) for b in m.blocks]
        if len(messages) > fresh and messages[-1]["role"] == role and not m.separate:
            messages[-1]["content"].extend(content)
        else:
            messages.append({"role": role, "content": content})
            starts.append(at)
    for u in range(fresh, len(messages)):
        states.append(tool_use_ids(messages[u]))
        c = _count_in(messages[u]["content"])
        if c:
            marks.append((u, c))
    starts.append(len(blocks))
    problems = anthropic_range(messages, check_from, seen)
    if messages:
        problems += anthropic_first_message(messages)
    new_slot = RenderSlot(
        blocks=blocks,
        starts=starts,
        outputs=messages,
        states=states,
        data=(seen, tuple(marks)),
    )
    return list(messages), problems, sum(c for _, c in marks), new_slot


def render_anthropic(
    request: Request, *, model: str, max_tokens: int = 1024, **extra: Any
) -> dict[str, Any]:
    """The ``messages.create`` payload of ``request`` (``model``, ``max_tokens`` in tokens,
    ``system``, ``messages``, ``tools`` when any; ``extra`` keys are added as given).

    Messages whose blocks are the same objects as in the previous request rendered here are
    reused (dicts shared between payloads: treat payloads as read-only); only the changed tail
    is rendered and checked (:mod:`regio.layout.rendercache`, :mod:`regio.layout.wellformed`).

    Raises :class:`LayoutError` when the result has more than 4 markers or breaks W-A / L.
    """
    payload: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    lo = conversation_start(request)
    head = request.blocks[:lo]
    tools = [
        _marker(
            b,
            {
                "name": b.tool.name,
                "description": b.tool.description,
                "input_schema": b.tool.canonical_schema(),
            },
        )
        for b in head
        if b.level == "tools" and b.tool is not None
    ]
    system = [_content(b) for b in head if b.level == "system"]
    conv = request.blocks[lo:]
    messages, problems, n_marks, slot = _render_messages(conv)
    if not messages or messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": [{"type": "text", "text": CONTINUE_TEXT}]})
    if system:
        payload["system"] = system
    payload["messages"] = messages
    if tools:
        payload["tools"] = tools
    payload.update(extra)
    if extra.keys() & {"messages", "system", "tools"}:
        n = count_cache_markers(payload)
        problems = check_anthropic(payload)
    else:
        n = n_marks + sum(1 for t in tools if "cache_control" in t)
        n += sum(1 for s in system if "cache_control" in s)
        n += 1 if "cache_control" in payload else 0
        # the appended continue turn has no tool_result: it adds no problem (the W-A.2 check of
        # a final assistant message finds no answers with or without it)
    if n > MAX_BREAKPOINTS:
        raise LayoutError(
            f"rendered Anthropic request has {n} cache_control markers; the API allows "
            f"{MAX_BREAKPOINTS} (remove a top-level cache_control from extra)"
        )
    if problems:
        raise LayoutError("rendered Anthropic request is malformed: " + "; ".join(problems))
    store_slot("anthropic", slot)
    return payload
