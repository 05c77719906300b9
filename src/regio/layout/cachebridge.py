"""Conversion of a layout :class:`Request` into the cache simulator's ``CacheRequest``.

Each :class:`LayoutBlock` becomes one ``CacheBlock``: ``kind`` from the block type (tool
definitions count as ``text``), ``level`` (the tail is part of ``messages``), ``tokens``,
``digest`` (the block digest; equal digests mean equal bytes), ``mark`` (the planned breakpoint
TTL), ``role`` and ``message`` (tail blocks carry the index of the user message they close).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from regio.content import ProviderBlock, Thinking, ToolResult, ToolUse

from .model import LayoutBlock, Request

__all__ = ["cache_blocks", "last_message", "to_cache_request"]


def _kind(b: LayoutBlock) -> Any:
    if isinstance(b.block, ToolUse):
        return "tool_use"
    if isinstance(b.block, ToolResult):
        return "tool_result"
    if isinstance(b.block, Thinking):
        return "thinking"
    if isinstance(b.block, ProviderBlock):
        return "provider"
    return "text"


def last_message(request: Request) -> int:
    """The highest message index of ``request``'s blocks (``-1``: none): its tail blocks close
    message ``last_message + 1``."""
    return max((b.message for b in request.blocks if b.message is not None), default=-1)


def cache_blocks(
    request: Request,
    last_msg: int,
    earlier: tuple[Sequence[LayoutBlock], Sequence[Any], int] | None = None,
    start: int = 0,
) -> tuple[tuple[Any, ...], int]:
    """The ``regio.cache.CacheBlock`` of each block of ``request`` (module doc; ``last_msg``:
    :func:`last_message` of it) and how many were converted. ``earlier``: an earlier conversion
    (its layout blocks, their cache blocks, its ``last_msg``): a block that is the same
    (immutable) object at the same position is not converted again (a tail block only when both
    close the same message). ``start``: the caller's count of leading blocks that are
    ``earlier``'s own and convert alike (no tail block among them when the two close other
    messages): their cache blocks are ``earlier``'s, taken whole."""
    from regio.cache.types import CacheBlock

    old, converted, old_last = earlier if earlier is not None else ((), (), -2)
    n_old = len(old)
    out = list(converted[:start])
    reused = start
    blocks = request.blocks
    for i in range(start, len(blocks)):
        b = blocks[i]
        if i < n_old and old[i] is b and (b.level != "tail" or old_last == last_msg):
            out.append(converted[i])
            reused += 1
            continue
        out.append(
            CacheBlock(
                tokens=b.tokens,
                digest=b.digest,
                kind=_kind(b),
                level="messages" if b.level == "tail" else b.level,
                mark=b.breakpoint,
                role=("tool" if b.role == "tool" else b.role) if b.level != "tools" else None,
                message=b.message if b.level != "tail" else last_msg + 1,
            )
        )
    return tuple(out), len(out) - reused


def to_cache_request(
    request: Request,
    *,
    t_start: float,
    id: str | None = None,
    model: str = "",
    scope: str = "default",
    ttft: float = 1.0,
    t_end: float | None = None,
    output_tokens: int = 0,
    key: str | None = None,
    blocks: tuple[Any, ...] | None = None,
    **extra: Any,
) -> Any:
    """A ``regio.cache.CacheRequest`` for ``request`` sent at ``t_start`` (simulated seconds).

    ``id`` defaults to ``"t<t_start>"``; ``key`` to ``request.prompt_cache_key``; ``blocks``:
    the request's :func:`cache_blocks` when already converted; other keyword arguments go to
    ``CacheRequest`` unchanged (``params``, ``auto_mark``, ...).
    """
    from regio.cache.types import CacheRequest

    if blocks is None:
        blocks = cache_blocks(request, last_message(request))[0]
    return CacheRequest(
        id=id if id is not None else f"t{t_start:.6f}",
        blocks=blocks,
        scope=scope,
        key=key if key is not None else (request.prompt_cache_key or None),
        model=model,
        t_start=t_start,
        ttft=ttft,
        t_end=t_end,
        output_tokens=output_tokens,
        **extra,
    )
