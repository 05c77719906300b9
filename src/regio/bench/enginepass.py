"""The replay pass that drives one regio engine per layout through the captured stream
(:mod:`regio.bench.capture`): messages through ``Engine.add_message``, captured state through
region writes (:mod:`regio.capture.filing`), pending compactions flushed at turn boundaries,
and at each model call ``Engine.request``.

**A strategy that raises fails alone.** An engine that raises one of
:data:`regio.capture.filing.ENGINE_ERRORS` (a region that refuses a write with
``RegionFullError``, a request that cannot fit, a layout it cannot build) is that strategy's
failure on the trace: it is recorded (:meth:`regio.bench.tracking.Tracker.fail`), the engine
is dropped, every model call from there on counts as broken and unsent, and the other
strategies, regio's and the peers', carry on.

**Delegation** (``regio-delegate``, :data:`DELEGATE`): regio with
``EngineOptions.delegate_compaction`` at the provider's documented trigger scaled to the
window (:meth:`regio.bench.peers.providers.ProviderRule.trigger`), one rolling summary
(``carry_forward: replace``) and a conversation budget that reaches the trigger, so the
provider, not regio, compacts the conversation. The provider is simulated as the provider
peers are (:mod:`regio.bench.peers.providers`): a request over the trigger is billed as a
compaction pass (the request plus the summarization prompt, in the agent's cache scope) and
the message pass; the provider's summary is written by the offline summarizer over the
request's conversation, handed to ``Engine.adopt_compaction``, whose readable summary is
regio's own (the engine's summarizer, unbilled here: the extractive one sends no request),
and the message pass is the request regio renders after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.bench.billing import bill
from regio.bench.capture import Call, capture_stream
from regio.bench.peers.providers import PROVIDER_RULES, SUMMARY_PROMPT, compaction_item
from regio.bench.replaysetup import Clock, ReplaySetup
from regio.bench.report import ReliefStage
from regio.bench.tracking import Tracker, prompt_tokens
from regio.cache.types import CacheBlock, CacheRequest
from regio.capture import AddMessage, CaptureRule, RegionOp
from regio.capture.filing import ENGINE_ERRORS, Filed, apply_all, file_moves
from regio.compaction._delegation import render_option
from regio.content import block_text, content_hash
from regio.engine import Engine
from regio.errors import RegionFullError
from regio.layout import LayoutBlock, ProviderCompaction, Request, to_cache_request
from regio.layout.provider_compaction import item_of
from regio.regions.events import CompactionCompleted, CompactionQueued
from regio.session._events import CompactionFinished

if TYPE_CHECKING:
    from regio.blueprint import Blueprint
    from regio.events import Event

__all__ = [
    "ABLATIONS",
    "DELEGATE",
    "OPT_IN",
    "EngineRun",
    "as_sent",
    "delegate_blueprint",
    "engine_pass",
]

#: Ablations of regio: strategy name -> engine options it overrides. ``regio-summarize-only``
#: is regio with the relief chain off (token pressure goes straight to summarization);
#: ``regio-window-fill`` regio with the cost controller off (it compacts at the window-fill
#: mark), run only when named (:data:`OPT_IN`).
ABLATIONS: dict[str, dict[str, Any]] = {
    "regio-summarize-only": {"strategy": "regio", "relief": None},
    "regio-window-fill": {"strategy": "regio", "cost_control": False},
}
#: Ablations a run includes only when ``--layouts`` names them.
OPT_IN: tuple[str, ...] = ("regio-window-fill",)
#: regio delegating compaction to the provider (module doc).
DELEGATE = "regio-delegate"
#: The provider rule the delegating strategy is simulated with (the coding blueprint's
#: provider; its request sequence is priced under every cache model of the run).
DELEGATE_RULE = PROVIDER_RULES["anthropic-compaction"]

_COMPACTING_EVENTS = (
    "evicted",
    "reclaimed",
    "compaction_completed",
    "compaction_finished",
    "relief_applied",
)


def _watch(engine: Engine, tracker: Tracker) -> None:
    """Mark ``tracker`` compacted on the engine's eviction / compaction events, count its
    summarizer calls and its committed compactions by what queued them
    (:attr:`Tracker.compactions`)."""
    queued: dict[str, str] = {}  # pending id -> "region:reason"

    def on_event(event: Event) -> None:
        tag = type(event).__struct_config__.tag if hasattr(type(event), "__struct_config__") else ""
        if tag in _COMPACTING_EVENTS:
            tracker.compacted = True
        if isinstance(event, CompactionFinished):
            tracker.compaction_calls += int(event.summarizer_calls)
        elif isinstance(event, CompactionQueued):
            queued[event.pending_id] = f"{event.region}:{event.reason}"
        elif isinstance(event, CompactionCompleted):
            key = queued.pop(event.pending_id, f"{event.region}:unknown")
            tracker.compactions[key] = tracker.compactions.get(key, 0) + 1

    engine.subscribe(on_event)


def _engine_has_task(
    engine: Engine, req: Request, tasks: frozenset[str], summary_regions: set[str]
) -> tuple[bool, bool]:
    """(the request holds a task message, a summary stands in it: a block of a
    ``compact_history`` region or a conversation entry marked as a summary)."""
    conv = engine.window.conversation
    summaries = {e.id for e in conv.entries if e.meta.get("summary")} if conv is not None else set()
    has_task = summary = False
    for b in req.blocks:
        if b.block is None:
            continue
        if b.role == "user" and not has_task and block_text(b.block) in tasks:
            has_task = True
        if b.region in summary_regions or b.source in summaries:
            summary = True
    return has_task, summary


def delegate_blueprint(blueprint: Blueprint, trigger: int) -> Blueprint:
    """``blueprint`` for the delegating strategy: its conversation's budget raised to
    ``trigger`` tokens (the provider compacts at the request's trigger, before regio would)."""
    regions = tuple(
        attrs.evolve(r, budget=max(trigger, r.budget if isinstance(r.budget, int) else 0))
        if r.kind == "sliding_window"
        else r
        for r in blueprint.regions
    )
    return attrs.evolve(blueprint, regions=regions)


@attrs.define
class EngineRun:
    """One engine pass: the engines (failed ones dropped), their trackers, the region writes
    and refusals counted, the call about to be made (``call``: failures are dated by it)."""

    setup: ReplaySetup
    engines: dict[str, Engine]
    trackers: dict[str, Tracker]
    notes: list[str]
    trigger: int | None = None
    writes: int = 0
    refused: int = 0
    call: int = 0
    dropped: dict[str, Engine] = attrs.field(factory=dict)

    def fail(self, strategy: str, error: Exception) -> None:
        """Record ``error`` as ``strategy``'s failure at the coming call; its engine is
        dropped after the current step (:meth:`drop_failed`)."""
        self.trackers[strategy].fail(self.call, error)

    def drop_failed(self) -> None:
        """Drop every engine whose strategy failed."""
        for s in [s for s in self.engines if self.trackers[s].failure is not None]:
            self.dropped[s] = self.engines.pop(s)
            self.notes.append(
                f"{s} failed at call {self.trackers[s].failed_at}: {self.trackers[s].failure}"
            )

    def add_message(self, item: AddMessage, names: set[str]) -> Filed:
        """Add ``item``'s message to every engine after its capture moves (an engine whose
        region refused one adds the message as recorded), flushing a queued compaction after
        a non-assistant message; a message the engine's conversation refuses (its own text
        cannot fit even with the turn's tool results trimmed: :mod:`regio.engine._turnfit`)
        is skipped with a note. An environment observation reaches every engine as one."""
        filed = file_moves(self.engines, self.trackers, item, names, self.notes, self.fail)
        noted: set[int] = set()
        for s, engine in self.engines.items():
            if self.trackers[s].failure is not None:
                continue
            message = item.message if filed.by_engine[s] else item.fallback or item.message
            n = self.setup.counts(message)
            try:
                engine.add_message(message, tokens=n, observation=item.observation)
            except RegionFullError as exc:  # the engine decides, changing nothing
                if id(message) not in noted:
                    noted.add(id(message))
                    self.notes.append(
                        f"a {message.role} message of {n} tokens is larger than the "
                        f"conversation region can hold ({exc.region!r}): skipped by the layouts"
                    )
                continue
            except ENGINE_ERRORS as exc:
                self.fail(s, exc)
                continue
            try:
                if message.role != "assistant" and engine.pending():
                    engine.flush()
            except ENGINE_ERRORS as exc:
                self.fail(s, exc)
        return filed

    def request(self, s: str, item: Call, after: tuple[str, float]) -> None:
        """Strategy ``s``'s request at model call ``item`` (``after``: the previous request's
        id and end, for billing forks)."""
        setup, engine, tracker = self.setup, self.engines[s], self.trackers[s]
        bp = setup.blueprint
        provider, model = bp.model.provider, bp.model.name
        req, _payload = engine.request(provider, model, tools=setup.tools)
        billed = (tracker.compaction_requests, tracker.fork_requests)
        bill(engine.summarizer, billed, item, after, setup.trace.id, model)
        cache, text = self._sent(s, req, item)
        if s == DELEGATE and self.trigger is not None and prompt_tokens(cache) > self.trigger:
            req, cache, text = self._delegated(s, item, cache)
        summary_regions = {r.name for r in bp.regions if r.kind == "compact_history"}
        has_task, summary = _engine_has_task(engine, req, setup.tasks, summary_regions)
        tracker.requests.append(cache)
        tracker.seen(item.index, has_task, summary, text)

    def _sent(self, s: str, req: Request, item: Call) -> tuple[CacheRequest, Callable[[], str]]:
        """The cache request of ``req`` and a function giving its text; for the delegating
        strategy, as the provider receives it (:func:`as_sent`)."""
        setup = self.setup
        cache = to_cache_request(
            req,
            t_start=item.t,
            t_end=item.t_end,
            id=f"{item.index:05d}",
            model=setup.blueprint.model.name,
            scope=setup.trace.id,
            output_tokens=setup.counts(item.reply),
        )
        if s == DELEGATE:
            option = render_option(self.engines[s].window, None, DELEGATE_RULE.api)
            if option is not None:
                return as_sent(req, cache, option, setup.counter.count)
        return cache, lambda: "\n".join(
            block_text(b.block) for b in req.blocks if b.block is not None
        )

    def _delegated(
        self, s: str, item: Call, sent: CacheRequest
    ) -> tuple[Request, CacheRequest, Callable[[], str]]:
        """The provider compacts request ``sent`` (module doc): bill its compaction pass,
        adopt its item, and return the message pass regio renders after it."""
        setup, engine, tracker = self.setup, self.engines[s], self.trackers[s]
        conv = engine.window.conversation
        entries = list(conv.entries) if conv is not None else []
        text = setup.summarizer()(entries, SUMMARY_PROMPT, None) if entries else ""
        summary = f"<summary>\n{text}\n</summary>"
        engine.adopt_compaction(
            DELEGATE_RULE.api, compaction_item(DELEGATE_RULE.api, summary, item.index)
        )
        engine.summarizer.calls.clear()  # the readable copy is offline: no request to bill
        prompt = int(setup.counter.count(SUMMARY_PROMPT))
        last = sent.blocks[-1].message if sent.blocks else None
        instruction = CacheBlock(
            prompt,
            content_hash(["messages", "user", SUMMARY_PROMPT]),
            "text",
            "messages",
            role="user",
            message=(last or 0) + 1,
        )
        passed = msgspec.structs.replace(
            sent,
            id=f"{item.index - 1:05d}.z",
            blocks=(*sent.blocks, instruction),
            output_tokens=int(setup.counter.count(summary)),
        )
        tracker.fork_requests.append(passed)
        tracker.compaction_calls += 1
        if prompt_tokens(passed) > setup.limit:
            tracker.over.add(item.index)
        bp = setup.blueprint
        req, _payload = engine.request(
            bp.model.provider, bp.model.name, tools=setup.tools, flush=False
        )
        return (req, *self._sent(s, req, item))


def as_sent(
    req: Request, cache: CacheRequest, option: ProviderCompaction, count: Callable[[str], int]
) -> tuple[CacheRequest, Callable[[], str]]:
    """``cache`` (the cache request of layout request ``req``) as the provider receives it
    when ``option`` holds its compaction items (:mod:`regio.layout.provider_compaction`): the
    message holding an item's summary becomes one block of the item's text (``count``: text
    -> tokens), what precedes it in the messages is dropped, and the notes of that entry are
    left out; and a function giving the request's text."""
    kept: list[tuple[CacheBlock, str]] = []  # (cache block, text)
    pairs = list(zip(req.blocks, cache.blocks, strict=True))
    k = 0
    while k < len(pairs):
        j = k
        while j < len(pairs) and _key(pairs[j][0]) == _key(pairs[k][0]):
            j += 1
        group = pairs[k:j]
        item, skip = item_of([b for b, _ in group], option)
        if item is not None:
            text = str(item.get("content") or item.get("encrypted_content") or "")
            first = group[0][1]
            block = msgspec.structs.replace(
                first,
                tokens=int(count(text)),
                digest=content_hash(["messages", "assistant", item]),
                role="assistant",
                mark=group[-1][1].mark,
            )
            kept = [(c, t) for c, t in kept if c.level != "messages"] + [(block, text)]
        elif not skip:
            kept.extend((c, block_text(b.block) if b.block is not None else "") for b, c in group)
        k = j
    sent = msgspec.structs.replace(cache, blocks=tuple(c for c, _ in kept))
    return sent, lambda: "\n".join(t for _, t in kept)


def _key(b: LayoutBlock) -> tuple[str, Any]:
    """The message a layout block belongs to (tools and system blocks stand alone)."""
    if b.level in ("tools", "system"):
        return (b.level, id(b))
    return ("tail", None) if b.level == "tail" else ("m", b.message)


def engine_pass(
    setup: ReplaySetup,
    strategies: Sequence[str],
    rules: Sequence[CaptureRule],
    notes: list[str],
) -> tuple[dict[str, Tracker], int, int]:
    """Drive one engine per layout through the captured stream (module doc); returns the
    trackers, the region writes made after the first call and the writes refused."""
    bp, counter = setup.blueprint, setup.counter
    clock = Clock()
    trigger = DELEGATE_RULE.trigger(bp.model.context_window)
    run = EngineRun(setup, {}, {}, notes, trigger)
    for s in strategies:
        options: dict[str, Any] = ABLATIONS.get(s, {"strategy": s})
        blueprint = None
        if s == DELEGATE:
            options = {"strategy": "regio", "delegate_compaction": trigger}
            options["carry_forward"] = "replace"
            blueprint = delegate_blueprint(bp, trigger)
        run.engines[s] = setup.engine(clock, options, blueprint)
        run.trackers[s] = setup.tracker()
        run.trackers[s].summarizer = "provider" if s == DELEGATE else "llm"
        _watch(run.engines[s], run.trackers[s])
    first = next(iter(run.engines.values()))
    names = {r.name for r in first.window.regions}
    started = False
    prev_id = "-0001"  # the id of the agent's previous request (bill's ``after``)
    for item in capture_stream(setup.trace, rules, counter.count):
        if isinstance(item, RegionOp):
            if item.region not in names:
                notes.append(f"{item.rule}: region {item.region!r} is not in the blueprint")
                continue
            ok = apply_all(run.engines, run.trackers, item, run.fail)
            run.writes += started
            run.refused += not ok
        elif isinstance(item, AddMessage):
            filed = run.add_message(item, names)
            run.writes += started * filed.written
            run.refused += filed.refused
        elif isinstance(item, Call):
            started = True
            run.call = item.index
            after, clock.now = (prev_id, clock.now), item.t
            prev_id = f"{item.index:05d}"
            for s in list(run.engines):
                try:
                    run.request(s, item, after)
                except ENGINE_ERRORS as exc:
                    run.fail(s, exc)
            run.call = item.index + 1
            clock.now = item.t_end
        run.drop_failed()
    for s, engine in {**run.engines, **run.dropped}.items():
        run.trackers[s].relief = tuple(
            ReliefStage(k, v.runs, v.skipped, v.freed_tokens, v.blocks, v.short)
            for k, v in engine.book.relief.stages.items()
        )
    return run.trackers, run.writes, run.refused
