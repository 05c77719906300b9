"""The relief chain: cheap moves before summarization (``EngineOptions.relief``).

Under token pressure -- a conversation (``sliding_window`` under ``compact`` eviction) queued
for compaction by its token trigger, a write that needs room, the whole-context trigger, the
request ceiling or an overflow -- the flush first runs, toward the same hysteresis target:

0. **dedupe** (tools with ``dedupe``): every live result superseded by a newer call with the
   same tool and arguments becomes a placeholder naming the newer call, all at once, never
   one whose placeholder is not smaller (:func:`regio.policies.relief.dedupe_candidates`);
1. **clear**: the oldest answered tool results become a placeholder naming the call and how
   to get it back, with the result's salient items
   (:func:`regio.compaction.relief._extract.salient_extract`;
   :func:`regio.policies.relief.placeholder`,
   byte-identical forever);
2. **trim**: tool results and assistant text over ``trim_over_chars`` characters keep their
   head and tail around a marker saying how many characters were cut;
3. **summarize**: the region's compaction, for whatever the first two left above the target.

Each stage frees in one batch down to the target (dedupe: every duplicate), or does not run
when it would free less than its minimum (``dedupe_at_least`` / ``clear_at_least`` /
``trim_at_least`` tokens): every edit rewrites the provider
cache from the first edited block on, so it must buy enough room to be worth that rewrite
(the reason of Anthropic's ``clear_at_least``,
https://docs.anthropic.com/en/docs/build-with-claude/context-editing). The chain stops as soon
as the target is met; a summarization then finds its region at target and does nothing. When
clearing and trimming together cannot reach the target, neither runs (the summary rewrites the
prefix from the conversation's start anyway); with ``clear_after_summary`` they run on what the
summary kept, in the same rewrite (:func:`relieve_after`).

On admission (:func:`regio.compaction.relief._admit.admit`) a tool result follows its tool's
policy: ``route`` writes it to a region and leaves a pointer in the conversation;
``max_result_tokens`` trims it (head + tail, marker). Both take effect only once the
conversation has admitted the message (a refused write changes nothing).

Each pass (:class:`_Pass`) selects a stage's candidates and computes each candidate's edit and
gain once. A flush's passes share one memo of the edits and gains
(:class:`regio.compaction.relief._memo.ReliefMemo`, owned by the flush and dropped when it ends),
so an edit one pass worked out is not worked out again by the next while its block is
unchanged.

Nothing is lost: a block's content is replaced, never the block (a ``tool_use`` and its
``tool_result`` stay one group), the transcript keeps every message as admitted, results
changed on admission are kept in :class:`regio.session._reliefbook.ReliefBook`, and
:func:`regio.compaction.relief._originals.restore` (the ``context_restore`` tool) returns the
original text
byte for byte, as the tool result appended at the end of the conversation, never re-inserted in
place.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import msgspec

from regio.compaction._cuts import unsent, unsent_from
from regio.compaction._planning import region_target
from regio.content import Block, Entry, Text, ToolResult
from regio.events import Event
from regio.policies import relief as rp
from regio.policies.eviction import Compact
from regio.regions import SlidingWindow
from regio.session._session import Session
from regio.session._toolspecs import restore_offered
from regio.summarizers.toolnotes import reported_lines

from ._extract import salient_extract
from ._memo import ReliefMemo

__all__ = [
    "ReliefApplied",
    "ReliefSkipped",
    "relieve",
    "relieve_after",
    "relieve_queued",
    "restorable",
    "rewrite_block_entry",
]


class ReliefApplied(Event, frozen=True, tag="relief_applied"):
    """A relief stage edited ``region``: ``stage`` (``clear``, ``trim``, ``dedupe``,
    ``admit_trim``, ``route``), the ``call_ids`` / ``entry_ids`` it touched and the tokens it
    freed (``tokens_before`` / ``tokens_after``: the region's used tokens)."""

    stage: str
    region: str
    call_ids: tuple[str, ...]
    entry_ids: tuple[str, ...]
    tokens_freed: int
    tokens_before: int
    tokens_after: int


class ReliefSkipped(Event, frozen=True, tag="relief_skipped"):
    """A stage that could free ``available`` tokens did not run; ``need``: tokens above the
    target. ``reason``: ``"below_minimum"`` (its batch would free less than its minimum
    ``at_least``) or ``"short_of_target"`` (its batch met its minimum, but the stages together
    cannot reach the target, so the summarization runs instead; module doc)."""

    stage: str
    region: str
    available: int
    at_least: int
    need: int
    reason: str = "below_minimum"


def restorable(c: Session) -> bool:
    """The engine offers ``context_restore`` (placeholders then say to call it): read from
    its options alone (:func:`regio.session._toolspecs.restore_offered`), no schema built."""
    return restore_offered(c.options.context_tools, c.options.relief)


# ----- the chain under pressure ------------------------------------------------------------
def relieve_queued(
    c: Session,
    trigger: str,
    targets: dict[str, int] | None,
    only: str | None = None,
    memo: ReliefMemo | None = None,
) -> list[str]:
    """Run the chain on every conversation queued for a compaction that size forced (not a
    ``manual`` one, not an item-count ``compact_count`` batch), toward its flush target
    (``targets`` or :func:`region_target`; ``memo``: the flush's, else the pass's own).
    Returns the names of the conversations under compact eviction whose pass freed tokens and
    brought them to their target: the pass stood in for their compaction, so the flush
    measures what they keep as after a summary (:func:`regio.compaction._flush.flush_steps`)."""
    if c.options.relief is None or trigger == "manual":
        return []
    stood_in = []
    for name in dict.fromkeys(p.region for p in c.window.pending_compactions()):
        region = c.window.region(name)
        reasons = {p.reason for p in region.pending()}
        if only not in (None, name) or not isinstance(region, SlidingWindow):
            continue
        if reasons <= {"compact_count", "manual"}:
            continue
        target = (targets or {}).get(name, region_target(c, region))
        gained = relieve(c, region, target, memo)
        if gained > 0 and region.used_tokens <= target and isinstance(region.eviction, Compact):
            stood_in.append(name)
    return stood_in


def relieve_after(c: Session, regions: Sequence[str], memo: ReliefMemo | None = None) -> int:
    """With ``clear_after_summary``: after a summarization of the conversations ``regions``
    (it rewrote their cached prefix from the start), run the stages on what the summary kept,
    freeing all each can (its minimum still applies) in the same rewrite, so the room costs
    no extra cache write (``memo``: the flush's, else the pass's own). Returns the tokens
    freed."""
    policy = c.options.relief
    if policy is None or not policy.clear_after_summary:
        return 0
    freed = 0
    for name in regions:
        region = c.window.region(name)
        if isinstance(region, SlidingWindow):
            run = _Pass(c, region, policy, _stages(c, policy), memo or ReliefMemo())
            for stage in run.stages:
                freed += run.stage(stage, 0)
    return freed


def relieve(c: Session, region: SlidingWindow, target: int, memo: ReliefMemo | None = None) -> int:
    """Stages 0 to 2 of the chain on ``region`` toward ``target`` tokens (module doc);
    returns the tokens freed (0 when relief is off or the region is at or below target).
    ``memo``: the flush's memo of edits and gains (``None``: the pass keeps its own).

    The stages run only when together they bring the region to ``target``: otherwise the
    summarization runs anyway and rewrites the cached prefix from the conversation's start,
    so an edit before it would buy no room it does not buy itself and only lose detail (each
    stage that could free tokens is then counted: as ``skipped`` when its batch fell below its
    minimum in the dry run, as ``short`` when it met it). Whether they do is the plain
    dry run (:meth:`_Pass.dry_run`: every stage, in order, on a copy of the entry list), so
    the check and the run never disagree."""
    policy = c.options.relief
    need = region.used_tokens - target
    if policy is None or need <= 0:
        return 0
    run = _Pass(c, region, policy, _stages(c, policy), memo or ReliefMemo())
    could = run.dry_run(target)
    if could is not None:
        for s in run.stages:
            if could.get(s.name, 0) > 0:
                tally = c.book.relief.tally(s.name)
                if s.name in run.met_minimum:
                    tally.short += 1
                    reason = "short_of_target"
                else:
                    tally.skipped += 1
                    reason = "below_minimum"
                skipped = ReliefSkipped(
                    s.name, region.name, could[s.name], s.at_least, need, reason
                )
                c.emit(skipped)
        return 0
    freed = 0
    for s in run.stages:
        if region.used_tokens <= target:
            break
        freed += run.stage(s, target)
    return freed


Edit = Callable[[Entry, rp.Candidate], Block]
Select = Callable[[Sequence[Entry], rp.ReliefPolicy], list[rp.Candidate]]


@attrs.frozen
class _Stage:
    name: str
    at_least: int
    edit: Edit
    select: Select
    #: ``True``: the batch is every candidate (dedupe); ``False``: the fewest oldest that
    #: reach the target (:func:`regio.policies.relief.choose`)
    takes_all: bool = False


def _stages(c: Session, policy: rp.ReliefPolicy) -> list[_Stage]:
    """The enabled stages, cheapest first."""
    out = []
    if any(rule.dedupe for rule in policy.tools.values()):
        out.append(
            _Stage("dedupe", policy.dedupe_at_least, _superseded(c), rp.dedupe_candidates, True)
        )
    if policy.clear:
        out.append(_Stage("clear", policy.clear_at_least, _placeholders(c), rp.clear_candidates))
    if policy.trim:

        def cut(entry: Entry, cand: rp.Candidate) -> Block:
            block = entry.blocks[cand.block]
            head, tail = policy.trim_head_chars, policy.trim_tail_chars
            if isinstance(block, ToolResult):
                trimmed = rp.trim_text(block.content, head, tail)
                return msgspec.structs.replace(block, content=trimmed)  # keeps final, media
            assert isinstance(block, Text)
            return Text(rp.trim_text(block.text, head, tail))

        out.append(_Stage("trim", policy.trim_at_least, cut, rp.trim_candidates))
    return out


@attrs.define
class _Pass:
    """One relief pass over ``region``: the memo of each stage's candidates, selected once
    for the pass and dropped with it, and ``memo``, the edits and gains worked out (the
    salient extract of a placeholder included), shared by the passes of one flush
    (:class:`ReliefMemo`; by default the pass's own). A stage's candidates are selected again
    only after an earlier stage of the pass edited the region (the edit changes which
    results are live and which are the newest ``keep_last``)."""

    c: Session
    region: SlidingWindow
    policy: rp.ReliefPolicy
    stages: list[_Stage]
    memo: ReliefMemo = attrs.field(factory=ReliefMemo)
    _selected: dict[str, list[rp.Candidate]] = attrs.field(factory=dict)
    #: the stages whose batch met their minimum in the last :meth:`dry_run`
    met_minimum: set[str] = attrs.field(factory=set)

    def select(self, stage: _Stage, entries: Sequence[Entry]) -> list[rp.Candidate]:
        """``stage``'s candidates among ``entries``, never in an entry no request carried
        yet (:func:`regio.compaction._cuts.unsent`: every result reaches the model once)."""
        held = unsent(entries, unsent_from(self.c))
        return [x for x in stage.select(entries, self.policy) if x.index not in held]

    def candidates(self, stage: _Stage) -> list[rp.Candidate]:
        """``stage``'s candidates on the region as it is now, oldest first."""
        if stage.name not in self._selected:
            self._selected[stage.name] = self.select(stage, list(self.region.entries))
        return self._selected[stage.name]

    def edit(self, stage: _Stage, cand: rp.Candidate) -> tuple[Block, int]:
        """``(new block, tokens freed)`` of ``stage`` editing ``cand`` (the counter's
        difference of the block's text)."""
        entry = self.region.entries[cand.index]
        done = self.memo.get(self.region.name, stage.name, entry, cand)
        if done is None:
            old = entry.blocks[cand.block]
            new = stage.edit(entry, cand)
            gain = self.c.count_text(rp.block_text(old)) - self.c.count_text(rp.block_text(new))
            done = self.memo.put(self.region.name, stage.name, entry, cand, new, gain)
        return done

    def gain(self, stage: _Stage, cand: rp.Candidate) -> int:
        return self.edit(stage, cand)[1]

    def choose(self, stage: _Stage, cands: Sequence[rp.Candidate], need: int) -> list[rp.Candidate]:
        """``stage``'s batch among ``cands`` for ``need`` tokens (:func:`rp.choose`, or every
        candidate for a ``takes_all`` stage; ``[]`` below its minimum)."""
        gain = functools.partial(self.gain, stage)
        if stage.takes_all:
            return rp.choose_all(cands, gain, stage.at_least)[0] if need > 0 else []
        return rp.choose(cands, gain, need, stage.at_least)[0]

    def dry_run(self, target: int) -> dict[str, int] | None:
        """The stages run in order toward ``target`` on a copy of the entry list (the same
        batches, edits and token counts as :meth:`stage`; the region is not touched):
        ``None`` when they reach it, else the tokens each stage could free (its candidates'
        gains) for the stages that could free any; :attr:`met_minimum` holds the stages whose
        batch met their minimum."""
        self.met_minimum = set()
        entries = list(self.region.entries)
        used = self.region.used_tokens
        could: dict[str, int] = {}
        for s in self.stages:
            if used <= target:
                return None
            cands = self.select(s, entries)
            available = sum(max(0, self.gain(s, x)) for x in cands)
            if available > 0:
                could[s.name] = available
            chosen = self.choose(s, cands, used - target)
            if chosen:
                self.met_minimum.add(s.name)
            for index, group in _by_entry(chosen).items():
                old = entries[index]
                blocks, meta = _edited(s.name, old, group, self._edit_of(s))
                entries[index] = new = _rewritten(self.c, old, blocks, meta)
                used -= old.tokens - new.tokens
        return None if used <= target else could

    def _edit_of(self, stage: _Stage) -> Edit:
        return lambda e, x: self.edit(stage, x)[0]

    def stage(self, stage: _Stage, target: int) -> int:
        """Run ``stage`` toward ``target``: choose its batch, apply it, count it; returns the
        tokens freed."""
        need = self.region.used_tokens - target
        cands = self.candidates(stage)
        chosen = self.choose(stage, cands, need)
        if not chosen:
            available = sum(max(0, self.gain(stage, x)) for x in cands)
            if available > 0 and need > 0:
                self.c.book.relief.tally(stage.name).skipped += 1
                skipped = ReliefSkipped(
                    stage.name, self.region.name, available, stage.at_least, need
                )
                self.c.emit(skipped)
            return 0
        freed = _apply(self.c, self.region, stage.name, chosen, self._edit_of(stage))
        self.drop_later(stage)
        return freed

    def drop_later(self, stage: _Stage) -> None:
        """After ``stage`` edited the region, the later stages' candidates are chosen again
        (the edit changes which results are live and which are the newest ``keep_last``)."""
        for s in self.stages[self.stages.index(stage) + 1 :]:
            self._selected.pop(s.name, None)


def _placeholders(c: Session) -> Edit:
    """The clear stage's edit: the result's placeholder with its salient extract (of the
    result as received: :func:`original_result` when admission changed it)."""
    can_restore = restorable(c)
    policy = c.options.relief
    budget = policy.placeholder_extract_tokens if policy is not None else 0

    def clear(entry: Entry, cand: rp.Candidate) -> Block:
        block = entry.blocks[cand.block]
        assert isinstance(block, ToolResult)
        source = c.book.relief.originals.get(block.tool_use_id, block).content
        extract = salient_extract(source, budget, c.count_text)
        reported = reported_lines(source) if budget > 0 else []
        tool = cand.tool or "a tool"
        text = rp.placeholder(
            cand.call_id, tool, restorable=can_restore, extract=extract, reported=reported
        )
        # the progress flag stays (a running call's group stays open); the media go with
        # the content they belong to. restore brings back the text only (the full result,
        # media included, stays in the transcript; docs/relief.md)
        return msgspec.structs.replace(block, content=text, media=())

    return clear


def _superseded(c: Session) -> Edit:
    """The dedupe stage's edit: the placeholder naming the newer call with the same tool and
    arguments (``Candidate.by``); byte-identical forever, like every placeholder."""
    can_restore = restorable(c)

    def supersede(entry: Entry, cand: rp.Candidate) -> Block:
        block = entry.blocks[cand.block]
        how = rp.placeholder(cand.call_id, cand.tool, restorable=can_restore)
        text = f"[superseded by call {cand.by} with the same arguments] {how}"
        # its media go too; a progress report stays non-final (its group stays open)
        return msgspec.structs.replace(block, content=text, media=())

    return supersede


def _by_entry(chosen: Sequence[rp.Candidate]) -> dict[int, list[rp.Candidate]]:
    by_entry: dict[int, list[rp.Candidate]] = {}
    for cand in chosen:
        by_entry.setdefault(cand.index, []).append(cand)
    return by_entry


def _edited(
    stage: str, entry: Entry, cands: Sequence[rp.Candidate], edit: Edit
) -> tuple[tuple[Block, ...], dict[str, Any]]:
    """``entry``'s blocks with ``cands`` edited, and its meta saying so."""
    blocks = list(entry.blocks)
    for cand in cands:
        blocks[cand.block] = edit(entry, cand)
    meta = dict(entry.meta)
    if stage in ("clear", "dedupe"):
        meta[rp.CLEARED_META] = [*meta.get(rp.CLEARED_META, ()), *(x.call_id for x in cands)]
    else:
        meta[rp.TRIMMED_META] = int(meta.get(rp.TRIMMED_META, 0)) + len(cands)
    return tuple(blocks), meta


def _apply(
    c: Session, region: SlidingWindow, stage: str, chosen: Sequence[rp.Candidate], edit: Edit
) -> int:
    """Replace the chosen blocks in their entries (same ids, groups and block order)."""
    before = region.used_tokens
    by_entry = _by_entry(chosen)
    for index, cands in by_entry.items():
        entry = region.entries[index]
        blocks, meta = _edited(stage, entry, cands, edit)
        rewrite_block_entry(c, region, index, entry, blocks, meta)
    freed = before - region.used_tokens
    tally = c.book.relief.tally(stage)
    tally.runs += 1
    tally.freed_tokens += freed
    tally.blocks += len(chosen)
    c.emit(
        ReliefApplied(
            stage,
            region.name,
            tuple(x.call_id for x in chosen if x.call_id),
            tuple(dict.fromkeys(region.entries[i].id for i in by_entry)),
            freed,
            before,
            region.used_tokens,
        )
    )
    return freed


def _rewritten(c: Session, entry: Entry, blocks: tuple[Block, ...], meta: dict[str, Any]) -> Entry:
    """``entry`` with ``blocks`` and ``meta``; its tokens shrink by what the counter measures
    the edit saves (the entry's own count, however it was measured, stays the base)."""
    counter = c.window.counter
    assert counter is not None
    meta.setdefault("admitted_tokens", entry.tokens)
    new = msgspec.structs.replace(entry, blocks=blocks, meta=meta)
    delta = int(counter.count_entry(entry)) - int(counter.count_entry(new))
    return msgspec.structs.replace(new, tokens=max(1, entry.tokens - delta))


def rewrite_block_entry(
    c: Session,
    region: SlidingWindow,
    index: int,
    entry: Entry,
    blocks: tuple[Block, ...],
    meta: dict[str, Any],
) -> None:
    """``entry`` (at ``index`` of ``region``) with ``blocks`` in place (:func:`_rewritten`)."""
    region.rewrite_entry(index, _rewritten(c, entry, blocks, meta))
