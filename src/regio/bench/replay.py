"""Replay: a trace under a blueprint -> one request sequence per strategy.

For every model call of the trace (each assistant step), replay builds the request each
strategy sends at that point and converts it to the cache model input
(:class:`regio.cache.types.CacheRequest`) with deterministic timestamps from the trace clock
(``t_start`` = when the call was sent, ``t_end`` = when the reply completed, seconds).

Strategies (:data:`ALL_LAYOUTS`):

* ``recorded`` — the request the recorded agent sent (:class:`regio.bench.baselines.
  RecordedBaseline`), the reference of every table;
* the layouts ``naive``, ``kind``, ``volatility``, ``regio`` — what
  :class:`regio.engine.Engine` produces: one engine per layout
  (``Engine.from_blueprint(bp, strategy=..., summarizer=ExtractiveSummarizer(...),
  token_counter=...)``, the trace clock as its clock) driven through the captured stream
  (:mod:`regio.bench.capture`): messages through ``Engine.add_message`` (an observation
  with ``observation=True``), captured state
  through ``Engine.write`` / ``release`` / ``clear``, pending compactions flushed at turn
  boundaries, and at each model call ``Engine.request(provider, model, tools=...)`` with the
  trace's recorded tools (the engine adds its context tools);
* the ablation ``regio-summarize-only`` (:data:`ABLATIONS`): ``regio`` with the relief chain
  off, so a pressure run measures what the chain adds over summarization alone, and, only
  when named (:data:`OPT_IN`), ``regio-window-fill``: ``regio`` with the cost controller off;
* ``regio-delegate``: regio delegating compaction to the provider
  (:mod:`regio.bench.enginepass`, :mod:`regio.compaction._delegation`);
* the peers (:data:`regio.bench.peers.PEERS`, each on its real package: :mod:`regio.bench.peers`
  and :mod:`regio.bench.peers.editing`) ``trim``, ``summarization-middleware`` (and its
  ``summarization-middleware-tuned`` variant), ``llamaindex-memory``,
  ``agent-framework-truncation``, ``anthropic-clear-tool-uses`` and
  ``context-editing-middleware`` (and their ``anthropic-clear-tool-uses-tuned`` and
  ``context-editing-middleware-tuned`` variants), and the providers' own compaction simulated
  from their documentation (``anthropic-compaction``, ``openai-compaction``,
  :mod:`regio.bench.peers.providers`), fed the recorded messages untouched, at the same
  window: their conversation allowance is :func:`regio.bench.peers.peer_allowance`.

Per strategy the replay also counts summarizer calls (``compaction_requests``: the requests a
summarizer was sent), **broken** calls (:mod:`regio.bench.tracking`: the request lost the task
— no user message that is not an environment observation, and no summary standing for the
dropped ones —, or it holds more prompt tokens than the window allows, whoever sent it, or the
strategy raised and sent nothing from then on: a strategy that raises fails alone, the others
carry on, :mod:`regio.bench.enginepass`) and, with probes
(:mod:`regio.bench.retention`), the retention. Retention is scored for every strategy from
one common model call, the first at which any strategy of the run had cut something
(eviction, clearing, trimming, summary or a peer's cut; ``ReplayOutput.retention_from``), so
every strategy is scored on the same requests and the same probe observations; a strategy that
had cut nothing by then is scored too (it kept everything it was sent). ``recorded`` is not
scored (it cuts nothing).

A message an engine's conversation refuses (a message whose own text cannot fit the window
even with the turn's tool results trimmed: :mod:`regio.engine._turnfit`; a tool result that
does not fit is trimmed, never refused) or larger than the peers' allowance is skipped for
those strategies, with a note; the recorded requests keep it (it was sent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from regio.bench.baselines import MessageCounts
from regio.bench.billing import summarizer_pricing
from regio.bench.enginepass import ABLATIONS, DELEGATE, OPT_IN, engine_pass
from regio.bench.peers import PEERS, peer_available
from regio.bench.pressure import scale_blueprint
from regio.bench.rawpass import raw_pass
from regio.bench.replaysetup import (
    Clock,
    ReplaySetup,
    message_tokens,
    prompt_limit,
    task_texts,
    trace_tools,
)
from regio.bench.retention import Probe
from regio.bench.tracking import StrategyRun
from regio.cache.types import CacheRequest
from regio.capture import CaptureRule, rules_for
from regio.layout.provider_compaction import COMPACTION_APIS
from regio.providers.registry import chat_format_for, provider_for
from regio.tokens import TokenCounter, get_counter
from regio.traces.format import AssistantMessage, Trace

if TYPE_CHECKING:
    from regio.blueprint import Blueprint

__all__ = [
    "ABLATIONS",
    "ALL_LAYOUTS",
    "DELEGATE",
    "LAYOUTS",
    "OPT_IN",
    "ReplayOutput",
    "StrategyRun",
    "replay",
    "trace_tools",
]

#: Layout strategies of the engine, in report order.
LAYOUTS: tuple[str, ...] = ("naive", "kind", "volatility", "regio")
#: Every strategy a default run includes: the recorded baseline, the layouts, the ablations
#: (but :data:`OPT_IN`, run only when named), the delegating strategy and the peers.
ALL_LAYOUTS: tuple[str, ...] = (
    "recorded",
    *LAYOUTS,
    *(a for a in ABLATIONS if a not in OPT_IN),
    DELEGATE,
    *PEERS,
)

# Kept importable from here for the golden payload tests.
_Clock = Clock
_message_tokens = message_tokens


@attrs.frozen
class ReplayOutput:
    """What :func:`replay` produced for one trace.

    ``runs``: strategy -> :class:`StrategyRun`; ``raw_sizes``: prompt tokens of each recorded
    request (tokens); ``outputs``: each recorded reply's tokens; ``fixed_tokens``: the
    recorded tool schemas' and system prompt's tokens; ``window``: the window the run was
    limited to (``None``: the blueprint's own); ``prompt_limit``: the most prompt tokens a
    request may hold (the window less the output reserve); ``region_writes``: region
    operations made after the first call; ``refused_writes``: writes a region refused;
    ``notes``: what was skipped or approximated; ``retention_from``: the model call from which
    every strategy's retention is scored (the first call at which any strategy had cut
    something; ``None``: none cut, or no probes); ``summarizer_cache``: the cache model that
    prices the summarizers' transcript prompts (a summarizer on another model than the
    agent's: :func:`regio.bench.billing.summarizer_pricing`; one the cache rules do not know
    or do not price leaves them unpriced; ``None``: the run's own cache model).
    """

    trace: str
    runs: dict[str, StrategyRun]
    raw_sizes: list[int]
    region_writes: int
    refused_writes: int
    window: int | None = None
    notes: tuple[str, ...] = ()
    retention_from: int | None = None
    outputs: list[int] = attrs.field(factory=list)
    fixed_tokens: int = 0
    prompt_limit: int | None = None
    summarizer_cache: str | None = None

    @property
    def requests(self) -> dict[str, list[CacheRequest]]:
        """Strategy -> its requests."""
        return {k: v.requests for k, v in self.runs.items()}


def _raw_names(layouts: Sequence[str], notes: list[str]) -> list[str]:
    """The raw-pass strategies among ``layouts``: ``recorded`` and each peer whose package
    imports; a missing one is noted in ``notes``."""
    names = [x for x in layouts if x == "recorded"]
    for name in (x for x in layouts if x in PEERS):
        if peer_available(name):
            names.append(name)
        else:
            notes.append(f"{name} skipped: its package is not installed (extra 'bench')")
    return names


def replay(
    trace: Trace,
    blueprint: Blueprint,
    *,
    layouts: Sequence[str] = ALL_LAYOUTS,
    rules: Sequence[CaptureRule] | None = None,
    counter: TokenCounter | None = None,
    window_tokens: int | None = None,
    probes: Sequence[Probe] = (),
) -> ReplayOutput:
    """Replay ``trace`` under ``blueprint`` (a :class:`regio.blueprint.Blueprint`).

    ``layouts``: names from :data:`ALL_LAYOUTS`; ``rules``: capture rules (default
    :func:`regio.capture.rules_for` the blueprint); ``counter``: token counter
    (default: the blueprint's tokenizer); ``window_tokens``: run under pressure
    (:func:`regio.bench.pressure.scale_blueprint`); ``probes``: retention probes
    (:mod:`regio.bench.retention`). A peer whose package is missing is skipped with a note.
    A strategy whose engine raises is that strategy's failure, recorded on its run (module
    doc). Raises ``ValueError`` for an unknown name.
    """
    unknown = [x for x in layouts if x not in ALL_LAYOUTS and x not in OPT_IN]
    if unknown:
        known = ", ".join((*ALL_LAYOUTS, *OPT_IN))
        raise ValueError(f"unknown layouts {unknown}; use names from {known}")
    if window_tokens is not None:
        blueprint = scale_blueprint(blueprint, window_tokens)
    if counter is None:
        chat_format = chat_format_for(blueprint.model.provider, blueprint.model.name)
        counter = get_counter(blueprint.tokenizer, chat_format=chat_format)
    notes: list[str] = []
    raw_names = _raw_names(layouts, notes)
    calls = tuple(i for i, e in enumerate(trace.events) if isinstance(e, AssistantMessage))
    setup = ReplaySetup(
        trace,
        blueprint,
        counter,
        MessageCounts(counter),
        trace_tools(trace),
        task_texts(trace),
        tuple(probes),
        calls,
    )
    strategies = [x for x in layouts if x in LAYOUTS or x in ABLATIONS or x == DELEGATE]
    api = provider_for(blueprint.model.provider).api
    if DELEGATE in strategies and api not in COMPACTION_APIS:
        strategies.remove(DELEGATE)  # not applicable: a strategy that could never send
        notes.append(
            f"{DELEGATE} left out: the blueprint's provider renders for {api!r}, which has no "
            f"server-side compaction (one of {', '.join(COMPACTION_APIS)} has)"
        )
    chosen = rules if rules is not None else rules_for(blueprint)
    engine_runs, writes, refused = (
        engine_pass(setup, strategies, chosen, notes) if strategies else ({}, 0, 0)
    )
    raw = raw_pass(setup, raw_names, notes)
    runs = {**engine_runs, **raw.trackers}
    summarizer_cache, billed = summarizer_pricing(blueprint)
    if billed is not None and any(t.compaction_requests for t in runs.values()):
        notes.append(billed)  # how the transcript prompts billed were priced
    cuts = [t.first_cut for t in runs.values() if t.first_cut is not None]
    since = min(cuts) if cuts and setup.probes else None
    limit = prompt_limit(blueprint)
    return ReplayOutput(
        trace=trace.id,
        runs={x: runs[x].run(since, limit, len(calls)) for x in layouts if x in runs},
        raw_sizes=raw.sizes,
        region_writes=writes,
        refused_writes=refused,
        window=window_tokens,
        notes=tuple(dict.fromkeys(notes)),
        retention_from=since,
        outputs=raw.outputs,
        fixed_tokens=raw.fixed,
        prompt_limit=limit,
        summarizer_cache=summarizer_cache,
    )
