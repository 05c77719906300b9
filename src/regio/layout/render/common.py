"""Helpers shared by the renderers: messages regrouped from a request's blocks, rendered units
reused from the session's render log, fresh payload containers, canonical JSON of tool inputs,
and the fixed user turn that ends an Anthropic request."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import attrs
import msgspec

from regio.content import canonical_json

from ..model import LayoutBlock, Request

if TYPE_CHECKING:
    from ..renderlog import RenderLog

__all__ = [
    "CONTINUE_TEXT",
    "RenderedMessage",
    "canonical_input",
    "conversation_start",
    "copier",
    "fresh_copy",
    "group_messages_of",
    "group_runs",
    "rendered_runs",
    "rendered_units",
]

#: Fixed user turn appended when an Anthropic request would otherwise end with the assistant.
CONTINUE_TEXT = "[Continue.]"


@attrs.frozen
class RenderedMessage:
    """A message rebuilt from request blocks: ``role`` and ``blocks``; ``separate`` when it
    must not be merged into the previous message; ``tail`` for the tail and frozen tail
    copies (they render as the tail did)."""

    role: str
    blocks: tuple[LayoutBlock, ...]
    separate: bool = False
    tail: bool = False


def conversation_start(request: Request) -> int:
    """Index of the first conversation-level block of ``request`` (levels are in order
    ``tools -> system -> messages -> tail``, so only the tools and system blocks are read)."""
    blocks = request.blocks
    k = 0
    n = len(blocks)
    while k < n and blocks[k].level in ("tools", "system"):
        k += 1
    return k


def group_runs(blocks: Sequence[LayoutBlock], start: int = 0) -> list[RenderedMessage]:
    """The conversation-level ``blocks[start:]`` as messages in block order: consecutive
    message blocks with one message index form a message; consecutive tail blocks form one
    ``user`` message with ``tail=True``, and so does a frozen tail copy, so it renders exactly
    as it did when it was the tail."""
    out: list[RenderedMessage] = []
    n = len(blocks)
    k = start
    while k < n:
        b = blocks[k]
        key = ("tail",) if b.level == "tail" else b.message
        j = k + 1
        while j < n:
            c = blocks[j]
            if (("tail",) if c.level == "tail" else c.message) != key:
                break
            j += 1
        tail = b.level == "tail" or b.origin == "frozen"
        out.append(RenderedMessage(b.role, tuple(blocks[k:j]), b.separate, tail))
        k = j
    return out


def group_messages_of(request: Request) -> list[RenderedMessage]:
    """The conversation of ``request`` as messages (:func:`group_runs`)."""
    return group_runs(request.blocks, conversation_start(request))


@overload
def fresh_copy(value: dict[str, Any]) -> dict[str, Any]: ...


@overload
def fresh_copy(value: list[Any]) -> list[Any]: ...


def fresh_copy(value: object) -> object:
    """``value`` with every dict and list copied (at every depth); strings, numbers and other
    leaves are shared. What a payload gets from the render log, so the caller owns it."""
    if isinstance(value, dict):
        return {k: fresh_copy(v) if isinstance(v, (dict, list)) else v for k, v in value.items()}
    if isinstance(value, list):
        return [fresh_copy(v) if isinstance(v, (dict, list)) else v for v in value]
    return value


def _copy_leaf_dicts(unit: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(map(dict.copy, unit))


def copier(unit: object) -> Callable[[Any], Any]:
    """The copy function that gives ``unit`` fresh containers (:func:`fresh_copy`'s result),
    chosen once for a unit the log keeps: a list of dicts is copied with ``dict.copy`` per
    item (about six times faster than the generic walk), and only the values that are
    containers (a ``tool_use`` block's ``input``, a result's content blocks) are walked."""
    if not (isinstance(unit, list) and all(type(d) is dict for d in unit)):
        return fresh_copy
    deep = [tuple(k for k, v in d.items() if isinstance(v, (dict, list))) for d in unit]
    if not any(deep):
        return _copy_leaf_dicts

    def copy(value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = list(map(dict.copy, value))
        for d, keys in zip(out, deep, strict=True):
            for k in keys:
                d[k] = fresh_copy(d[k])
        return out

    return copy


def rendered_units(
    api: str,
    messages: Sequence[RenderedMessage],
    render: Callable[[RenderedMessage], Any],
    log: RenderLog | None = None,
) -> Iterator[tuple[RenderedMessage, Any]]:
    """Each message with its rendered unit (``render(message)``). With the session's render
    log, a final message without markers is rendered once and then copied from the log
    (:func:`copier`: the payload never shares a container with the log)."""
    for m, unit, _ in rendered_runs(api, messages, render, log):
        yield m, unit


def rendered_runs(
    api: str,
    messages: Sequence[RenderedMessage],
    render: Callable[[RenderedMessage], Any],
    log: RenderLog | None = None,
) -> Iterator[tuple[RenderedMessage, Any, tuple[Any, Callable[[Any], Any]] | None]]:
    """:func:`rendered_units` with, per message, the log's own unit and its copy function
    when the log keeps it (a final message without markers), else ``None``."""
    for m in messages:
        first = m.blocks[0]
        if log is None or first.level != "messages" or any(b.breakpoint for b in m.blocks):
            yield m, render(m), None
            continue
        index = first.message or 0
        found = log.rendered_unit(api, index, first)
        if found is None:
            unit = render(m)
            fresh = (unit, copier(unit))
            if not log.keep_unit(api, index, first, *fresh):
                yield m, fresh[1](unit), None  # the payload gets its own copy, as a kept one does
                continue
            found = fresh
        unit, copy = found
        yield m, copy(unit), found


def canonical_input(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with keys sorted at every depth (stable JSON key order)."""
    out: dict[str, Any] = msgspec.json.decode(canonical_json(value))
    return out
