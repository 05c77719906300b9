"""Running the benchmark: traces x blueprint x layouts x cache models -> :class:`BenchReport`.

Each layout's request sequence is simulated by a fresh cache model (one per layout, so layouts
never share a cache), and bounded by the oracle of the same requests
(:func:`regio.bench.metrics.oracle_report`) and by the cost-optimal periodic-compaction
schedule at the strategy's own kept size (:mod:`regio.bench.costbound`). Costs include the
output tokens at the rule's output price (the output is the recorded reply, identical for
every layout) and every summarizer call of the strategy.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from regio.bench.agreement import usage_agreement
from regio.bench.cachenames import check_cache_models
from regio.bench.costbound import (
    Schedule,
    cut_sizes,
    kept_tokens,
    periodic_hit_bound,
    prices_of,
    with_summarizer,
)
from regio.bench.metrics import (
    append_only_hit_rate,
    layout_result,
    oracle_report,
    total_models,
    window_capped_bound,
)
from regio.bench.peers import PEERS, peer_versions
from regio.bench.replay import ALL_LAYOUTS, ReplayOutput, replay
from regio.bench.report import BenchReport, ModelResult, TraceResult
from regio.bench.retention import Probe, plant_canaries, trace_facts
from regio.bench.tracking import StrategyRun
from regio.cache.base import order_requests
from regio.cache.billing import total
from regio.cache.types import CacheReport, CacheRuleError
from regio.providers import cache_model_for
from regio.traces.format import Trace

if TYPE_CHECKING:
    from regio.blueprint import Blueprint
    from regio.cache.base import CacheModel
    from regio.capture import CaptureRule

__all__ = [
    "DEFAULT_CACHE_MODELS",
    "bench_trace",
    "check_cache_models",
    "run_bench",
    "score",
    "summarizer_cost_per_request",
    "trace_bound_of",
    "usage_agreement",
]

#: Cache models used when none are named (the demo's two). ``openai:gpt-5`` is the OpenAI
#: provider's default model (``regio.providers.provider_for("openai").default_model``; its rule
#: carries a price); ``openai:gpt-4o`` stays selectable with ``--cache``.
DEFAULT_CACHE_MODELS: tuple[str, ...] = ("anthropic:claude-sonnet-4-6", "openai:gpt-5")


def score(
    out: ReplayOutput, cache_models: Sequence[str], ttl: str = "5m"
) -> tuple[ModelResult, ...]:
    """Simulate every strategy's requests of ``out`` under each cache model (a fresh model
    per strategy, and another for its summarizer's requests), with its broken calls, failure
    and cost bound (cache writes priced at ``ttl``)."""
    trace_bound = trace_bound_of(out)
    results = []
    for name in cache_models:
        rule_id = ""
        items = []
        for layout, run in out.runs.items():
            report, compaction, per_call = _simulate(name, run, out.summarizer_cache)
            rule_id = report.rule_id
            cost = report.cost_usd
            if compaction is not None:  # unpriced once either part is (regio.cache.billing)
                cost = total([cost, compaction.cost_usd])
            items.append(
                layout_result(
                    layout,
                    report,
                    oracle_report(name, run.requests),
                    trace_bound=trace_bound,
                    compaction=compaction,
                    summarizer=run.summarizer,
                    retention=run.retention,
                    broken_requests=run.broken_requests,
                    compaction_calls=run.compaction_calls,
                    relief=run.relief,
                    compactions=run.compactions,
                    first_cut=run.first_cut,
                    lost_task_requests=run.lost_task_requests,
                    over_window_requests=run.over_window_requests,
                    unsent_requests=run.unsent_requests,
                    failure=run.failure,
                    failed_at=run.failed_at,
                    compaction_cost_per_request=per_call if compaction is not None else (),
                    **bound_fields(out, run, name, cost, ttl),
                )
            )
        results.append(ModelResult(cache_model=name, rule_id=rule_id, layouts=tuple(items)))
    return tuple(results)


def bound_fields(
    out: ReplayOutput, run: StrategyRun, cache_model: str, cost: float | None, ttl: str = "5m"
) -> dict[str, Any]:
    """The cost bound of ``run`` on ``out``'s trace under ``cache_model``
    (:mod:`regio.bench.costbound`) as :class:`LayoutResult` fields: the bound (USD), the share
    ``cost`` is of it, its trigger, the kept size (tokens) and the periodic-compaction bound
    on the hit rate at that kept size; ``None`` where prices, a prompt limit, a kept size or a
    feasible schedule are missing. A strategy whose summaries are transcript prompts to
    another model (``out.summarizer_cache``) has its summaries priced at that model's prices,
    as they are billed."""
    empty: dict[str, Any] = {
        "cost_bound_usd": None,
        "cost_bound_share": None,
        "cost_bound_trigger": None,
    }
    prompts = [sum(b.tokens for b in r.blocks) for r in run.requests]
    kept = kept_tokens(prompts)
    hit_bound = None
    if out.prompt_limit is not None:
        hit_bound = periodic_hit_bound(out.raw_sizes, out.prompt_limit, out.fixed_tokens, kept)
    empty["periodic_hit_bound"] = hit_bound
    prices = prices_of(cache_model_for(cache_model).rule, ttl)
    if prices is None or out.prompt_limit is None or not out.outputs:
        return {**empty, "kept_tokens": kept}
    if run.compaction_requests and out.summarizer_cache is not None:
        # its summaries are transcript prompts to another model, at that model's prices;
        # a model without a price gives no bound (its calls are unpriced)
        try:
            summarizer = cache_model_for(out.summarizer_cache).rule
        except CacheRuleError:
            return {**empty, "kept_tokens": kept}
        summarized = with_summarizer(prices, summarizer)
        if summarized is None:
            return {**empty, "kept_tokens": kept}
        prices = summarized
    passes = [*run.fork_requests, *run.compaction_requests]
    summary = round(sum(r.output_tokens for r in passes) / len(passes)) if passes else 0
    bound = Schedule(
        sizes=out.raw_sizes,
        outputs=out.outputs,
        limit=out.prompt_limit,
        fixed=out.fixed_tokens,
        kept=kept,
        summary=summary,
        summarizes=min(1.0, len(passes) / max(1, len(cut_sizes(prompts)))),
        prices=prices,
    ).bound()
    if bound is None:
        return {**empty, "kept_tokens": kept}
    share = cost / bound.cost_usd if cost is not None and bound.cost_usd > 0 else None
    return {
        "cost_bound_usd": bound.cost_usd,
        "cost_bound_share": share,
        "cost_bound_trigger": bound.trigger,
        "kept_tokens": kept,
        "periodic_hit_bound": hit_bound,
    }


def _simulate(
    name: str, run: StrategyRun, summarizer: str | None = None
) -> tuple[CacheReport, CacheReport | None, tuple[float, ...]]:
    """``(the strategy's model calls, its summarizer calls, the summarizer's cost per model
    call)`` of ``run`` under cache model ``name``: the calls and the summarizer's forks of
    them (``run.fork_requests``) share one cache, in time order, as at the provider;
    transcript prompts have one of their own, under the summarizer's cache model
    ``summarizer`` (``provider:model``; ``None``: ``name``). The per-call costs (USD, one per
    model call, in order) place each summarizer call at the last model call sent before it
    (:func:`summarizer_cost_per_request`)."""
    model = cache_model_for(name)
    forks = {r.id for r in run.fork_requests}
    ordered = order_requests([*run.requests, *run.fork_requests])
    outs = [model.process(r) for r in ordered]
    report = CacheReport.from_outcomes(model.rule.id, [o for o in outs if o.id not in forks])
    placed = [(r.t_start, r.id, o) for r, o in zip(ordered, outs, strict=True) if r.id in forks]
    if run.compaction_requests:
        own, known = _summarizer_model(summarizer, name)
        for r in order_requests(run.compaction_requests):
            outcome = own.process(r)
            if not known:  # no rule for the summarizer's model: no price (regio.cache.billing)
                outcome = msgspec.structs.replace(outcome, cost_usd=None)
            placed.append((r.t_start, r.id, outcome))
    billed = [o for _, _, o in placed]
    compaction = CacheReport.from_outcomes(model.rule.id, billed) if billed else None
    calls = [(r.t_start, r.id) for r in order_requests(run.requests)]
    passes = [((t, i), o.cost_usd) for t, i, o in placed]
    priced = [(key, c) for key, c in passes if c is not None]
    # an unpriced summarizer call makes the breakdown unpriced too: no per-call figures,
    # never the priced calls' alone
    per_call = summarizer_cost_per_request(calls, priced) if len(priced) == len(passes) else ()
    return report, compaction, per_call


def _summarizer_model(summarizer: str | None, name: str) -> tuple[CacheModel, bool]:
    """The cache model that prices the transcript prompts of a summarizer on cache model
    ``summarizer`` (``None``: the run's ``name``), and whether the rules know it: a model
    they do not know has its prompts simulated by the run's model, and no price."""
    try:
        return cache_model_for(summarizer or name), True
    except CacheRuleError:
        return cache_model_for(name), False


def summarizer_cost_per_request(
    calls: Sequence[tuple[float, str]], passes: Sequence[tuple[tuple[float, str], float]]
) -> tuple[float, ...]:
    """The summarizer's cost (USD) at each model call: ``calls`` are the model calls' sort
    keys ``(t_start, id)`` in order, ``passes`` each summarizer call's key and cost. A
    summarizer call is added at the last model call whose key is not after its own (the
    first call when it precedes them all); ``()`` without model calls. The sum is the
    summarizer calls' whole cost."""
    if not calls:
        return ()
    out = [0.0] * len(calls)
    for key, cost in passes:
        out[max(0, bisect.bisect_right(calls, key) - 1)] += cost
    return tuple(out)


def trace_bound_of(out: ReplayOutput) -> float:
    """The bound of the trace: append-only on the recorded request sizes, or window-capped
    at ``out.window`` for a pressure run."""
    if out.window is None:
        return append_only_hit_rate(out.raw_sizes)
    return window_capped_bound(out.raw_sizes, out.window)


def bench_trace(
    trace: Trace,
    blueprint: Blueprint,
    *,
    layouts: Sequence[str] = ALL_LAYOUTS,
    cache_models: Sequence[str] = DEFAULT_CACHE_MODELS,
    rules: Sequence[CaptureRule] | None = None,
    window_tokens: int | None = None,
    canaries: bool = False,
    seed: int = 0,
) -> TraceResult:
    """Replay and score one trace (see :func:`regio.bench.replay.replay`); with
    ``canaries`` the trace gets canaries planted (:func:`regio.bench.retention.plant_canaries`,
    ``seed``) and its own facts probed."""
    probes: tuple[Probe, ...] = ()
    if canaries:
        trace, planted = plant_canaries(trace, seed)
        probes = planted + trace_facts(trace)
    out = replay(
        trace, blueprint, layouts=layouts, rules=rules, window_tokens=window_tokens, probes=probes
    )
    models = score(out, cache_models, blueprint.cache.ttl)
    return TraceResult(
        trace=trace.id,
        group=trace.header.source_format,
        blueprint=blueprint.name,
        requests=len(out.raw_sizes),
        append_only_hit_rate=append_only_hit_rate(out.raw_sizes),
        region_writes=out.region_writes,
        refused_writes=out.refused_writes,
        models=models,
        notes=out.notes,
        window_tokens=window_tokens,
        bound_hit_rate=trace_bound_of(out),
        usage_agreement=usage_agreement(trace, out, models),
        retention_from=out.retention_from,
        prompt_limit=out.prompt_limit,
    )


def run_bench(
    jobs: Sequence[tuple[Trace, Any]],
    *,
    layouts: Sequence[str] = ALL_LAYOUTS,
    cache_models: Sequence[str] = DEFAULT_CACHE_MODELS,
    progress: Callable[[str], None] | None = None,
    window_tokens: int | None = None,
    canaries: bool = False,
    skipped: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> BenchReport:
    """Bench every (trace, blueprint) job; ``progress(trace_id)`` is called after each one.
    A trace that cannot be replayed is reported in ``skipped`` (with the error) and left out,
    never aborting the run; ``skipped`` starts with the given reasons (e.g. unreadable
    files). Totals sum over the benched traces per cache model and layout. ``notes`` open
    the report's notes (e.g. how the blueprint was retargeted)."""
    check_cache_models(cache_models)
    results = []
    lost = list(skipped)
    for trace, blueprint in jobs:
        try:
            results.append(
                bench_trace(
                    trace,
                    blueprint,
                    layouts=layouts,
                    cache_models=cache_models,
                    window_tokens=window_tokens,
                    canaries=canaries,
                )
            )
        except Exception as exc:  # a bad trace is reported, never aborts the run
            lost.append(f"{trace.id}: {type(exc).__name__}: {exc}")
        if progress is not None:
            progress(trace.id)
    seen = Counter(n for r in results for n in dict.fromkeys(r.notes))
    found = (f"{n} ({k} of {len(results)} traces)" for n, k in seen.items())
    all_notes = (*notes, *found)
    used = [x for x in layouts if x in PEERS]
    versions = {k: v for k, v in peer_versions().items() if used}
    return BenchReport(
        traces=tuple(results),
        totals=total_models([r.models for r in results]),
        notes=all_notes,
        skipped=tuple(lost),
        versions=versions,
        window_tokens=window_tokens,
    )
