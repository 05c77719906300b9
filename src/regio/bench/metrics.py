"""Benchmark metrics.

* hit rate H = sum read / sum n (tokens);
* the oracle bound of a request sequence, H_max = sum c_i / sum n_i with
  c_i = Q(max_{j<i} LCP(x_i, S_j)), computed by :class:`regio.cache.oracle.OracleCache`
  quantized for the same provider (:func:`oracle_report`);
* the share of the bound reached, H / H_max (:func:`oracle_share`);
* the append-only bound of a trace, H_max = 1 - n_N / sum_{i=1..N} n_i
  (:func:`append_only_hit_rate`) and the window-capped bound (:func:`window_capped_bound`);
* cumulative hit rate per request, for plots (:func:`cumulative_hit_rates`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from regio.bench.report import LayoutResult, ModelResult, ReliefStage
from regio.cache.billing import total
from regio.cache.types import CacheOutcome, CacheReport, CacheRequest
from regio.providers import cache_model_for

__all__ = [
    "append_only_hit_rate",
    "bound_share",
    "cumulative_hit_rates",
    "hit_rate",
    "layout_result",
    "oracle_name",
    "oracle_report",
    "oracle_share",
    "sum_layout_results",
    "total_models",
    "window_capped_bound",
]


def hit_rate(read: int, prompt_tokens: int) -> float:
    """read / prompt tokens; 0.0 for an empty sequence. Raises ``ValueError`` for negative
    counts or read > prompt tokens."""
    if read < 0 or prompt_tokens < 0:
        raise ValueError(f"hit_rate: counts must be >= 0 (read={read}, n={prompt_tokens})")
    if read > prompt_tokens:
        raise ValueError(f"hit_rate: read {read} exceeds the prompt tokens {prompt_tokens}")
    return read / prompt_tokens if prompt_tokens else 0.0


def append_only_hit_rate(prompt_tokens: Sequence[int]) -> float:
    """The append-only bound 1 - n_N / sum n_i of request sizes ``prompt_tokens`` (tokens, in
    request order; see ``docs/cache.md``). 0.0 for no requests or no tokens. This is the
    request-side
    bound without quantization: with x_i = x_{i-1} + y_{i-1} + o_i every request can at best
    read the whole previous prompt."""
    if any(n < 0 for n in prompt_tokens):
        raise ValueError("append_only_hit_rate: request sizes must be >= 0")
    total = sum(prompt_tokens)
    if not prompt_tokens or total == 0:
        return 0.0
    return 1.0 - prompt_tokens[-1] / total


def window_capped_bound(prompt_tokens: Sequence[int], window: int | None) -> float:
    """The best hit rate of requests that may hold at most ``window`` tokens (tokens): every
    request is filled to the window (``m_i = min(n_i, window)``) and only the tokens new since
    the previous request (``d_i = max(0, n_i - n_{i-1})``, ``d_1 = n_1``) are uncached:
    ``1 - sum min(m_i, d_i) / sum m_i``. ``window=None`` gives the append-only bound
    ``1 - n_N / sum n_i`` for append-only sizes. Raises ``ValueError`` for negative sizes or a
    window < 1."""
    if any(n < 0 for n in prompt_tokens):
        raise ValueError("window_capped_bound: request sizes must be >= 0")
    if window is None:
        return append_only_hit_rate(prompt_tokens)
    if window < 1:
        raise ValueError(f"window_capped_bound: window must be >= 1 token, got {window}")
    total = uncached = 0
    previous = 0
    for n in prompt_tokens:
        m = min(n, window)
        total += m
        uncached += min(m, max(0, n - previous))
        previous = n
    return 1.0 - uncached / total if total else 0.0


def bound_share(rate: float, bound: float) -> float:
    """H / bound of the trace (may pass 1.0 when a strategy sends fewer or more reusable
    tokens than the recorded requests); 0.0 when the bound is 0."""
    return rate / bound if bound > 0.0 else 0.0


def oracle_share(rate: float, bound: float) -> float:
    """H / H_max. When the bound is 0 nothing was reusable, so nothing was missed: 1.0."""
    if bound <= 0.0:
        return 1.0
    return rate / bound


def cumulative_hit_rates(reads: Sequence[int], prompts: Sequence[int]) -> list[float]:
    """Cumulative hit rate after each request: sum read_1..i / sum n_1..i (0 while no tokens).
    Raises ``ValueError`` when the sequences differ in length."""
    if len(reads) != len(prompts):
        raise ValueError(
            f"cumulative_hit_rates: {len(reads)} read counts but {len(prompts)} prompt sizes"
        )
    out: list[float] = []
    r_sum = n_sum = 0
    for r, n in zip(reads, prompts, strict=True):
        r_sum += r
        n_sum += n
        out.append(r_sum / n_sum if n_sum else 0.0)
    return out


def oracle_name(cache_model: str) -> str:
    """The oracle quantized like ``cache_model`` (``anthropic:claude-sonnet-4-6`` ->
    ``oracle:anthropic:claude-sonnet-4-6``; an oracle name is its own oracle)."""
    if cache_model == "oracle" or cache_model.startswith("oracle:"):
        return cache_model
    return f"oracle:{cache_model}"


def oracle_report(cache_model: str, requests: Iterable[CacheRequest]) -> CacheReport:
    """The section-5 bound of ``requests`` for the provider of ``cache_model`` (a fresh
    :class:`~regio.cache.oracle.OracleCache`: no TTL, no capacity, ideal marks)."""
    return cache_model_for(oracle_name(cache_model)).run(requests)


def layout_result(
    name: str,
    report: CacheReport,
    bound: CacheReport,
    *,
    trace_bound: float = 0.0,
    compaction: CacheReport | None = None,
    summarizer: str = "none",
    retention: dict[str, float] | None = None,
    broken_requests: int = 0,
    compaction_calls: int | None = None,
    relief: tuple[ReliefStage, ...] = (),
    first_cut: int | None = None,
    **extra: Any,
) -> LayoutResult:
    """A :class:`LayoutResult` from a cache model's report, the oracle report of the same
    requests, the trace's bound ``trace_bound`` and the report of the summarizer's requests
    (``compaction``); ``compaction_calls`` defaults to that report's requests (an offline
    summarizer sends none, so its calls are passed in); ``relief``: the relief chain's stage
    tallies; ``first_cut``: the model call at which the strategy first cut something
    (``None``: never); ``extra``: the other :class:`LayoutResult` fields (broken reasons,
    failure, cost bound). Writes are ``write_5m + write_1h + write`` (all written tokens);
    ``cost_usd`` is the requests' cost plus the summarizer's (``request_cost_usd`` the
    first alone)."""
    outs = report.outcomes
    calls = compaction.requests if compaction is not None else 0
    if compaction_calls is not None:
        calls = compaction_calls
    summarized = compaction.cost_usd if compaction is not None else 0.0
    cost = total([report.cost_usd, summarized])
    return LayoutResult(
        layout=name,
        requests=report.requests,
        prompt_tokens=report.prompt_tokens,
        cache_read_tokens=report.read,
        cache_write_tokens=report.creation,
        uncached_tokens=report.uncached,
        hit_rate=report.hit_rate,
        cost_usd=cost,
        oracle_hit_rate=bound.hit_rate,
        placement_share=oracle_share(report.hit_rate, bound.hit_rate),
        bound_hit_rate=trace_bound,
        bound_share=bound_share(report.hit_rate, trace_bound),
        compaction_calls=calls,
        compaction_cost_usd=summarized,
        summarizer=summarizer,
        retention=retention,
        broken_requests=broken_requests,
        read_per_request=tuple(o.read for o in outs),
        prompt_per_request=tuple(o.prompt_tokens for o in outs),
        cost_per_request=_each_cost(outs),
        relief=relief,
        first_cut=first_cut,
        request_cost_usd=report.cost_usd,
        **extra,
    )


def _each_cost(outs: Sequence[CacheOutcome]) -> tuple[float, ...]:
    """Each outcome's cost (USD), or ``()`` when one is unpriced (no per-request cost line
    rather than one that counts an unpriced request as $0)."""
    costs = tuple(o.cost_usd for o in outs if o.cost_usd is not None)
    return costs if len(costs) == len(outs) else ()


def _sum_retention(items: Sequence[LayoutResult]) -> dict[str, float] | None:
    """Mean retention per key, weighted by requests, over the items that measured it."""
    measured = [x for x in items if x.retention]
    if not measured:
        return None
    out: dict[str, float] = {}
    for key in dict.fromkeys(k for x in measured for k in x.retention or {}):
        have = [x for x in measured if x.retention and key in x.retention]
        weight = sum(x.requests for x in have) or 1
        out[key] = sum((x.retention or {})[key] * x.requests for x in have) / weight
    return out


def sum_layout_results(name: str, items: Sequence[LayoutResult]) -> LayoutResult:
    """Totals of one layout over several traces: counts and costs summed, rates recomputed
    from the sums (the oracle rate from the summed bound reads, the trace bound weighted by
    prompt tokens), retention averaged weighted by requests, the cost bounds summed and the
    share of them recomputed, failures joined. Per-request series are concatenated in the
    given order. ``first_cut``, ``failed_at``, the bound's trigger and kept size are kept for
    one item and ``None`` for several (each trace counts its own calls)."""
    prompt = sum(x.prompt_tokens for x in items)
    read = sum(x.cache_read_tokens for x in items)
    bound_read = sum(x.oracle_hit_rate * x.prompt_tokens for x in items)
    trace_read = sum(x.bound_hit_rate * x.prompt_tokens for x in items)
    rate = read / prompt if prompt else 0.0
    bound = bound_read / prompt if prompt else 0.0
    trace_bound = trace_read / prompt if prompt else 0.0
    kinds = {x.summarizer for x in items} - {"none"}
    return LayoutResult(
        layout=name,
        requests=sum(x.requests for x in items),
        prompt_tokens=prompt,
        cache_read_tokens=read,
        cache_write_tokens=sum(x.cache_write_tokens for x in items),
        uncached_tokens=sum(x.uncached_tokens for x in items),
        hit_rate=rate,
        cost_usd=total([x.cost_usd for x in items]),
        oracle_hit_rate=bound,
        placement_share=oracle_share(rate, bound),
        bound_hit_rate=trace_bound,
        bound_share=bound_share(rate, trace_bound),
        compaction_calls=sum(x.compaction_calls for x in items),
        compaction_cost_usd=total([x.compaction_cost_usd for x in items]),
        summarizer=next(iter(kinds)) if len(kinds) == 1 else ("mixed" if kinds else "none"),
        retention=_sum_retention(items),
        broken_requests=sum(x.broken_requests for x in items),
        read_per_request=tuple(r for x in items for r in x.read_per_request),
        prompt_per_request=tuple(n for x in items for n in x.prompt_per_request),
        cost_per_request=tuple(c for x in items for c in x.cost_per_request),
        compaction_cost_per_request=_concat_compaction(items),
        relief=sum_relief([x.relief for x in items]),
        first_cut=items[0].first_cut if len(items) == 1 else None,
        request_cost_usd=total([x.request_cost_usd for x in items]),
        lost_task_requests=sum(x.lost_task_requests for x in items),
        over_window_requests=sum(x.over_window_requests for x in items),
        unsent_requests=sum(x.unsent_requests for x in items),
        failure="; ".join(x.failure for x in items if x.failure) or None,
        failed_at=items[0].failed_at if len(items) == 1 else None,
        compactions=_sum_counts([x.compactions for x in items]),
        **_sum_bound(items),
    )


def _sum_counts(counts: Sequence[dict[str, int]]) -> dict[str, int]:
    """Counts by key summed over ``counts``, keys sorted."""
    out: dict[str, int] = {}
    for c in counts:
        for k, n in c.items():
            out[k] = out.get(k, 0) + n
    return dict(sorted(out.items()))


def _concat_compaction(items: Sequence[LayoutResult]) -> tuple[float, ...]:
    """The summarizer's cost per model call of ``items`` in order, zeros for an item without
    one; empty when none has one."""
    if not any(x.compaction_cost_per_request for x in items):
        return ()
    return tuple(
        c
        for x in items
        for c in (x.compaction_cost_per_request or (0.0,) * len(x.cost_per_request))
    )


def _sum_bound(items: Sequence[LayoutResult]) -> dict[str, Any]:
    """The summed cost bound of ``items`` and the share of it (``None`` when any item has no
    bound); the trigger and kept size are kept for one item only."""
    bound = total([x.cost_bound_usd for x in items])
    cost = total([x.cost_usd for x in items])
    one = items[0] if len(items) == 1 else None
    return {
        "cost_bound_usd": bound,
        "cost_bound_share": cost / bound if bound and cost is not None else None,
        "cost_bound_trigger": one.cost_bound_trigger if one else None,
        "kept_tokens": one.kept_tokens if one else None,
        "periodic_hit_bound": _weighted_bound(items),
    }


def _weighted_bound(items: Sequence[LayoutResult]) -> float | None:
    """The periodic hit bounds of ``items`` weighted by prompt tokens (``None`` when any is
    missing)."""
    if any(x.periodic_hit_bound is None for x in items):
        return None
    prompt = sum(x.prompt_tokens for x in items)
    total = sum((x.periodic_hit_bound or 0.0) * x.prompt_tokens for x in items)
    return total / prompt if prompt else None


def sum_relief(parts: Sequence[Sequence[ReliefStage]]) -> tuple[ReliefStage, ...]:
    """The relief stage tallies of ``parts`` added up per stage (first-seen stage order)."""
    out: dict[str, list[int]] = {}
    for part in parts:
        for s in part:
            acc = out.setdefault(s.stage, [0, 0, 0, 0, 0])
            for i, v in enumerate((s.runs, s.skipped, s.freed_tokens, s.blocks, s.short)):
                acc[i] += v
    return tuple(ReliefStage(k, *v) for k, v in out.items())


def total_models(per_trace: Sequence[Sequence[ModelResult]]) -> tuple[ModelResult, ...]:
    """Totals per cache model and layout over traces (each trace's list of model results),
    keeping first-seen order of models and layouts."""
    order: dict[str, str] = {}
    layouts: dict[str, dict[str, list[LayoutResult]]] = {}
    for models in per_trace:
        for m in models:
            order.setdefault(m.cache_model, m.rule_id)
            per = layouts.setdefault(m.cache_model, {})
            for item in m.layouts:
                per.setdefault(item.layout, []).append(item)
    return tuple(
        ModelResult(
            cache_model=name,
            rule_id=rule,
            layouts=tuple(sum_layout_results(k, v) for k, v in layouts[name].items()),
        )
        for name, rule in order.items()
    )
