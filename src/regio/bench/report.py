"""The benchmark report: data that travels (frozen msgspec Structs, written as JSON).

Shape of ``regio bench --json OUT`` (all token counts in tokens, costs in USD, rates in [0, 1])::

    {"schema": "regio.bench-report/4",
     "traces": [
       {"trace": "swe-agent/function_calling_simple", "group": "swe-agent",
        "blueprint": "coding-agent", "requests": 5, "append_only_hit_rate": 0.71,
        "prompt_limit": 184000,
        "region_writes": 4, "notes": [...], "retention_from": 29,
        "models": [
          {"cache_model": "anthropic:claude-sonnet-4-6", "rule_id": "anthropic/...",
           "layouts": [
             {"layout": "regio", "requests": 5, "prompt_tokens": 20311,
              "cache_read_tokens": 14012, "cache_write_tokens": 6100,
              "uncached_tokens": 199, "hit_rate": 0.69, "cost_usd": 0.0312,
              "request_cost_usd": 0.0301,
              "oracle_hit_rate": 0.70, "placement_share": 0.98,
              "bound_hit_rate": 0.71, "bound_share": 0.97, "compaction_calls": 0,
              "compaction_cost_usd": 0.0, "summarizer": "offline",
              "retention": {"overall": 0.9, "fact": 1.0, ...}, "first_cut": 31,
              "broken_requests": 0, "lost_task_requests": 0, "over_window_requests": 0,
              "unsent_requests": 0, "failure": null, "failed_at": null,
              "cost_bound_usd": 0.0290, "cost_bound_share": 1.08,
              "cost_bound_trigger": 61440, "kept_tokens": 14210,
              "periodic_hit_bound": 0.91,
              "read_per_request": [...], "prompt_per_request": [...],
              "cost_per_request": [...], "compaction_cost_per_request": [...],
              "relief": [{"stage": "clear", "runs": 12, "skipped": 1,
                          "freed_tokens": 61040, "blocks": 240, "short": 3}]}, ...]}]}],
     "totals": [ {"cache_model": ..., "layouts": [...]} ],
     "notes": ["..."], "skipped": ["..."], "versions": {"langchain-core": "1.8.3"},
     "window_tokens": null}

``hit_rate`` = read / prompt tokens; ``oracle_hit_rate`` is the prefix-cache bound computed on
the same strategy's own requests; ``placement_share`` = ``hit_rate / oracle_hit_rate`` (1.0
when that bound is 0), a check of breakpoint placement; ``append_only_hit_rate`` =
``1 - n_N / sum n_i`` on the recorded requests of the trace and ``bound_hit_rate`` the bound
the trace is held to (that one, or the window-capped bound under ``--window-tokens``; both
defined in docs/benchmark.md). Schema 2 renamed ``oracle_share`` to ``placement_share`` and
added the bound, compaction, retention and broken-request fields. Schema 3 added to
``usage_agreement`` the unlogged-prefix estimate, the added-token comparison and
``comparable`` / ``reason`` (:class:`UsageAgreement`); a later schema-3 field, each layout's
``first_cut`` (:class:`LayoutResult`), is optional, so earlier schema-3 reports still load.
Schema 4: ``cost_usd`` is the whole bill, the strategy's summarizer calls included (the figure
the tables print; schema 3 left them out) and ``request_cost_usd`` its model calls alone;
``broken_requests`` counts every broken call once, whatever the reason, with
``lost_task_requests``, ``over_window_requests`` and ``unsent_requests`` beside it, and
``failure`` / ``failed_at`` when the strategy raised; the cost bound (``cost_bound_usd``,
``cost_bound_share``, ``cost_bound_trigger``, ``kept_tokens``), the periodic-compaction hit
bound (``periodic_hit_bound``) and each trace's ``prompt_limit`` are new. Later schema-4
fields, each layout's ``compaction_cost_per_request`` and ``compactions``
(:class:`LayoutResult`), are optional, so earlier schema-4 reports still load (their plots
leave the summarizer calls out; their counts by reason are empty).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import msgspec

__all__ = [
    "REPORT_SCHEMA",
    "BenchReport",
    "LayoutResult",
    "ModelResult",
    "ReliefStage",
    "TraceResult",
    "UsageAgreement",
    "load_report",
    "report_json",
    "write_report",
]

REPORT_SCHEMA = "regio.bench-report/4"

_T = TypeVar("_T")


def _named(
    items: tuple[_T, ...], name_of: Callable[[_T], str], name: str, missing: str, plural: str
) -> _T:
    """The item of ``items`` whose ``name_of`` is ``name``; raises ``KeyError`` with
    ``missing`` and the names present (``plural``: what they are)."""
    for item in items:
        if name_of(item) == name:
            return item
    known = ", ".join(name_of(x) for x in items)
    raise KeyError(f"{missing} ({plural}: {known})")


class ReliefStage(msgspec.Struct, frozen=True):
    """One stage of regio's relief chain on one strategy (``clear``, ``trim`` under token
    pressure; ``dedupe``, ``admit_trim``, ``route`` on admission): ``runs`` batches applied,
    ``skipped`` times it would have freed less than its minimum, ``short`` times its batch met
    its minimum but the stages together could not reach the target (so it did not run and the
    summarization ran instead), ``freed_tokens`` (tokens) and ``blocks`` edited."""

    stage: str
    runs: int
    skipped: int
    freed_tokens: int
    blocks: int
    short: int = 0


class LayoutResult(msgspec.Struct, frozen=True):
    """One layout (or baseline) under one cache model: totals over its requests.

    Token counts in tokens, costs in USD (``None`` when the cache rule has no input price,
    e.g. local engines), rates in [0, 1]. ``cost_usd`` is the whole bill: the strategy's model
    calls (``request_cost_usd``) plus its summarizer calls (``compaction_cost_usd``: forks of
    the agent's request, transcript prompts, a provider's compaction passes), the figure the
    tables print. ``oracle_hit_rate`` is the bound of the strategy's own requests,
    ``placement_share`` = hit rate / that bound: a check of breakpoint placement (100% = the
    marks caught everything those requests allowed), not of what the requests contain.
    ``bound_hit_rate`` is the trace's bound (append-only, or window-capped under
    ``--window-tokens``, computed on the recorded requests) and ``bound_share`` = hit rate /
    bound. ``compaction_calls``: the summarizer's calls (0 cost for ``summarizer ==
    "offline"``, an extractive summarizer that sends no request); ``compactions``: regio's
    committed compactions by ``"region:reason"`` (the region compacted and why its
    compaction was queued: ``token_trigger``, ``room``, ``threshold``,
    ``history_over_budget`` for a merge of a history's summaries, ...; one summary each, so
    without a rejected summary they add up to ``compaction_calls``). ``retention``:
    ``{"overall": share, <probe type>: share}`` over the requests from the trace's
    ``retention_from`` call on, the same requests for every strategy (``None``: not
    measured). ``first_cut``: the model call (0-based) at which this strategy first cut
    something it had been sending (a trim, an eviction, a cleared or trimmed tool result, a
    summary, a peer's cut, a parked tool output a newer one displaced; not a capture a region
    refused, whose text stays in the message, nor a state region's entry replaced by a newer
    state of the same key, such as SWE-agent's status footer); ``None`` when it never
    cut (``recorded`` never does), and in totals over more than one trace (each trace has its
    own calls; totals over one trace keep it). The trace's ``retention_from`` is the smallest
    ``first_cut`` of its strategies.

    **Broken** (:mod:`regio.bench.tracking`): ``broken_requests`` model calls whose request
    lost the task (``lost_task_requests``), held more prompt tokens than the window allows
    (``over_window_requests``: more than the trace's ``prompt_limit``), or were never sent
    because the strategy raised (``unsent_requests``; ``failure`` is the error, ``failed_at``
    the call). Each call counts once. A strategy with a broken call is shown and never ranked.

    **Cost bound** (:mod:`regio.bench.costbound`): ``cost_bound_usd`` is the cheapest
    periodic-compaction schedule for this trace and window at the strategy's own mean kept
    size ``kept_tokens`` (tokens; ``None`` when it never cut), swept over the trigger (the
    best one is ``cost_bound_trigger``, tokens; ``None``: never compacting was cheapest);
    ``cost_bound_share`` = ``cost_usd`` / that bound. ``periodic_hit_bound``: the best hit
    rate of periodic compaction at that kept size (DESIGN.md section 6,
    :func:`regio.bench.costbound.periodic_hit_bound`; ``None`` without a kept size).

    ``read_per_request`` / ``prompt_per_request`` / ``cost_per_request`` hold the
    per-request figures in request order (for cumulative plots); ``cost_per_request`` is the
    model calls alone and ``compaction_cost_per_request`` (USD, one per model call, or empty
    when the strategy made no billed summarizer call) the summarizer calls' cost, each added
    at the last model call sent before it: the two summed over the requests give
    ``cost_usd``. ``relief``: what regio's
    relief chain did, per stage (empty for strategies without one).
    """

    layout: str
    requests: int
    prompt_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    uncached_tokens: int
    hit_rate: float
    cost_usd: float | None
    oracle_hit_rate: float
    placement_share: float
    bound_hit_rate: float = 0.0
    bound_share: float = 0.0
    compaction_calls: int = 0
    compaction_cost_usd: float | None = 0.0
    summarizer: str = "none"
    retention: dict[str, float] | None = None
    broken_requests: int = 0
    read_per_request: tuple[int, ...] = ()
    prompt_per_request: tuple[int, ...] = ()
    cost_per_request: tuple[float, ...] = ()
    relief: tuple[ReliefStage, ...] = ()
    first_cut: int | None = None
    request_cost_usd: float | None = None
    lost_task_requests: int = 0
    over_window_requests: int = 0
    unsent_requests: int = 0
    failure: str | None = None
    failed_at: int | None = None
    cost_bound_usd: float | None = None
    cost_bound_share: float | None = None
    cost_bound_trigger: int | None = None
    kept_tokens: int | None = None
    periodic_hit_bound: float | None = None
    compaction_cost_per_request: tuple[float, ...] = ()
    compactions: dict[str, int] = msgspec.field(default_factory=dict)

    @property
    def total_cost_usd(self) -> float | None:
        """Requests plus summarizer calls (USD): :attr:`cost_usd`; ``None`` without prices."""
        return self.cost_usd


class ModelResult(msgspec.Struct, frozen=True):
    """All layouts under one cache model (``cache_model`` is the CLI name, ``rule_id`` the
    resolved cache rule)."""

    cache_model: str
    rule_id: str
    layouts: tuple[LayoutResult, ...]

    def layout(self, name: str) -> LayoutResult:
        """The result of layout ``name``; ``KeyError`` naming the layouts present."""
        missing = f"no layout {name!r} in {self.cache_model} results"
        return _named(self.layouts, lambda x: x.layout, name, missing, "layouts")


class UsageAgreement(msgspec.Struct, frozen=True):
    """The simulator against the provider's recorded usage, on the ``recorded`` requests of
    one trace under ``cache_model`` (:mod:`regio.bench.agreement`): over the ``requests``
    compared, the summed prompt and cache-read tokens both ways (tokens) and the mean
    per-request absolute difference of the cached share (read / prompt, in [0, 1]).

    ``unlogged_prefix_tokens``: the system prompt and tool schemas the log did not keep,
    estimated from the first call's recorded prompt and added to every replayed request for
    this comparison (0: nothing estimated; that first call is then not compared).
    ``added_pairs`` consecutive calls with usage, over which ``recorded_added_tokens`` (the
    recorded prompt's growth) and ``simulated_added_tokens`` (the replayed request's growth,
    the added messages as regio counts them) compare the part both sides see.
    ``recorded_beyond_prefix_tokens`` / ``simulated_beyond_prefix_tokens``: the cache reads
    past that prefix (each compared call's read minus ``unlogged_prefix_tokens``, summed; the
    prefix is cached on both sides by construction, so this is what the simulator itself
    decided; equal to the reads when nothing was estimated).
    ``comparable=False`` with a ``reason`` when nothing could be compared honestly."""

    cache_model: str
    requests: int
    recorded_prompt_tokens: int
    simulated_prompt_tokens: int
    recorded_read_tokens: int
    simulated_read_tokens: int
    mean_share_error: float
    comparable: bool = True
    reason: str = ""
    unlogged_prefix_tokens: int = 0
    added_pairs: int = 0
    recorded_added_tokens: int = 0
    simulated_added_tokens: int = 0
    recorded_beyond_prefix_tokens: int = 0
    simulated_beyond_prefix_tokens: int = 0


class TraceResult(msgspec.Struct, frozen=True):
    """One trace replayed under one blueprint.

    ``group`` is the trace's source format (``swe-agent``, ``tau-bench``, ...);
    ``requests`` the model calls replayed; ``append_only_hit_rate`` the bound of the raw trace;
    ``region_writes`` how many region writes the capture policy made after the first request
    (a blueprint with ``region_writes > 0`` has regions written during the run);
    ``refused_writes`` writes a region refused; ``notes`` what was skipped or approximated;
    ``window_tokens`` the window of a pressure run (``None``: the blueprint's own);
    ``bound_hit_rate`` the trace's bound (append-only, or window-capped);
    ``prompt_limit`` the most prompt tokens a request may hold (the window less the output
    reserve: ``context_window - max_output_tokens``; a request over it is broken);
    ``usage_agreement`` the simulator against the recorded provider usage (``None`` when the
    trace recorded none or ``recorded`` was not run); ``retention_from`` the model call (0-based)
    from which every strategy's retention is scored: the first at which any strategy of the run
    had cut something (``None``: no retention measured).
    """

    trace: str
    group: str
    blueprint: str
    requests: int
    append_only_hit_rate: float
    region_writes: int
    refused_writes: int
    models: tuple[ModelResult, ...]
    notes: tuple[str, ...] = ()
    window_tokens: int | None = None
    bound_hit_rate: float = 0.0
    usage_agreement: UsageAgreement | None = None
    retention_from: int | None = None
    prompt_limit: int | None = None

    def model(self, name: str) -> ModelResult:
        """The results under cache model ``name``; ``KeyError`` naming the ones present."""
        missing = f"no cache model {name!r} in trace {self.trace!r}"
        return _named(self.models, lambda m: m.cache_model, name, missing, "models")


class BenchReport(msgspec.Struct, frozen=True):
    """A whole run: per-trace results, totals per cache model and layout (sums over traces;
    rates recomputed from the sums), run-level notes, ``skipped`` (traces that could not be
    read or replayed, each with the reason), ``versions`` (peer packages used) and the
    ``window_tokens`` of a pressure run."""

    traces: tuple[TraceResult, ...]
    totals: tuple[ModelResult, ...]
    notes: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    versions: dict[str, str] = msgspec.field(default_factory=dict)
    window_tokens: int | None = None
    schema: str = REPORT_SCHEMA


_encoder = msgspec.json.Encoder()


def report_json(report: BenchReport) -> bytes:
    """The report as JSON bytes (schema :data:`REPORT_SCHEMA`)."""
    return msgspec.json.format(_encoder.encode(report), indent=1)


def write_report(report: BenchReport, path: str | os.PathLike[str]) -> Path:
    """Write the report as JSON to ``path`` (parent folders are created); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_bytes(report_json(report))
    os.replace(tmp, p)
    return p


def load_report(data: bytes | str) -> BenchReport:
    """Parse a JSON report. Raises ``ValueError`` naming the problem when it is not a
    :data:`REPORT_SCHEMA` report."""
    try:
        report = msgspec.json.decode(data, type=BenchReport)
    except msgspec.DecodeError as exc:
        raise ValueError(f"not a regio bench report: {exc}") from None
    if report.schema != REPORT_SCHEMA:
        raise ValueError(f"report schema {report.schema!r}; this regio reads {REPORT_SCHEMA!r}")
    return report
