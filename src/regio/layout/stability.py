"""Prefix-stability classifier for consecutive requests.

:func:`classify` compares two requests block by block through their chained prefix hashes:

* ``identical`` — the same blocks (tail included);
* ``extension`` — every block of ``prev`` before its tail is unchanged at the same position in
  ``cur`` (only appends, and tail changes);
* ``divergence`` — otherwise, with the first differing place: ``tools``, the system region
  name (``system:<region>``; ``system`` for a block with no single region), ``message:<n>``,
  or ``tail``, and the token offset (tokens before the first differing block).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .model import LayoutBlock, Request

__all__ = ["Stability", "classify"]


class Stability(msgspec.Struct, frozen=True):
    """``kind``: ``identical`` | ``extension`` | ``divergence``; ``at``: where the first
    difference is (``None`` when identical or an extension); ``block``: its index in ``cur``;
    ``offset``: tokens before it (the reusable prefix, in tokens)."""

    kind: Literal["identical", "extension", "divergence"]
    at: str | None = None
    block: int | None = None
    offset: int = 0


def _where(b: LayoutBlock) -> str:
    if b.level == "tools":
        return "tools"
    if b.level == "system":
        return f"system:{b.region}" if b.region else "system"
    if b.level == "messages":
        return f"message:{b.message}"
    return "tail"


def classify(prev: Request, cur: Request) -> Stability:
    """Classify ``cur`` against ``prev`` (see module docstring)."""
    a = [b.prefix_hash for b in prev.blocks]
    b = [x.prefix_hash for x in cur.blocks]
    if a == b:
        return Stability("identical", offset=cur.tokens)
    body = [x for x in prev.blocks if x.level != "tail"]
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    offset = sum(x.tokens for x in cur.blocks[:common])
    if common >= len(body):
        return Stability("extension", offset=offset)
    where = _where(cur.blocks[common]) if common < len(cur.blocks) else _where(prev.blocks[common])
    return Stability("divergence", at=where, block=common, offset=offset)
