"""Plain-text renderer for completion endpoints (``POST /v1/completions``, llama.cpp
``/completion``).

The prompt is the system text, then one paragraph per message (``User:``, ``Assistant:``,
``Tool result <id>:``; a call is written ``[call <name> <id> <canonical JSON input>]``), the tail
as a final ``User:`` paragraph, and a closing ``Assistant:`` cue. Thinking is left out.
"""

from __future__ import annotations

from typing import Any

from regio.content import Document, Image, Text, ToolResult, ToolUse, block_text, canonical_json

from ..model import Request
from .common import group_messages_of
from .openai import system_text
from .registry import FunctionRenderer, register_renderer

__all__ = ["TEXT", "check_text", "render_prompt", "render_text"]


def render_prompt(request: Request) -> str:
    """The prompt string of ``request``."""
    parts: list[str] = []
    sys = system_text(request)
    if sys:
        parts.append(sys)
    for m in group_messages_of(request):
        for b in m.blocks:
            blk = b.block
            if isinstance(blk, Text) and blk.text:
                label = "Assistant" if m.role == "assistant" else "User"
                parts.append(f"{label}: {blk.text}")
            elif isinstance(blk, ToolUse):
                parts.append(
                    f"Assistant: [call {blk.name} {blk.id} {canonical_json(blk.input).decode()}]"
                )
            elif isinstance(blk, ToolResult):
                flag = " (error)" if blk.is_error else ""
                parts.append(f"Tool result {blk.tool_use_id}{flag}: {block_text(blk)}")
            elif isinstance(blk, Image | Document):
                parts.append(f"User: {block_text(blk)}")
    parts.append("Assistant:")
    return "\n\n".join(parts)


def render_text(request: Request, *, model: str = "", max_tokens: int = 256) -> dict[str, Any]:
    """The completion payload: ``model``, ``prompt``, ``max_tokens`` (tokens)."""
    return {"model": model, "prompt": render_prompt(request), "max_tokens": max_tokens}


def check_text(payload: dict[str, Any]) -> list[str]:
    """A prompt has no structure to break: problems only for a missing prompt string."""
    return [] if isinstance(payload.get("prompt"), str) else ["prompt is not a string"]


def _render(request: Request, *, model: str, max_tokens: int, **_: Any) -> dict[str, Any]:
    """:func:`render_text` (the render log and extra keys are not used: a prompt is one
    string)."""
    return render_text(request, model=model, max_tokens=max_tokens)


TEXT = register_renderer(FunctionRenderer("text", _render, check_text, default_max_tokens=256))
