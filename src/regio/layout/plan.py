"""Planning the regions of one request: settled notes, sections and the freezing tail.

:func:`plan_regions` decides, for the strategy of a :class:`Job`, which grows entries are
settled and which travel as notes (:mod:`regio.layout.settle`), the system and tail sections
(:meth:`regio.layout.LayoutStrategy.sections`) and — for a strategy with a freezing tail — which
rewritten-region copies stay frozen and which go to the tail, and whether the stale copies are
collected now (:mod:`regio.layout.tail`). :func:`refresh_tail` applies the one check that needs
the system blocks (a changed system prefix collects the tail too); :func:`extras_of` places the
notes and frozen copies after their anchors in the conversation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import attrs

from regio.content import Entry, canonical_json

from .events import LayoutEvent, NotesSettled, TailSettled
from .model import CacheEconomics, ChunkState, LayoutState, Note, TailCopy
from .observe import Observation, observe_regions, opening_digest
from .protocols import RegionLike, WindowLike, count_text
from .renderlog import (
    Extra,
    RenderLog,
    frozen_message,
    note_message,
    same_prefix,
    summary_message,
)
from .repair import PMessage
from .sections import Section, holds_summaries, renders_itself
from .settle import Settling, plan_settling
from .strategy import LayoutStrategy
from .tail import TailPlan, forecast_due, plan_tail, rent_due, stale_tokens

__all__ = ["Job", "RegionPlan", "extras_of", "plan_regions", "refresh_tail"]

_ID = attrgetter("id")


@attrs.frozen
class Job:
    """What one :func:`regio.layout.assemble` call works with (read-only): the window, the
    strategy, the previous state (``None`` on a first request), the options (tokens unless
    noted) and the session's render log, plus the window's regions split once and, for a
    strategy that ``observes``, what the regions' writes did since the previous request
    (:mod:`regio.layout.observe`); ``sent_at``: when the request is sent (clock seconds,
    ``None``: unknown; :mod:`regio.layout.breakpoints`); ``rewrite_odds``: the odds that the
    next request rewrites the conversation and ``rewrite_horizon`` the requests expected until
    it is rewritten anyway (``None``: unknown; :mod:`regio.policies.rewriteodds`)."""

    window: WindowLike
    strategy: LayoutStrategy
    prev_state: LayoutState | None
    placed: int
    ttl: str
    stable_ttl: str | None
    min_tokens: int
    gc_ratio: float
    mark_odds: float
    chunk_tokens: int
    settle_share: float
    log: RenderLog
    others: list[RegionLike]
    conversation: list[Entry]
    observation: Observation | None = None
    sent_at: float | None = None
    rewrite_odds: float | None = None
    rewrite_horizon: float | None = None

    @property
    def newest_unread(self) -> bool:
        """Whether this request's ``newest`` marker is expected to go unread: the odds that
        the next request reads it (``1 - rewrite_odds``) are below the marker's
        :attr:`mark_odds` (:mod:`regio.policies.rewriteodds`)."""
        return self.rewrite_odds is not None and 1.0 - self.rewrite_odds < self.mark_odds

    @classmethod
    def build(
        cls,
        window: WindowLike,
        strategy: LayoutStrategy,
        *,
        state: LayoutState | None,
        **options: Any,
    ) -> Job:
        """A job for ``window``; syncs the log with the conversation's entries. ``options``
        holds ``economics`` (the provider's :class:`CacheEconomics`: the job keeps its
        ``gc_ratio`` and its marker odds for ``ttl``) and the job's other fields."""
        regions = list(window.regions)
        conv = next((r for r in regions if r.is_conversation), None)
        source = conv.entries if conv is not None else None
        conversation: list[Entry] = list(source) if source is not None else []
        econ: CacheEconomics = options.pop("economics")
        options.update(gc_ratio=econ.gc_ratio, mark_odds=econ.odds_for(options["ttl"]))
        log: RenderLog = options["log"]
        log.sync(conversation, source)
        prev = state if state is not None and state.requests else None
        placed = (state.requests if state is not None else 0) + 1
        others = [r for r in regions if r is not conv]
        observation = None
        if getattr(strategy, "observes", False):
            opening = opening_digest(conversation, others)
            observation = observe_regions(
                others,
                prev,
                request=placed,
                prefix_rewritten=prev is not None and prev.opening not in ("", opening),
                digest=log.entry_digest,
                opening=opening,
            )
        return cls(
            window=window,
            strategy=strategy,
            prev_state=prev,
            placed=placed,
            others=others,
            conversation=conversation,
            observation=observation,
            **options,
        )

    @property
    def placement(self) -> dict[str, str]:
        """Region -> the volatility it is laid out with, where that is not the declared one
        (observed volatility; empty for a strategy that does not observe)."""
        return self.observation.placement if self.observation is not None else {}

    def volatility(self, region: RegionLike) -> str:
        """The volatility ``region`` is laid out with."""
        return self.placement.get(region.name, region.volatility)

    @property
    def grows(self) -> list[RegionLike]:
        """The regions laid out as grows whose entries can settle (custom regions own their
        text). Under a strategy that opens the messages with the ``compact_history`` summaries
        (``summaries_in_messages``) those regions are not among them: a summary is shown once,
        as a summary, never also as an unsettled note."""
        in_messages = getattr(self.strategy, "summaries_in_messages", False)
        return [
            r
            for r in self.others
            if self.volatility(r) == "grows"
            and not renders_itself(r)
            and not (in_messages and holds_summaries(r))
        ]


@attrs.define
class RegionPlan:
    """The regions' part of one request (see the module docstring)."""

    settling: Settling | None
    system: list[Section]
    tail_sections: list[Section]
    chunks_used: dict[str, tuple[ChunkState, ...]]
    tail_plan: TailPlan | None = None
    gc_reason: str | None = None
    stale_rent: int = 0
    events: list[LayoutEvent] = attrs.field(factory=list)

    @property
    def notes(self) -> list[tuple[Note, Entry]]:
        """Unsettled notes with their entries, in placement order."""
        return self.settling.notes if self.settling is not None else []

    @property
    def settled_ids(self) -> dict[str, tuple[str, ...]]:
        """Region -> settled entry ids."""
        if self.settling is None:
            return {}
        return {k: tuple(map(_ID, v)) for k, v in self.settling.settled.items()}


def _settle(job: Job, force: str | None) -> Settling | None:
    if not job.strategy.settles:
        return None
    return _summaries_settled(job, _plan_settling(job, force))


def _summaries_settled(job: Job, settling: Settling) -> Settling:
    """``settling`` with every entry of a ``compact_history`` settled: when the strategy opens
    the messages with its summaries, they are shown there (:func:`summary_extras`), never as a
    note too (a merge, or an item section, written without a compaction of the conversation
    would otherwise be shown twice)."""
    if not getattr(job.strategy, "summaries_in_messages", False):
        return settling
    held = {r.name: r for r in job.grows if holds_summaries(r)}
    if not held or not any(note.region in held for note, _ in settling.notes):
        return settling
    settled = dict(settling.settled)
    for name, region in held.items():
        settled[name] = list(region.entries)
    notes = [(note, entry) for note, entry in settling.notes if note.region not in held]
    return Settling(settled, notes, settling.reason)


def _plan_settling(job: Job, force: str | None) -> Settling:
    return plan_settling(
        job.grows,
        job.conversation,
        job.prev_state,
        window_tokens=int(job.window.max_tokens),
        settle_share=job.settle_share,
        force=force,
        placed=job.placed,
        has_entry=job.log.has_entry,
        digest=job.log.entry_digest,
    )


def _sections(job: Job, plan: RegionPlan) -> None:
    settling = plan.settling
    prev = job.prev_state
    plan.system, plan.tail_sections, plan.chunks_used = job.strategy.sections(
        job.window,
        job.others,
        settled=settling.settled if settling is not None else None,
        previous_chunks=prev.chunks if prev is not None else {},
        chunk_tokens=job.chunk_tokens,
        memo=job.log,
        **({"placement": job.placement} if job.observation is not None else {}),
    )


def _tail_for(job: Job, plan: RegionPlan, gc: bool) -> TailPlan:
    conv = job.conversation
    return plan_tail(
        job.window,
        plan.tail_sections,
        job.prev_state,
        anchor=conv[-1].id if conv else None,
        turn=int(conv[-1].turn) if conv else 0,
        placed=job.placed,
        gc=gc,
        regions={r.name: r for r in job.others},
    )


def _first_reason(job: Job, plan: RegionPlan) -> str | None:
    """Why the freezing tail is collected before looking at its size: the prefix is rewritten
    anyway (settled notes, a changed first message, a lost anchor)."""
    prev = job.prev_state
    copies = (*prev.frozen, *prev.tail) if prev is not None else ()
    if not copies or prev is None:
        return None
    if plan.settling is not None and plan.settling.reason is not None:
        return plan.settling.reason
    first = job.conversation[0].digest if job.conversation else None
    if prev.first_message is not None and first != prev.first_message:
        return "prefix_rewritten"
    if any(c.anchor is not None and not job.log.has_entry(c.anchor) for c in copies):
        return "anchor_lost"
    if prev.anchored and anchored_digest(job, copies) != prev.anchored:
        return "conversation_rewritten"
    return None


def anchored_digest(job: Job, copies: Sequence[TailCopy]) -> str:
    """Digest of ``job``'s conversation entries up to and including the anchor of the first of
    ``copies`` (``LayoutState.anchored``: ``content_hash`` of their digests, in order; ``""``
    when there are none, the first has no anchor or its anchor is not in the conversation).
    The session's render log keeps the last value with the entries it covers and the hash
    state through them (``RenderLog.anchored``): while those entries are the same objects at
    the head of the conversation (compared in C), a request that appends hashes only the
    entries after them, and one whose anchor did not move none (a cache: the value is the same
    with a fresh log)."""
    anchor = copies[0].anchor if copies else None
    if anchor is None:
        return ""
    conv, log = job.conversation, job.log
    memo = log.anchored
    kept = memo is not None and same_prefix(conv, memo[1]) == len(memo[1])
    if memo is not None and kept and memo[0] == anchor:
        return memo[3]  # entry ids are unique: the anchor is still the last of those entries
    at = next((i for i in range(len(conv) - 1, -1, -1) if conv[i].id == anchor), None)
    if at is None:
        return ""
    through = conv[: at + 1]
    if memo is not None and kept and len(memo[1]) <= len(through):
        done, hasher = len(memo[1]), memo[2].copy()
    else:
        done, hasher = 0, hashlib.sha256(b"[")
    for i in range(done, len(through)):  # the bytes canonical_json gives the list
        hasher.update((b"," if i else b"") + canonical_json(log.entry_digest(through[i])))
    end = hasher.copy()
    end.update(b"]")
    digest = end.hexdigest()
    log.anchored = (anchor, through, hasher, digest)
    return digest


def _freezing_tail(job: Job, plan: RegionPlan) -> None:
    prev = job.prev_state
    plan.gc_reason = _first_reason(job, plan)
    tail = plan.tail_plan = _tail_for(job, plan, plan.gc_reason is not None)
    share = job.settle_share * job.window.max_tokens
    if plan.gc_reason is None and stale_tokens(tail.frozen, tail.tail) > share:
        plan.gc_reason = "share"
        tail = plan.tail_plan = _tail_for(job, plan, True)
        if plan.notes:  # the prefix is rewritten anyway: settle too
            plan.settling = _settle(job, "tail_share")
            _sections(job, plan)
    if plan.gc_reason is None:
        before = prev.stale_rent if prev is not None else 0
        stale = stale_tokens(tail.frozen, tail.tail)
        plan.stale_rent = before + stale
        if plan.stale_rent and rent_due(
            plan.stale_rent, tail.frozen, tail.tail, job.conversation, job.gc_ratio
        ):
            plan.gc_reason = "rent"
        elif (
            stale
            and job.rewrite_horizon is not None
            and forecast_due(
                tail.frozen,
                tail.tail,
                job.conversation,
                job.rewrite_horizon,
                job.gc_ratio,
                through=job.prev_state.newest_entry if job.prev_state is not None else None,
                notes=[(note, note_tokens(job, note, entry)[1]) for note, entry in plan.notes],
                placed=job.placed,
            )
        ):
            plan.gc_reason = "forecast"
        if plan.gc_reason is not None:
            plan.tail_plan = _tail_for(job, plan, True)


def plan_regions(job: Job) -> RegionPlan:
    """Settling, sections and (for a freezing-tail strategy) the tail plan of ``job``."""
    plan = RegionPlan(_settle(job, None), [], [], {})
    _sections(job, plan)
    if job.strategy.freezing_tail:
        _freezing_tail(job, plan)
    return plan


def refresh_tail(job: Job, plan: RegionPlan, system_end: str) -> None:
    """Collect the freezing tail when the system prefix (hash ``system_end``) changed, then
    record the tail and settling events."""
    prev = job.prev_state
    if (
        plan.tail_plan is not None
        and plan.gc_reason is None
        and prev is not None
        and (prev.frozen or prev.tail)
        and prev.system_hash is not None
        and prev.system_hash != system_end
    ):
        plan.gc_reason = "system_changed"
        plan.tail_plan = _tail_for(job, plan, True)
    tail = plan.tail_plan
    if tail is not None and tail.dropped:
        plan.events.append(
            TailSettled(
                plan.gc_reason or "prefix_rewritten",
                tuple(c.region for c in tail.dropped),
                stale_tokens(tail.dropped, tail.tail),
            )
        )
    settling = plan.settling
    if settling is not None and settling.reason is not None:
        before = prev.settled if prev is not None else {}
        ids = tuple(
            e.id
            for r in job.grows
            for was in (frozenset(before.get(r.name, ())),)
            for e in r.entries
            if prev is not None and e.id not in was
        )
        plan.events.append(NotesSettled(settling.reason, ids))


def note_text(region: str, entry: Entry) -> str:
    """The text of an unsettled grows-region entry travelling in the conversation."""
    return f"[context note -> region '{region}']\n{entry.text}"


def summary_text(region: str, entry: Entry) -> str:
    """The text of a ``compact_history`` summary opening the messages."""
    return f"[summary of earlier context -> region '{region}']\n{entry.text}"


def summary_extras(job: Job) -> list[Extra]:
    """The ``compact_history`` summaries, oldest first, as messages that open the
    conversation (anchor ``None``), when the strategy puts them there
    (``summaries_in_messages``): never joined into the system text, so a compaction leaves the
    system bytes as they were and earlier summaries stay byte-identical, appended. The log
    keeps the list while the summary regions are unchanged and each entry's message while its
    entry stays (:meth:`RenderLog.summaries`), so a request costs what is new."""
    if not getattr(job.strategy, "summaries_in_messages", False):
        return []
    window = job.window

    def message(region: str, entry: Entry) -> tuple[PMessage, int]:
        text = summary_text(region, entry)
        ntok = entry.tokens + count_text(window, text[: len(text) - len(entry.text)])
        return summary_message(text, ntok, entry.id, region), ntok

    regions = [r for r in window.regions if holds_summaries(r)]
    return job.log.summaries(regions, message)


def note_tokens(job: Job, note: Note, entry: Entry) -> tuple[str, int]:
    """The text of the message carrying ``note`` and its tokens (the entry's and the note
    header's)."""
    text = note_text(note.region, entry)
    return text, entry.tokens + count_text(job.window, text[: len(text) - len(entry.text)])


def extras_of(job: Job, plan: RegionPlan) -> dict[str | None, list[Extra]]:
    """Anchor -> the notes and frozen tail copies placed after it, in placement order (notes
    of a request before its copies: the notes preceded that request's tail); the
    ``compact_history`` summaries open the conversation (:func:`summary_extras`; the log's
    list is never extended in place)."""
    by_anchor: dict[str | None, list[Extra]] = {}
    for note, entry in plan.notes:
        text, ntok = note_tokens(job, note, entry)
        pm = note_message(text, ntok, entry.id, note.region)
        by_anchor.setdefault(note.anchor, []).append(((note.placed, 0), pm, (ntok,), (None,)))
    if plan.tail_plan is not None:
        groups: dict[tuple[str | None, int], list[tuple[str, int, str]]] = {}
        for c in plan.tail_plan.frozen:
            groups.setdefault((c.anchor, c.placed), []).append((c.text, c.tokens, c.region))
        for (anchor, when), copies in groups.items():
            by_anchor.setdefault(anchor, []).append(
                (
                    (when, 1),
                    frozen_message(when, copies),
                    tuple(n for _, n, _ in copies),
                    tuple(r for _, _, r in copies),
                )
            )
    for extras in by_anchor.values():
        extras.sort(key=lambda item: item[0])
    summaries = summary_extras(job)  # the log's list, in order (keys (-1, i) sort first)
    if summaries:
        after = by_anchor.get(None)
        by_anchor[None] = [*summaries, *after] if after else summaries
    return by_anchor
