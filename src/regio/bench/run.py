"""Running the benchmark: traces x blueprint x layouts x cache models -> :class:`BenchReport`.

Each layout's request sequence is simulated by a fresh cache model (one per layout, so layouts
never share a cache), and bounded by the oracle of the same requests
(:func:`regio.bench.metrics.oracle_report`). Costs include the output tokens at the rule's
output price; the output is the recorded reply, identical for every layout.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from regio.bench.metrics import append_only_hit_rate, layout_result, oracle_report, total_models
from regio.bench.replay import ALL_LAYOUTS, ReplayOutput, replay
from regio.bench.report import BenchReport, ModelResult, TraceResult
from regio.cache.registry import cache_model_for
from regio.traces.format import Trace

__all__ = ["DEFAULT_CACHE_MODELS", "bench_trace", "check_cache_models", "run_bench", "score"]

#: Cache models used when none are named (the demo's two).
DEFAULT_CACHE_MODELS: tuple[str, ...] = ("anthropic:claude-sonnet-4-5", "openai:gpt-4o")


def check_cache_models(names: Sequence[str]) -> None:
    """Resolve every cache model name once; raises the cache layer's ``CacheRuleError``
    (naming the bad name and the known providers) before any work is done."""
    for name in names:
        cache_model_for(name)


def score(out: ReplayOutput, cache_models: Sequence[str]) -> tuple[ModelResult, ...]:
    """Simulate every layout's requests of ``out`` under each cache model."""
    results = []
    for name in cache_models:
        rule_id = ""
        items = []
        for layout, requests in out.requests.items():
            model = cache_model_for(name)
            rule_id = model.rule.id
            report = model.run(requests)
            items.append(layout_result(layout, report, oracle_report(name, requests)))
        results.append(ModelResult(cache_model=name, rule_id=rule_id, layouts=tuple(items)))
    return tuple(results)


def bench_trace(
    trace: Trace,
    blueprint: Any,
    *,
    layouts: Sequence[str] = ALL_LAYOUTS,
    cache_models: Sequence[str] = DEFAULT_CACHE_MODELS,
    rules: Any = None,
) -> TraceResult:
    """Replay and score one trace (see :func:`regio.bench.replay.replay`)."""
    out = replay(trace, blueprint, layouts=layouts, rules=rules)
    return TraceResult(
        trace=trace.id,
        group=trace.header.source_format,
        blueprint=blueprint.name,
        requests=len(out.raw_sizes),
        append_only_hit_rate=append_only_hit_rate(out.raw_sizes),
        region_writes=out.region_writes,
        refused_writes=out.refused_writes,
        models=score(out, cache_models),
        notes=out.notes,
    )


def run_bench(
    jobs: Sequence[tuple[Trace, Any]],
    *,
    layouts: Sequence[str] = ALL_LAYOUTS,
    cache_models: Sequence[str] = DEFAULT_CACHE_MODELS,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Bench every (trace, blueprint) job; ``progress(trace_id)`` is called after each one.
    Totals sum over all traces per cache model and layout."""
    check_cache_models(cache_models)
    results = []
    for trace, blueprint in jobs:
        results.append(bench_trace(trace, blueprint, layouts=layouts, cache_models=cache_models))
        if progress is not None:
            progress(trace.id)
    seen = Counter(n for r in results for n in dict.fromkeys(r.notes))
    notes = tuple(f"{n} ({k} of {len(results)} traces)" for n, k in seen.items())
    return BenchReport(
        traces=tuple(results), totals=total_models([r.models for r in results]), notes=notes
    )
