"""The per-block facts a breakpoint cache model reads from a request, carried from the last
request walked so that a prompt that grows at its end costs its new blocks.

:func:`walk_blocks` gives, for a :class:`regio.cache.types.CacheRequest`'s blocks, the
cumulative token counts, the indexes of the blocks that carry a breakpoint mark and each
block's lookback position (1-based; a block continuing a run of the same kind listed in
``collapse`` shares its predecessor's position: :func:`lookback_positions`).
Each of them at block ``i`` depends on blocks ``0..i`` alone, so with a :class:`BlockWalk`
(its caller's, e.g. one session's predictions: a cache model's ``walk_memo``)
the facts of the leading blocks equal to the last walked request's (compared in C,
:func:`regio.cache.prefix.common_prefix`) are that request's, and only the blocks from the
first that differs are walked. :func:`last_of` finds the last block at a lookback position by
bisection instead of a map over every block.

The lookback rule itself, used by the cache simulator (:mod:`regio.cache.anthropic`) and by
the layout's breakpoint placement (:mod:`regio.layout.breakpoints`): :func:`lookback_positions`
numbers the blocks, and a read from a breakpoint at position ``p`` probes the breakpoint and
the ``window - 1`` positions before it (:func:`probed_positions`; :data:`LOOKBACK_POSITIONS`
= 20 for Anthropic, "the system checks up to 20 blocks before the breakpoint",
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching): a block ``distance``
positions back is read exactly when :func:`looks_back_to` says so.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any

import attrs

from regio.cache.prefix import common_prefix

__all__ = [
    "LOOKBACK_POSITIONS",
    "BlockWalk",
    "last_of",
    "lookback_positions",
    "looks_back_to",
    "probed_positions",
    "walk_blocks",
    "walked_prefix",
]

#: Positions a read looks back over from a breakpoint, the breakpoint being #1 (Anthropic's
#: 20-block lookback; a cache rule's ``lookback.positions`` may say otherwise).
LOOKBACK_POSITIONS = 20


def lookback_positions(
    kinds: Sequence[str | None], collapse: Sequence[str], p: int = 0, prev: str | None = None
) -> list[int]:
    """The lookback position (1-based) of each block of ``kinds``: a block continuing a run of
    the same kind listed in ``collapse`` shares its predecessor's position, any other block
    takes the next. ``p`` / ``prev``: the position and kind of the block before the first
    (``0`` / ``None``: the first block is the request's first)."""
    out: list[int] = []
    for kind in kinds:
        if prev is None or kind != prev or kind not in collapse:
            p += 1
        out.append(p)
        prev = kind
    return out


def looks_back_to(distance: int, window: int = LOOKBACK_POSITIONS) -> bool:
    """Whether a read from a breakpoint reaches a block ``distance`` positions before it
    (``0``: the breakpoint's own position) with a lookback of ``window`` positions."""
    return 0 <= distance < window


def probed_positions(p: int, window: int = LOOKBACK_POSITIONS) -> range:
    """The positions before ``p`` (a breakpoint's) that its read probes, newest first: those
    :func:`looks_back_to` reaches, none below 1."""
    return range(p - 1, max(p - window, 0), -1)


@attrs.define
class BlockWalk:
    """The facts (module doc) of the last request walked with this memo: its blocks, the
    ``collapse`` kinds its positions were counted with, ``cum`` (tokens through each block),
    ``marked`` (indexes of marked blocks, ascending) and ``pos`` (each block's position).
    Mutable, one caller's (never shared between sessions); ``walked`` counts the blocks walked
    through it (a count, for tests)."""

    blocks: tuple[Any, ...] = ()
    collapse: tuple[str, ...] = ()
    cum: list[int] = attrs.field(factory=list)
    marked: list[int] = attrs.field(factory=list)
    pos: list[int] = attrs.field(factory=list)
    walked: int = 0


def walked_prefix(blocks: Sequence[Any], collapse: tuple[str, ...], memo: BlockWalk | None) -> int:
    """How many leading ``blocks`` are the memo's last request's (``0`` without a memo or with
    other ``collapse`` kinds): the blocks whose facts :func:`walk_blocks` takes from the memo."""
    if memo is None or memo.collapse != collapse or not memo.blocks:
        return 0
    return common_prefix(tuple(blocks), memo.blocks)


def walk_blocks(
    blocks: Sequence[Any], collapse: tuple[str, ...], memo: BlockWalk | None, start: int = 0
) -> tuple[list[int], list[int], list[int]]:
    """``(cum, marked, pos)`` of ``blocks`` (module doc), the first ``start`` blocks' from
    ``memo`` (``start``: :func:`walked_prefix`, or ``0``); with a memo the request becomes its
    last. The lists are the caller's."""
    if start and memo is not None:
        cum = memo.cum[:start]
        marked = memo.marked[: bisect_left(memo.marked, start)]
        pos = memo.pos[:start]
        total, p, prev = cum[-1], pos[-1], blocks[start - 1].kind
    else:
        start, cum, marked, pos = 0, [], [], []
        total, p, prev = 0, 0, None
    for i in range(start, len(blocks)):
        b = blocks[i]
        total += b.tokens
        cum.append(total)
        if b.mark is not None:
            marked.append(i)
    pos += lookback_positions([b.kind for b in blocks[start:]], collapse, p, prev)
    if memo is not None:
        memo.blocks, memo.collapse = tuple(blocks), collapse
        memo.cum, memo.marked, memo.pos = list(cum), list(marked), list(pos)
        memo.walked += len(blocks) - start
    return cum, marked, pos


def last_of(pos: Sequence[int], p: int) -> int:
    """The index of the last block at position ``p`` (``pos``: non-decreasing positions that
    step by one, as :func:`walk_blocks` gives; ``1 <= p <= pos[-1]``)."""
    return bisect_right(pos, p) - 1
