"""Incremental rendering: reuse the rendered front of the previous payload (DESIGN.md section 6:
per-turn cost proportional to what changed, not to the window).

Between two requests of one session the conversation blocks are the very same
:class:`LayoutBlock` objects up to the first change (:mod:`regio.layout.convcache` reuses them,
and :func:`regio.layout.assemble` memoizes marked copies, so a block that keeps its marker is
the same object too). A renderer therefore splits the conversation part of a request into
*units* (an Anthropic message after merging, an OpenAI message group) and keeps, per session, a
:class:`RenderSlot`: the conversation blocks of the last request it rendered, where each unit
started, the rendered output of each unit and the validation state at each unit start.

For the next request, :func:`reusable_units` finds the identity prefix of the conversation
blocks and the number of units that lie strictly inside it (the block after a unit is then the
same object, so the grouping decision at that boundary is the same); those units' outputs are
reused, the rest is rendered afresh. A block whose marker moved is a different object, so the
unit holding it is rendered fresh.

Purity: a slot is only read through identity checks and never mutated (a new slot replaces
it); reused output dicts are shared between payloads and never mutated — treat payloads as
read-only. Tests compare payload bytes with the caches cleared and warm.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import attrs

from .increment import common_prefix
from .memo import register
from .model import LayoutBlock, Request
from .render_common import RenderedMessage

__all__ = [
    "RenderSlot",
    "conversation_start",
    "find_slot",
    "group_runs",
    "reusable_units",
    "store_slot",
]

_MAX_SLOTS = 8


@attrs.frozen
class RenderSlot:
    """What one renderer derived from the last request of a session (read-only).

    ``blocks``: the conversation-level blocks (levels ``messages`` and ``tail``); ``starts``:
    per unit, the index in ``blocks`` where it starts (plus ``len(blocks)`` at the end);
    ``outputs``: per unit, the rendered output; ``states``: per unit, the validation state
    before it (renderer specific); ``context``: renderer-specific values the reuse depends on
    (a slot is only reused when they are equal); ``data``: renderer-specific totals over all
    units (never mutated; copied before use).
    """

    blocks: tuple[LayoutBlock, ...]
    starts: list[int]
    outputs: list[Any]
    states: list[Any]
    context: Any = None
    data: Any = None


#: Cleared by :func:`regio.layout.memo.clear_memos` (registered there).
_SLOTS: OrderedDict[tuple[str, int], RenderSlot] = register(OrderedDict())


def conversation_start(request: Request) -> int:
    """Index of the first conversation-level block of ``request`` (levels are in order
    ``tools -> system -> messages -> tail``, so only the tools and system blocks are read)."""
    blocks = request.blocks
    k = 0
    n = len(blocks)
    while k < n and blocks[k].level in ("tools", "system"):
        k += 1
    return k


def _key(kind: str, blocks: Sequence[LayoutBlock]) -> tuple[str, int]:
    return (kind, id(blocks[0].block) if blocks else 0)


def find_slot(kind: str, blocks: Sequence[LayoutBlock], context: Any = None) -> RenderSlot | None:
    """The slot of renderer ``kind`` whose first conversation block is ``blocks[0]`` (same
    object) and whose ``context`` equals ``context``; ``None`` when there is none."""
    slot = _SLOTS.get(_key(kind, blocks))
    if slot is None or not slot.blocks or not blocks or slot.blocks[0] is not blocks[0]:
        return None
    if slot.context != context:
        return None
    return slot


def store_slot(kind: str, slot: RenderSlot) -> None:
    """Keep ``slot`` as renderer ``kind``'s slot for its session (bounded; oldest dropped)."""
    if not slot.blocks:
        return
    key = _key(kind, slot.blocks)
    _SLOTS[key] = slot
    _SLOTS.move_to_end(key)
    while len(_SLOTS) > _MAX_SLOTS:
        _SLOTS.popitem(last=False)


def reusable_units(slot: RenderSlot | None, blocks: Sequence[LayoutBlock]) -> int:
    """How many leading units of ``slot`` can be reused for ``blocks``: those that end strictly
    inside the identity prefix of ``blocks`` and ``slot.blocks`` (0 without a slot)."""
    if slot is None:
        return 0
    p = common_prefix(blocks, slot.blocks)
    if p == len(blocks) == len(slot.blocks):
        return len(slot.outputs)
    # units 0..k-1 are reusable when starts[k] < p (unit k-1 ends before the first change and
    # the block after it is unchanged)
    starts = slot.starts
    lo, hi = 0, len(slot.outputs)
    while lo < hi:  # largest k with starts[k] < p, k <= len(outputs)
        mid = (lo + hi + 1) // 2
        if starts[mid] < p:
            lo = mid
        else:
            hi = mid - 1
    return lo


def group_runs(blocks: Sequence[LayoutBlock], start: int = 0) -> list[tuple[int, RenderedMessage]]:
    """:func:`regio.layout.render_common.group_messages_of` of the conversation-level
    ``blocks[start:]`` with the index each message starts at; ``start`` must be a message
    boundary (a block whose message differs from the block before it)."""
    out: list[tuple[int, RenderedMessage]] = []
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
        tail = b.level == "tail" or b.source.startswith("frozen:")
        out.append((k, RenderedMessage(b.role, tuple(blocks[k:j]), b.separate, tail)))
        k = j
    return out
