"""A collection of the freezing tail (stale copies dropped, ``tail_settled``) rewrites the prompt
from the oldest frozen copy on; under the Anthropic cache model it must still read back the
prefix before that copy, however many requests ago the copy was emitted (the request that
emitted it marked that prefix: ``TailCopy.follows``, docs/layout.md; regio.layout.breakpoints).

Before the fix the ``spare`` marker knew only the ``newest`` markers of the last
``MARKED_HISTORY`` (16) requests; a copy frozen earlier than that left no marker before the
change, and the whole prompt was written again (on the generated reread session at 128k, 8
collections wrote 251k tokens that the provider still held)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import (
    common_prefix_tokens,
    tail_session,
)
from regio.layout.model import MARKED_HISTORY

PROP = settings(max_examples=25, deadline=None)
MODEL = "claude-sonnet-4-5"


def _session(steps: list[tuple[int, bool]], settle_share: float):
    """(previous request, request, outcome) of :func:`layout_support.tail_session`."""
    for prev, req, out, _cleared in tail_session(steps, settle_share, MODEL):
        yield prev, req, out


def test_a_collection_of_a_copy_frozen_long_ago_reads_back_the_prefix_before_it():
    # scratch is set at request 6 (frozen from request 7 on), then changed more than
    # MARKED_HISTORY requests later, so the old copy is stale and past the settle share
    first, late = 6, 6 + MARKED_HISTORY + 4
    steps = [(2, n in (first, late)) for n in range(late + 4)]
    collections = [
        (prev, req, out)
        for prev, req, out in _session(steps, settle_share=0.005)
        if any(e.kind == "tail_settled" for e in req.events)
    ]
    assert collections, "the stale copy was never collected"
    prev, req, out = collections[0]
    first_copy = next(i for i, b in enumerate(prev.blocks) if b.source.startswith("frozen:"))
    held = sum(b.tokens for b in prev.blocks[:first_copy])
    assert common_prefix_tokens(prev, req) == held  # the collection rewrites from the copy on
    head = sum(b.tokens for b in prev.blocks if b.level in ("tools", "system"))
    assert held > head + 1_500  # the conversation before the copy, beyond the system prompt
    assert out.read == held  # ... and reads everything before it back
    assert any(m.slot == "spare" for m in req.breakpoints)


@PROP
@given(
    st.integers(1, 8),
    st.integers(1, 3 * MARKED_HISTORY),
    st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=4, max_size=12),
    st.sampled_from([0.002, 0.01, 0.05]),
)
def test_every_tail_collection_reads_back_the_prefix_before_the_oldest_dropped_copy(
    first: int, gap: int, tail: list[tuple[int, bool]], settle_share: float
) -> None:
    """Whatever the session (a value set at ``first``, changed ``gap`` requests later, then
    random turns and changes), a request that collects the tail reads back every block before
    the oldest copy it drops (all requests within the TTL)."""
    steps = [(2, n in (first, first + gap)) for n in range(first + gap + 1)] + tail
    for prev, req, out in _session(steps, settle_share):
        if prev is None or not any(e.kind == "tail_settled" for e in req.events):
            continue
        first_copy = next(
            (i for i, b in enumerate(prev.blocks) if b.source.startswith("frozen:")), None
        )
        if first_copy is None:
            continue
        held = sum(b.tokens for b in prev.blocks[:first_copy])
        assert common_prefix_tokens(prev, req) >= held
        assert out.read >= held
