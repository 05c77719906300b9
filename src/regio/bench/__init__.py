"""Replay real agent traces through every layout and cache model; report hit rate and cost.

* :mod:`regio.bench.capture` — a recorded trace as one stream of region writes, messages and
  model calls, under the blueprint's capture rules (:mod:`regio.capture`);
* :mod:`regio.bench.replay` — :func:`replay`: one request sequence per strategy, from
  :mod:`regio.bench.enginepass` (regio's engines; a strategy that raises fails alone;
  ``regio-delegate``) and :mod:`regio.bench.rawpass` (``recorded`` and the peers), sharing
  :mod:`regio.bench.replaysetup`; :mod:`regio.bench.tracking` — per-strategy bookkeeping and
  the broken rule;
* :mod:`regio.bench.baselines` — the ``recorded`` baseline and the plain request;
* :mod:`regio.bench.peers` — the peers (``trim``, ``summarization-middleware``, ...; the
  framework ones in :mod:`regio.bench.peers.frameworks`, the clearing ones in
  :mod:`regio.bench.peers.editing`, the providers' compaction in
  :mod:`regio.bench.peers.providers`);
* :mod:`regio.bench.pressure` — ``--window-tokens``: a blueprint scaled to a smaller window;
* :mod:`regio.bench.retention` — canaries, the trace's own facts and their retention;
* :mod:`regio.bench.metrics` — hit rate, oracle and placement share, the trace bounds;
  :mod:`regio.bench.costbound` — the cost-optimal periodic-compaction bound;
* :mod:`regio.bench.run` — :func:`run_bench` -> :class:`BenchReport`;
* :mod:`regio.bench.report` — the JSON report; :mod:`regio.bench.output` — tables,
  :mod:`regio.bench.plot` — the plot;
* :mod:`regio.bench.cli` — ``regio bench`` and ``regio demo``.
"""

from __future__ import annotations

from regio.bench.capture import capture_stream
from regio.bench.metrics import (
    append_only_hit_rate,
    bound_share,
    cumulative_hit_rates,
    hit_rate,
    oracle_report,
    oracle_share,
    window_capped_bound,
)
from regio.bench.peers import PEERS
from regio.bench.pressure import scale_blueprint
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
from regio.bench.retention import Probe, RetentionMeter, plant_canaries, trace_facts
from regio.bench.run import DEFAULT_CACHE_MODELS, bench_trace, run_bench
from regio.capture import (
    Extract,
    FooterRule,
    LookupRule,
    ParkRule,
    SystemPromptRule,
    rules_for,
)

__all__ = [
    "ALL_LAYOUTS",
    "DEFAULT_CACHE_MODELS",
    "LAYOUTS",
    "PEERS",
    "REPORT_SCHEMA",
    "BenchReport",
    "Extract",
    "FooterRule",
    "LayoutResult",
    "LookupRule",
    "ModelResult",
    "ParkRule",
    "Probe",
    "ReplayOutput",
    "RetentionMeter",
    "SystemPromptRule",
    "TraceResult",
    "append_only_hit_rate",
    "bench_trace",
    "bound_share",
    "capture_stream",
    "cumulative_hit_rates",
    "hit_rate",
    "load_report",
    "oracle_report",
    "oracle_share",
    "plant_canaries",
    "replay",
    "report_json",
    "rules_for",
    "run_bench",
    "scale_blueprint",
    "trace_facts",
    "window_capped_bound",
    "write_report",
]
