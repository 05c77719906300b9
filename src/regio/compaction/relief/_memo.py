"""The edits and token gains one compaction flush has worked out (:class:`ReliefMemo`).

Under token pressure a flush runs up to three relief passes over the same conversation
(:func:`regio.compaction.relief._chain.relieve_queued`, then
:func:`regio.compaction.relief._cut.relieve_before_cuts`, then, after the summary,
:func:`regio.compaction.relief._chain.relieve_after`). Each pass weighs a stage's candidates by the
tokens their edits free, and the edit of a cleared result includes its salient extract, the
costly part. The flush owns one memo and hands it to every pass, so an edit worked out by one
pass is reused by the next instead of recomputed; the memo is dropped with the flush.

A memoized edit is reused only while it is still the edit a fresh pass would make: it is
keyed by region, stage, entry id and block index, and it holds the block it edited and the
candidate's call id, tool and newer call (``by``). A lookup whose block is no longer equal to
that one (an earlier stage or pass rewrote it: entries are immutable, so a rewrite is a new
block) or whose candidate differs recomputes the edit. The candidate's ``index`` is not part of
it: a summary's cut shifts the entries, never an entry's blocks. This holds because a stage's
edit is a function of the block, those candidate fields and what a flush never changes (the
relief policy, whether ``context_restore`` is offered, the originals kept on admission, the
token counter).
"""

from __future__ import annotations

import attrs

from regio.content import Block, Entry
from regio.policies.relief import Candidate

__all__ = ["ReliefMemo"]


@attrs.frozen
class _Done:
    old: Block
    call: tuple[str, str, str]
    new: Block
    gain: int


def _call(cand: Candidate) -> tuple[str, str, str]:
    return (cand.call_id, cand.tool, cand.by)


@attrs.define
class ReliefMemo:
    """One flush's memo of relief edits (module doc): ``(new block, tokens freed)`` per
    ``(region, stage, entry id, block index)``, valid while the block and the candidate are
    the ones it was worked out for. ``hits`` / ``misses``: lookups answered from the memo /
    worked out again (for tests and benchmarks)."""

    _done: dict[tuple[str, str, str, int], _Done] = attrs.field(factory=dict, init=False)
    hits: int = attrs.field(default=0, init=False)
    misses: int = attrs.field(default=0, init=False)

    def get(
        self, region: str, stage: str, entry: Entry, cand: Candidate
    ) -> tuple[Block, int] | None:
        """The memoized ``(new block, tokens freed)`` of ``stage`` editing block
        ``cand.block`` of ``entry`` in ``region``; ``None`` when there is none, or it was
        worked out for another content of that block or another candidate."""
        done = self._done.get((region, stage, entry.id, cand.block))
        old = entry.blocks[cand.block]
        if done is None or done.call != _call(cand) or not (done.old is old or done.old == old):
            self.misses += 1
            return None
        self.hits += 1
        return done.new, done.gain

    def put(
        self, region: str, stage: str, entry: Entry, cand: Candidate, new: Block, gain: int
    ) -> tuple[Block, int]:
        """Keep ``(new, gain)``, the edit of block ``cand.block`` of ``entry`` as it is now,
        replacing any earlier one for that block; returns it."""
        old = entry.blocks[cand.block]
        self._done[(region, stage, entry.id, cand.block)] = _Done(old, _call(cand), new, gain)
        return new, gain
