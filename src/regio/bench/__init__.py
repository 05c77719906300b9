"""Replay real agent traces through every layout and cache model; report hit rate and cost.

* :mod:`regio.bench.capture` — rules that turn recorded content into region writes;
* :mod:`regio.bench.replay` — :func:`replay`: one request sequence per layout and baseline;
* :mod:`regio.bench.baselines` — the ``trim`` (langchain-core) and ``summarize`` baselines;
* :mod:`regio.bench.metrics` — hit rate, oracle bound and share, append-only bound;
* :mod:`regio.bench.run` — :func:`run_bench` -> :class:`BenchReport`;
* :mod:`regio.bench.report` — the JSON report; :mod:`regio.bench.output` — tables and plot;
* :mod:`regio.bench.cli` — ``regio bench`` and ``regio demo``.
"""

from __future__ import annotations

from regio.bench.capture import (
    Extract,
    FooterRule,
    LookupRule,
    ParkRule,
    SystemPromptRule,
    capture_stream,
    rules_for,
)
from regio.bench.metrics import (
    append_only_hit_rate,
    cumulative_hit_rates,
    hit_rate,
    oracle_report,
    oracle_share,
)
from regio.bench.replay import ALL_LAYOUTS, LAYOUTS, ReplayOutput, replay
from regio.bench.report import (
    REPORT_SCHEMA,
    BenchReport,
    LayoutResult,
    ModelResult,
    TraceResult,
    load_report,
    report_json,
    write_report,
)
from regio.bench.run import DEFAULT_CACHE_MODELS, bench_trace, run_bench

__all__ = [
    "ALL_LAYOUTS",
    "DEFAULT_CACHE_MODELS",
    "LAYOUTS",
    "REPORT_SCHEMA",
    "BenchReport",
    "Extract",
    "FooterRule",
    "LayoutResult",
    "LookupRule",
    "ModelResult",
    "ParkRule",
    "ReplayOutput",
    "SystemPromptRule",
    "TraceResult",
    "append_only_hit_rate",
    "bench_trace",
    "capture_stream",
    "cumulative_hit_rates",
    "hit_rate",
    "load_report",
    "oracle_report",
    "oracle_share",
    "replay",
    "report_json",
    "rules_for",
    "run_bench",
    "write_report",
]
