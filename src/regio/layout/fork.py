"""Summarizer requests that fork the main request.

:func:`fork_for_summary` keeps every block of the main request, markers included, and appends
the instruction as a new final user message that renderers never merge into the previous one.
So tools, system and every earlier message are byte-identical to the main request, the same
repair applies to both, the ``prompt_cache_key`` is the same, and the marker count is unchanged
(at most 4).
"""

from __future__ import annotations

import msgspec

from regio.content import Text

from .model import LayoutBlock, Request, block_digest, chain_hash
from .protocols import count_text
from .repair import LayoutError

__all__ = ["fork_for_summary"]


def _tokens(counter: object, text: str) -> int:
    count = getattr(counter, "count", None)
    return int(count(text)) if callable(count) else count_text(None, text)


def fork_for_summary(request: Request, instruction_text: str, counter: object = None) -> Request:
    """A request for the summarizer: ``request`` plus a final user message
    ``instruction_text``, counted with ``counter`` (a :class:`regio.tokens.TokenCounter`;
    ``None``: 4 characters a token). Raises :class:`LayoutError` when the instruction is
    blank."""
    if not instruction_text.strip():
        raise LayoutError(
            "fork_for_summary: instruction_text is empty; name the range to summarize"
        )
    last = max((b.message for b in request.blocks if b.message is not None), default=-1)
    block = Text(instruction_text)
    dg = block_digest("messages", "user", block, None)
    prev_hash = request.blocks[-1].prefix_hash if request.blocks else ""
    extra = LayoutBlock(
        level="messages",
        role="user",
        tokens=_tokens(counter, instruction_text),
        digest=dg,
        prefix_hash=chain_hash(prev_hash, dg),
        block=block,
        message=last + 1,
        source="synthetic:summary_instruction",
        separate=True,
        origin="synthetic",
    )
    return msgspec.structs.replace(
        request, blocks=(*request.blocks, extra), total_tokens=request.tokens + extra.tokens
    )
