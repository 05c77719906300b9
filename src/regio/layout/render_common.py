"""Helpers shared by the renderers: messages regrouped from a request's blocks, canonical JSON
of tool inputs, and the fixed user turn that ends an Anthropic request."""

from __future__ import annotations

from typing import Any

import attrs
import msgspec

from regio.content import canonical_json

from .model import LayoutBlock, Request

__all__ = ["CONTINUE_TEXT", "RenderedMessage", "canonical_input", "group_messages_of"]

#: Fixed user turn appended when an Anthropic request would otherwise end with the assistant.
CONTINUE_TEXT = "[Continue.]"


@attrs.frozen
class RenderedMessage:
    """A message rebuilt from request blocks: ``role`` and ``blocks``; ``separate`` when it
    must not be merged into the previous message."""

    role: str
    blocks: tuple[LayoutBlock, ...]
    separate: bool = False
    tail: bool = False


def group_messages_of(request: Request) -> list[RenderedMessage]:
    """The conversation of ``request`` as messages in block order: consecutive message blocks
    with one message index form a message; consecutive tail blocks form one ``user`` message
    with ``tail=True``, and so does a frozen tail copy (source ``frozen:``), so it renders
    exactly as it did when it was the tail."""
    runs: list[list[LayoutBlock]] = []
    current: object = None
    for b in request.blocks:
        if b.level != "messages" and b.level != "tail":
            continue
        key = ("tail",) if b.level == "tail" else b.message
        if runs and key == current:
            runs[-1].append(b)
        else:
            runs.append([b])
            current = key
    out: list[RenderedMessage] = []
    for run in runs:
        b = run[0]
        tail = b.level == "tail" or b.source.startswith("frozen:")
        out.append(RenderedMessage(b.role, tuple(run), b.separate, tail))
    return out


def canonical_input(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with keys sorted at every depth (stable JSON key order)."""
    out: dict[str, Any] = msgspec.json.decode(canonical_json(value))
    return out
