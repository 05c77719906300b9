"""A request that rewrites the conversation in place from an entry older than the last
``MARKED_HISTORY`` requests (an old tool result cleared by relief, with no tail copy after it)
should still read back the prefix before that entry while the provider holds it: the request
that sent the entry before it marked that prefix with its ``newest`` marker (regio.layout.
breakpoints, ``spare``).

Known gap (left for a design change, see the review report of branch rv8b): the ``spare``
marker remembers the last ``MARKED_HISTORY`` (16) requests' ``newest`` markers plus the
prefixes the frozen tail copies follow (``TailCopy.follows``); the latter covers only a
rewrite at a tail copy, so a clear of a result 18+ requests old reads back the system prompt
alone (1,652 of the 8,291 tokens before the change here) although every request was sent 5 s
apart, well inside the 5-minute TTL."""

from __future__ import annotations

import pytest

from layout_support import common_prefix_tokens, tail_session
from regio.layout.model import MARKED_HISTORY

MODEL = "claude-sonnet-4-5"


def _held(runs, req) -> int:
    """Tokens through the deepest block of ``req`` whose prefix an earlier request of ``runs``
    marked (all sent within the TTL): what the provider still holds of ``req``."""
    marked = {r.blocks[m.index].prefix_hash for _p, r, _o, _c in runs for m in r.breakpoints}
    total, held = 0, 0
    for b in req.blocks:
        total += b.tokens
        if b.prefix_hash in marked:
            held = total
    return held


@pytest.mark.xfail(
    strict=True,
    reason="spare knows only MARKED_HISTORY requests' markers and the tail copies' follows",
)
def test_an_in_place_clear_older_than_the_marked_history_reads_back_the_prefix_before_it():
    at = 38
    old = at - MARKED_HISTORY - 2  # the result of that step is cleared at request ``at``
    steps = [(1, False, old if n == at else None) for n in range(at + 1)]
    runs = list(tail_session(steps, 0.05, MODEL))
    prev, req, out, cleared = runs[at]
    assert cleared and not (prev.state.frozen or prev.state.tail)  # no tail copy involved
    head = sum(b.tokens for b in prev.blocks if b.level in ("tools", "system"))
    held = _held(runs[:at], req)
    assert head + 1_500 < held <= common_prefix_tokens(prev, req)  # deep in the conversation
    assert out.read >= held
