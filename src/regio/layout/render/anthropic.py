"""Anthropic Messages renderer (``POST /v1/messages``; prompt caching:
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).

* ``tools``: ``{name, description, input_schema}`` in the request's order, schema keys sorted;
* ``system``: a list of text blocks;
* ``messages``: ``tool`` messages become ``user`` messages whose ``tool_result`` blocks come
  first; consecutive messages of one role are merged (unless a block is ``separate``); the tail
  is the last block of the last user message; a request that would end with the assistant gets
  the fixed user turn :data:`CONTINUE_TEXT`;
* each planned breakpoint becomes ``cache_control: {"type": "ephemeral", "ttl": <ttl>}`` on its
  block. Markers are counted after rendering; more than 4 raises :class:`LayoutError`;
* ``compaction`` (:class:`regio.layout.provider_compaction.ProviderCompaction`): Anthropic's
  threshold compaction asked for, and the compaction blocks it returned rendered in place of
  regio's readable summaries (see that module).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from regio.content import Document, Image, ProviderBlock, Text, Thinking, ToolResult, ToolUse

from ..breakpoints import MAX_BREAKPOINTS
from ..model import LayoutBlock, Request, ToolSpec
from ..provider_compaction import ProviderCompaction, add_anthropic_edit, item_of
from ..repair import LayoutError, check_anthropic
from ..wellformed import CallsProgress, anthropic_problems
from .common import (
    CONTINUE_TEXT,
    RenderedMessage,
    canonical_input,
    conversation_start,
    fresh_copy,
    group_runs,
    rendered_runs,
)
from .media import anthropic_media
from .prefix import MessagePrefix, message_prefix
from .registry import FunctionRenderer, register_renderer

if TYPE_CHECKING:
    from ..renderlog import RenderLog

__all__ = ["ANTHROPIC", "anthropic_tool", "count_cache_markers", "render_anthropic"]


def anthropic_tool(tool: ToolSpec) -> dict[str, Any]:
    """The ``tools`` entry of ``tool``: ``{name, description, input_schema}`` (schema keys
    sorted), without a cache marker."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.canonical_schema(),
    }


def _marker(b: LayoutBlock, out: dict[str, Any]) -> dict[str, Any]:
    if b.breakpoint is not None:
        out["cache_control"] = {"type": "ephemeral", "ttl": b.breakpoint}
    return out


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
        if blk.media:
            text = [{"type": "text", "text": blk.content}] if blk.content else []
            out["content"] = text + [anthropic_media(m) for m in blk.media]
        if blk.is_error:
            out["is_error"] = True
        return _marker(b, out)
    if isinstance(blk, Thinking):
        return {"type": "thinking", "thinking": blk.thinking, "signature": blk.signature}
    if isinstance(blk, ProviderBlock):
        return fresh_copy(blk.block)
    if isinstance(blk, Image | Document):
        return _marker(b, anthropic_media(blk))
    raise LayoutError(f"block {b.source!r} has no content to render")


def count_cache_markers(payload: dict[str, Any], *, unmarked: int = 0) -> int:
    """Number of ``cache_control`` markers in a rendered Anthropic payload; ``unmarked``: how
    many leading messages are known to carry none (they are not read)."""
    n = sum(1 for t in payload.get("tools", []) if "cache_control" in t)
    system = payload.get("system", [])
    if isinstance(system, list):
        n += sum(1 for s in system if "cache_control" in s)
    for m in itertools.islice(payload.get("messages", []), unmarked, None):
        if isinstance(m["content"], list):
            n += sum(1 for c in m["content"] if "cache_control" in c)
    return n + (1 if "cache_control" in payload else 0)


def _unit(m: RenderedMessage) -> list[dict[str, Any]]:
    """The content blocks of one message group (a provider's block of another API left out)."""
    return [
        _render_block(b)
        for b in m.blocks
        if not isinstance(b.block, ProviderBlock) or b.block.api == "anthropic"
    ]


def _messages(
    conv: tuple[LayoutBlock, ...],
    log: RenderLog | None,
    compaction: ProviderCompaction | None = None,
    prefix: MessagePrefix[CallsProgress] | None = None,
) -> list[dict[str, Any]]:
    """The conversation messages of the conversation-level blocks ``conv``: ``tool`` groups
    become ``user`` messages, consecutive groups of one role merge (unless ``separate``). A
    message holding the summary of an entry with a provider compaction block is rendered as
    that block, in an assistant message that opens the conversation (the API drops what
    precedes it), with the marker the message carried (compaction blocks take
    ``cache_control`` like any content block); that entry's notes are left out
    (:func:`regio.layout.provider_compaction.item_of`). With ``prefix`` (the session's
    :class:`regio.layout.render.prefix.MessagePrefix`; never with compaction items) the
    messages it keeps are copied and the units found final after them extend it."""
    start = prefix.covered(conv) if prefix is not None else 0
    messages: list[dict[str, Any]] = prefix.copy() if prefix is not None and start else []
    growing = prefix is not None
    for m, content, kept in rendered_runs("anthropic", group_runs(conv, start), _unit, log):
        item, skip = item_of(m.blocks, compaction)
        if item is not None:
            block = fresh_copy(item)
            block.pop("cache_control", None)  # only the layout's markers are sent (at most 4)
            ttl = next((b.breakpoint for b in reversed(m.blocks) if b.breakpoint), None)
            if ttl is not None:  # the message's marker (``history``) goes on the block
                block["cache_control"] = {"type": "ephemeral", "ttl": ttl}
            messages = [{"role": "assistant", "content": [block]}]
            continue
        if skip or not content:  # only blocks of another API: nothing to send
            continue
        role = "user" if m.role == "tool" else m.role
        if messages and messages[-1]["role"] == role and not m.separate:
            messages[-1]["content"].extend(content)
        else:
            messages.append({"role": role, "content": content})
        if growing and prefix is not None:
            growing = kept is not None and prefix.add(m, role, kept[0])
    return messages


def render_anthropic(
    request: Request,
    *,
    model: str,
    max_tokens: int = 1024,
    log: RenderLog | None = None,
    compaction: ProviderCompaction | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``messages.create`` payload of ``request`` (``model``, ``max_tokens`` in tokens,
    ``system``, ``messages``, ``tools`` when any; ``extra`` keys are added as given). With the
    session's render log (``log``) final messages are rendered once and copied afterwards; the
    payload shares no container with the log or another payload. ``compaction``: the
    provider's threshold compaction (module doc).

    Raises :class:`LayoutError` when the result has more than 4 markers or breaks W-A / L.
    """
    payload: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    lo = conversation_start(request)
    head = request.blocks[:lo]
    tools = [
        _marker(b, anthropic_tool(b.tool))
        for b in head
        if b.level == "tools" and b.tool is not None
    ]
    system = [_render_block(b) for b in head if b.level == "system"]
    prefix: MessagePrefix[CallsProgress] | None = None
    if log is not None and (compaction is None or not compaction.items):
        prefix = message_prefix(log, "anthropic", CallsProgress)  # no item stands in
    messages = _messages(request.blocks[lo:], log, compaction, prefix)
    if not messages or messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": [{"type": "text", "text": CONTINUE_TEXT}]})
    if system:
        payload["system"] = system
    payload["messages"] = messages
    if tools:
        payload["tools"] = tools
    payload.update(fresh_copy(extra))
    if compaction is not None and compaction.trigger is not None:
        add_anthropic_edit(payload, compaction.trigger)
    kept = prefix is not None and payload.get("messages") is messages
    n = count_cache_markers(payload, unmarked=prefix.whole if kept and prefix else 0)
    if n > MAX_BREAKPOINTS:
        raise LayoutError(
            f"rendered Anthropic request has {n} cache_control markers; the API allows "
            f"{MAX_BREAKPOINTS} (remove a top-level cache_control from extra)"
        )
    if kept and prefix is not None:
        # the kept messages were checked when they were rendered first: only the rest now
        problems = anthropic_problems(messages, prefix.progress, prefix.settled)
    else:
        problems = check_anthropic(payload)
    if problems:
        raise LayoutError("rendered Anthropic request is malformed: " + "; ".join(problems))
    return payload


ANTHROPIC = register_renderer(
    FunctionRenderer("anthropic", render_anthropic, check_anthropic, default_max_tokens=1024)
)
