"""Replay: a trace under a blueprint -> one request sequence per strategy.

For every model call of the trace (each assistant step), replay builds the request each
strategy sends at that point and converts it to the cache model input
(:class:`regio.cache.types.CacheRequest`) with deterministic timestamps from the trace clock
(``t_start`` = when the call was sent, ``t_end`` = when the reply completed, seconds).

Strategies (:data:`ALL_LAYOUTS`):

* ``recorded`` — the request the recorded agent sent (:class:`regio.bench.baselines.
  RecordedBaseline`), the reference of every table;
* the layouts ``naive``, ``kind``, ``volatility``, ``regio`` — what
  :class:`regio.runtime.Engine` produces: one engine per layout
  (``Engine.from_blueprint(bp, strategy=..., summarizer=ExtractiveSummarizer(...),
  token_counter=...)``, the trace clock as its clock) driven through the captured stream
  (:mod:`regio.bench.capture`): messages through ``Engine.add_message`` (an observation
  with ``observation=True``), captured state
  through ``Engine.write`` / ``release`` / ``clear``, pending compactions flushed at turn
  boundaries, and at each model call ``Engine.request(provider, model, tools=...)`` with the
  trace's recorded tools (the engine adds its context tools);
* the ablation ``regio-summarize-only`` (:data:`ABLATIONS`): ``regio`` with the relief chain
  off, so a pressure run measures what the chain adds over summarization alone;
* the peers (:data:`regio.bench.peers.PEERS`, each on its real package: :mod:`regio.bench.peers`
  and :mod:`regio.bench.editing_peers`) ``trim``, ``summarization-middleware``,
  ``llamaindex-memory``, ``agent-framework-truncation``, ``anthropic-clear-tool-uses`` and
  ``context-editing-middleware`` (and their ``anthropic-clear-tool-uses-tuned`` and
  ``context-editing-middleware-tuned`` variants), fed the recorded messages untouched, at the
  same window: their conversation allowance is :func:`regio.bench.peers.peer_allowance`.

Per strategy the replay also counts summarizer calls (``compaction_requests``: the requests a
summarizer was sent), **broken** requests (no task message left: no user message that is not
an environment observation, and no summary standing for the dropped ones) and, with probes
(:mod:`regio.bench.retention`), the retention. Retention is scored for every strategy from
one common model call, the first at which any strategy of the run had cut something
(eviction, clearing, trimming, summary or a peer's cut; ``ReplayOutput.retention_from``), so
every strategy is scored on the same requests and the same probe observations; a strategy that
had cut nothing by then is scored too (it kept everything it was sent). ``recorded`` is not
scored (it cuts nothing).

A message an engine's conversation refuses (a message whose own text cannot fit the window
even with the turn's tool results trimmed: :mod:`regio.runtime.turnfit`; a tool result that
does not fit is trimmed, never refused) or larger than the peers' allowance is skipped for
those strategies, with a note; the recorded requests keep it (it was sent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from regio.bench.baselines import (
    MessageCounts,
    PlainMessage,
    RecordedBaseline,
    plain_message,
    plain_request,
    tools_text,
)
from regio.bench.billing import BilledExtractive, bill, summary_request
from regio.bench.capture import AddMessage, Call, CaptureRule, RegionOp, capture_stream, rules_for
from regio.bench.peers import PEERS, make_peer, peer_allowance, peer_available
from regio.bench.pressure import scale_blueprint
from regio.bench.regionops import Filed, apply_all, file_moves
from regio.bench.report import ReliefStage
from regio.bench.retention import Probe, RetentionMeter
from regio.bench.tracking import StrategyRun, Tracker
from regio.cache.types import CacheRequest
from regio.content import Entry, Message, block_text
from regio.errors import RegionFullError
from regio.layout import ToolSpec, to_cache_request
from regio.runtime import Engine
from regio.runtime.extractive import ExtractiveSummarizer
from regio.tokens import chat_format_for_model, get_counter
from regio.traces.format import (
    AssistantMessage,
    SystemPrompt,
    Trace,
    UserMessage,
    event_message,
)

__all__ = [
    "ABLATIONS",
    "ALL_LAYOUTS",
    "LAYOUTS",
    "OPT_IN",
    "ReplayOutput",
    "StrategyRun",
    "replay",
    "trace_tools",
]

#: Layout strategies of the engine, in report order.
LAYOUTS: tuple[str, ...] = ("naive", "kind", "volatility", "regio")
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
#: Every strategy a default run includes: the recorded baseline, the layouts, the ablations
#: (but :data:`OPT_IN`) and the peers.
ALL_LAYOUTS: tuple[str, ...] = (
    "recorded",
    *LAYOUTS,
    *(a for a in ABLATIONS if a not in OPT_IN),
    *PEERS,
)
#: Requests measured for retention per strategy and trace (evenly spaced).
RETENTION_SAMPLES = 64


@attrs.frozen
class ReplayOutput:
    """What :func:`replay` produced for one trace.

    ``runs``: strategy -> :class:`StrategyRun`; ``raw_sizes``: prompt tokens of each recorded
    request (tokens); ``window``: the window the run was limited to (``None``: the
    blueprint's own); ``region_writes``: region operations made after the first call;
    ``refused_writes``: writes a region refused; ``notes``: what was skipped or approximated;
    ``retention_from``: the model call from which every strategy's retention is scored (the
    first call at which any strategy had cut something; ``None``: none cut, or no probes).
    """

    trace: str
    runs: dict[str, StrategyRun]
    raw_sizes: list[int]
    region_writes: int
    refused_writes: int
    window: int | None = None
    notes: tuple[str, ...] = ()
    retention_from: int | None = None

    @property
    def requests(self) -> dict[str, list[CacheRequest]]:
        """Strategy -> its requests."""
        return {k: v.requests for k, v in self.runs.items()}


def trace_tools(trace: Trace) -> tuple[ToolSpec, ...]:
    """The tool schemas recorded in the trace header as :class:`ToolSpec` s (Anthropic
    ``{name, description, input_schema}``, OpenAI ``{type: function, function: {name,
    description, parameters}}`` or ``{name, parameters}``); unusable entries are skipped."""
    out: list[ToolSpec] = []
    for tool in trace.header.tools:
        spec = tool.get("function", tool) if isinstance(tool, dict) else {}
        name = spec.get("name")
        schema = spec.get("input_schema", spec.get("parameters"))
        if not isinstance(name, str) or not name:
            continue
        if not isinstance(schema, dict) or schema.get("type") != "object":
            schema = {"type": "object", "properties": {}}
        out.append(ToolSpec(name, str(spec.get("description", "")), schema))
    return tuple(out)


@attrs.define
class _Clock:
    """The trace clock (seconds) the engines read."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


def _message_tokens(counter: Any, message: Message) -> int:
    """Tokens of ``message`` counted by ``counter.count_entry`` (no cache: a replay keeps its
    counts in its own :class:`regio.bench.baselines.MessageCounts`)."""
    return int(counter.count_entry(Entry(id="", blocks=message.blocks, role=message.role)))


def _message_text(message: Message) -> str:
    return "\n".join(block_text(b) for b in message.blocks)


def task_texts(trace: Trace) -> frozenset[str]:
    """Texts of the trace's task messages: user messages that are not environment
    observations (the human, simulated user or task instance), whole and per block (the
    engines' requests carry blocks)."""
    out: set[str] = set()
    for e in trace.events:
        if isinstance(e, UserMessage) and not e.observation:
            out.add(_message_text(Message("user", e.blocks)))
            out.update(b.text for b in e.blocks if b.text.strip())
    return frozenset(out)


@attrs.frozen
class _Setup:
    """What every pass of one replay shares."""

    trace: Trace
    blueprint: Any
    counter: Any
    counts: MessageCounts
    tools: tuple[ToolSpec, ...]
    tasks: frozenset[str]
    probes: tuple[Probe, ...]
    call_events: tuple[int, ...]

    def tracker(self, scored: bool = True) -> Tracker:
        """A tracker; ``scored=False``: its requests are not measured for retention."""
        every = max(1, len(self.call_events) // RETENTION_SAMPLES)
        return Tracker(RetentionMeter(self.probes if scored else (), self.call_events, every))

    def engine(self, clock: Any, options: dict[str, Any]) -> Engine:
        """A regio engine for one layout, its summarizer's calls billed (:mod:`.billing`):
        as forks of the agent's last request when the blueprint's summarizer runs on the
        agent's own model (:func:`forks`), else as transcript prompts."""
        summarizer = self.summarizer(BilledExtractive)
        engine = Engine.from_blueprint(
            self.blueprint,
            summarizer=summarizer,
            token_counter=self.counter,
            clock=clock,
            **options,
        )
        if forks(self.blueprint):
            summarizer.session = engine.state
            summarizer.terms = engine.compactor.fork_terms
        return engine

    def summarizer(self, cls: type[ExtractiveSummarizer] = ExtractiveSummarizer) -> Any:
        bp = self.blueprint
        return cls(
            context_window=bp.summarizer.context_window or bp.model.context_window,
            max_summary_tokens=bp.summarizer.max_summary_tokens,
            counter=self.counter,
        )


def forks(blueprint: Any) -> bool:
    """The blueprint's summarizer runs on the agent's own model (``summarizer.model`` unset
    or the agent's): its LLM summarizer then forks the agent's last request
    (:class:`regio.runtime.ForkSummarizer`), which the bench bills as such. The bench bills
    every summarizer as an LLM on the model the blueprint names, whatever its ``provider``
    (the default ``extractive`` sends no request: billing it keeps regio comparable with the
    peers' LLM summaries)."""
    return blueprint.summarizer.model in ("", None, blueprint.model.name)


_COMPACTING_EVENTS = (
    "evicted",
    "reclaimed",
    "compaction_completed",
    "compaction_finished",
    "relief_applied",
)


def _watch(engine: Engine, tracker: Tracker) -> None:
    """Mark ``tracker`` compacted on the engine's eviction / compaction events and count its
    summarizer calls."""

    def on_event(event: Any) -> None:
        tag = type(event).__struct_config__.tag if hasattr(type(event), "__struct_config__") else ""
        if tag in _COMPACTING_EVENTS:
            tracker.compacted = True
        if tag == "compaction_finished":
            tracker.compaction_calls += int(event.summarizer_calls)

    engine.subscribe(on_event)


def _engine_has_task(
    engine: Engine, req: Any, tasks: frozenset[str], summary_regions: set[str]
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


def _add_message(
    setup: _Setup,
    engines: dict[str, Engine],
    trackers: dict[str, Tracker],
    item: AddMessage,
    where: tuple[set[str], int],
    notes: list[str],
) -> Filed:
    """Add ``item``'s message to every engine, after its capture moves
    (:func:`regio.bench.regionops.file_moves`; an engine whose region refused one adds the
    message as recorded), flushing a queued compaction after a non-assistant message;
    ``where`` = (the blueprint's region names, the conversation budget in tokens); a
    message the conversation refuses is skipped with a note. An environment observation
    (``item.observation``; the fallback too) reaches every engine as one. Returns what the
    moves did."""
    names, _ = where
    filed = file_moves(engines, trackers, item, names, notes)
    noted: set[int] = set()
    for s, engine in engines.items():
        message = item.message if filed.by_engine[s] else item.fallback or item.message
        n = setup.counts(message)
        try:
            engine.add_message(message, tokens=n, observation=item.observation)
        except RegionFullError as exc:
            if id(message) not in noted:
                noted.add(id(message))
                notes.append(
                    f"a {message.role} message of {n} tokens is larger than the "
                    f"conversation region can hold ({exc.region!r}): skipped by the layouts"
                )
            continue
        if message.role != "assistant" and engine.pending():
            engine.flush()
    return filed


def _engine_pass(
    setup: _Setup, strategies: Sequence[str], rules: Sequence[CaptureRule], notes: list[str]
) -> tuple[dict[str, Tracker], int, int]:
    """Drive one engine per layout through the captured stream."""
    bp, counter = setup.blueprint, setup.counter
    clock = _Clock()
    summary_regions = {r.name for r in bp.regions if r.kind == "compact_history"}
    engines: dict[str, Engine] = {}
    trackers: dict[str, Tracker] = {}
    for s in strategies:
        options = ABLATIONS.get(s, {"strategy": s})
        engines[s] = setup.engine(clock, options)
        trackers[s] = setup.tracker()
        trackers[s].summarizer = "llm"  # billed like the peers' summarizer calls (billing.py)
        _watch(engines[s], trackers[s])
    first = next(iter(engines.values()))
    conv = first.window.conversation
    conv_budget = conv.budget if conv is not None else bp.window_tokens
    names = {r.name for r in first.window.regions}
    writes = refused = 0
    started = False
    prev_id = "-0001"  # the id of the agent's previous request (bill's ``after``)
    provider, model = bp.model.provider, bp.model.name
    for item in capture_stream(setup.trace, rules, counter.count):
        if isinstance(item, RegionOp):
            if item.region not in names:
                notes.append(f"{item.rule}: region {item.region!r} is not in the blueprint")
                continue
            ok = apply_all(engines, trackers, item)
            writes += started
            refused += not ok
        elif isinstance(item, AddMessage):
            filed = _add_message(setup, engines, trackers, item, (names, conv_budget), notes)
            writes += started * filed.written
            refused += filed.refused
        elif isinstance(item, Call):
            started = True
            after, clock.now = (prev_id, clock.now), item.t
            prev_id = f"{item.index:05d}"
            out = setup.counts(item.reply)
            for s, engine in engines.items():
                req, _payload = engine.request(provider, model, tools=setup.tools)
                tracker = trackers[s]
                billed = (tracker.compaction_requests, tracker.fork_requests)
                bill(engine.summarizer, billed, item, after, setup.trace.id, model)
                has_task, summary = _engine_has_task(engine, req, setup.tasks, summary_regions)
                tracker.requests.append(
                    to_cache_request(
                        req,
                        t_start=item.t,
                        t_end=item.t_end,
                        id=f"{item.index:05d}",
                        model=model,
                        scope=setup.trace.id,
                        output_tokens=out,
                    )
                )
                tracker.seen(
                    item.index,
                    has_task,
                    summary,
                    lambda req=req: "\n".join(
                        block_text(b.block) for b in req.blocks if b.block is not None
                    ),
                )
            clock.now = item.t_end
    for s, engine in engines.items():
        trackers[s].relief = tuple(
            ReliefStage(k, v.runs, v.skipped, v.freed_tokens, v.blocks)
            for k, v in engine.book.relief.stages.items()
        )
    return trackers, writes, refused


def _peer_step(
    setup: _Setup,
    peer: Any,
    tracker: Tracker,
    call: int,
    empty: CacheRequest,
    emit: Any,
    system_text: str,
) -> None:
    """One model call of a peer: its view, its new summarizer calls, its request."""
    view = peer.view()
    tracker.compacted = view.compacted
    for k, c in enumerate(peer.calls[len(tracker.compaction_requests) :]):
        tracker.compaction_requests.append(
            summary_request(c, f"{empty.id}.{k}", empty.t_start, setup.trace.id, empty.model)
        )
    tracker.compaction_calls = len(tracker.compaction_requests)
    tracker.requests.append(emit("", view.messages))
    has = any(
        m.message.role == "user" and _message_text(m.message) in setup.tasks for m in view.messages
    )
    tracker.seen(
        call,
        has,
        view.summary,
        lambda: system_text + "\n" + "\n".join(_message_text(m.message) for m in view.messages),
    )


def _make_peers(
    setup: _Setup,
    names: Sequence[str],
    trackers: dict[str, Tracker],
    allowance: int,
    system: int,
    tools: int,
) -> dict[str, Any]:
    """The peers of ``names`` with a conversation ``allowance`` (tokens,
    :func:`regio.bench.peers.peer_allowance`; ``system`` / ``tools``: the system prompt's and
    tool schemas' tokens), each tracker told how its peer summarizes."""
    peers: dict[str, Any] = {}
    for name in names:
        if name != "recorded":
            peers[name] = make_peer(
                name, allowance, system, setup.counter.count, setup.summarizer(), system + tools
            )
            trackers[name].summarizer = "llm" if name == "summarization-middleware" else "none"
    return peers


def _raw_pass(
    setup: _Setup, names: Sequence[str], notes: list[str]
) -> tuple[dict[str, Tracker], list[int]]:
    """The recorded requests and the peers, fed the trace's messages untouched."""
    bp, counter, trace = setup.blueprint, setup.counter, setup.trace
    recorded = RecordedBaseline(counter.count)
    tools = tools_text(trace.header.tools, counter.count)
    trackers = {n: setup.tracker(scored=n != "recorded") for n in names}
    for event in trace.events:
        if isinstance(event, SystemPrompt):
            recorded.set_system(event.text)
            break
    allowance = peer_allowance(bp.window_tokens, recorded.system[1], tools[1])
    peers = _make_peers(setup, names, trackers, allowance, recorded.system[1], tools[1])
    sizes: list[int] = []
    sent, has_task = 0, False  # recorded: message tokens so far, a task message seen
    last_t, call = 0.0, 0
    ttl, model = bp.cache.ttl, bp.model.name
    for event in trace.events:
        if isinstance(event, SystemPrompt):
            recorded.set_system(event.text)
        elif isinstance(event, AssistantMessage):
            rid = f"{call:05d}"
            out = setup.counts(Message("assistant", event.blocks))
            system, messages = recorded.system, recorded.messages

            def emit(
                name: str,
                shown: list[PlainMessage],
                t0: float = last_t,
                t1: float = event.t,
                system: tuple[str, int] = system,
                rid: str = rid,
                out: int = out,
            ) -> CacheRequest:
                return plain_request(
                    system,
                    shown,
                    id=rid,
                    t_start=t0,
                    t_end=t1,
                    output_tokens=out,
                    scope=trace.id,
                    model=model,
                    ttl=ttl,
                    tools=tools,
                )

            sizes.append(tools[1] + system[1] + sent)
            if "recorded" in trackers:
                trackers["recorded"].requests.append(emit("recorded", messages))
                trackers["recorded"].seen(call, has_task, False, lambda: "")
            for name, peer in peers.items():
                _peer_step(setup, peer, trackers[name], call, emit(name, []), emit, system[0])
            call += 1
        message = event_message(event)
        if message is not None:
            pm = plain_message(message, setup.counts(message))
            recorded.add(pm)
            sent += pm.tokens
            has_task = has_task or (
                message.role == "user" and _message_text(message) in setup.tasks
            )
            if peers and pm.tokens > allowance:
                notes.append(
                    f"a {message.role} message of {pm.tokens} tokens is larger than the peers' "
                    f"conversation allowance ({allowance} tokens): skipped by the peers"
                )
            else:
                for peer in peers.values():
                    peer.add(pm)
        last_t = event.t
    for peer in peers.values():
        notes.extend(peer.notes() if hasattr(peer, "notes") else ())
    return trackers, sizes


def replay(
    trace: Trace,
    blueprint: Any,
    *,
    layouts: Sequence[str] = ALL_LAYOUTS,
    rules: Sequence[CaptureRule] | None = None,
    counter: Any = None,
    window_tokens: int | None = None,
    probes: Sequence[Probe] = (),
) -> ReplayOutput:
    """Replay ``trace`` under ``blueprint`` (a :class:`regio.blueprint.Blueprint`).

    ``layouts``: names from :data:`ALL_LAYOUTS`; ``rules``: capture rules (default
    :func:`regio.bench.capture.rules_for` the blueprint); ``counter``: token counter
    (default: the blueprint's tokenizer); ``window_tokens``: run under pressure
    (:func:`regio.bench.pressure.scale_blueprint`); ``probes``: retention probes
    (:mod:`regio.bench.retention`). A peer whose package is missing is skipped with a note.
    Raises ``ValueError`` for an unknown name, the layout's :class:`regio.layout.LayoutError`
    for a request it cannot build and the engine's
    :class:`regio.runtime.errors.ContextOverflowError` for one that cannot fit the window.
    """
    unknown = [x for x in layouts if x not in ALL_LAYOUTS and x not in OPT_IN]
    if unknown:
        known = ", ".join((*ALL_LAYOUTS, *OPT_IN))
        raise ValueError(f"unknown layouts {unknown}; use names from {known}")
    if window_tokens is not None:
        blueprint = scale_blueprint(blueprint, window_tokens)
    if counter is None:
        counter = get_counter(
            blueprint.tokenizer, chat_format=chat_format_for_model(blueprint.model.name)
        )
    notes: list[str] = []
    raw_names = [x for x in layouts if x == "recorded"]
    for name in (x for x in layouts if x in PEERS):
        if peer_available(name):
            raw_names.append(name)
        else:
            notes.append(f"{name} skipped: its package is not installed (extra 'bench')")
    setup = _Setup(
        trace,
        blueprint,
        counter,
        MessageCounts(counter),
        trace_tools(trace),
        task_texts(trace),
        tuple(probes),
        tuple(i for i, e in enumerate(trace.events) if isinstance(e, AssistantMessage)),
    )
    strategies = [x for x in layouts if x in LAYOUTS or x in ABLATIONS]
    chosen = rules if rules is not None else rules_for(blueprint)
    engine_runs, writes, refused = (
        _engine_pass(setup, strategies, chosen, notes) if strategies else ({}, 0, 0)
    )
    raw_runs, sizes = _raw_pass(setup, raw_names, notes)
    runs = {**engine_runs, **raw_runs}
    cuts = [t.first_cut for t in runs.values() if t.first_cut is not None]
    since = min(cuts) if cuts and setup.probes else None
    return ReplayOutput(
        trace=trace.id,
        runs={x: runs[x].run(since) for x in layouts if x in runs},
        raw_sizes=sizes,
        region_writes=writes,
        refused_writes=refused,
        window=window_tokens,
        notes=tuple(dict.fromkeys(notes)),
        retention_from=since,
    )
