"""The benchmark report: data that travels (frozen msgspec Structs, written as JSON).

Shape of ``regio bench --json OUT`` (all token counts in tokens, costs in USD, rates in [0, 1])::

    {"schema": "regio.bench-report/1",
     "traces": [
       {"trace": "swe-agent/function_calling_simple", "group": "swe-agent",
        "blueprint": "coding-agent", "requests": 5, "append_only_hit_rate": 0.71,
        "region_writes": 4, "notes": [...],
        "models": [
          {"cache_model": "anthropic:claude-sonnet-4-5", "rule_id": "anthropic/...",
           "layouts": [
             {"layout": "regio", "requests": 5, "prompt_tokens": 20311,
              "cache_read_tokens": 14012, "cache_write_tokens": 6100,
              "uncached_tokens": 199, "hit_rate": 0.69, "cost_usd": 0.0312,
              "oracle_hit_rate": 0.70, "oracle_share": 0.98,
              "read_per_request": [...], "prompt_per_request": [...]}, ...]}]}],
     "totals": [ {"cache_model": ..., "layouts": [...]} ],
     "notes": ["..."]}

``hit_rate`` = read / prompt tokens (spec ``cache-rules.md`` section 5); ``oracle_hit_rate`` is
the bound of section 5 computed on the same layout's own requests; ``oracle_share`` =
``hit_rate / oracle_hit_rate`` (1.0 when the bound is 0: nothing was reusable, nothing was
missed); ``append_only_hit_rate`` = ``1 - n_N / sum n_i`` on the raw, append-only request
sequence of the trace (section 5, "Append-only").
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

__all__ = [
    "REPORT_SCHEMA",
    "BenchReport",
    "LayoutResult",
    "ModelResult",
    "TraceResult",
    "load_report",
    "report_json",
    "write_report",
]

REPORT_SCHEMA = "regio.bench-report/1"


class LayoutResult(msgspec.Struct, frozen=True):
    """One layout (or baseline) under one cache model: totals over its requests.

    Token counts in tokens, ``cost_usd`` in USD (``None`` when the cache rule has no input
    price, e.g. local engines), rates in [0, 1]. ``read_per_request`` / ``prompt_per_request``
    hold the per-request read and prompt tokens in request order (for cumulative plots).
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
    oracle_share: float
    read_per_request: tuple[int, ...] = ()
    prompt_per_request: tuple[int, ...] = ()


class ModelResult(msgspec.Struct, frozen=True):
    """All layouts under one cache model (``cache_model`` is the CLI name, ``rule_id`` the
    resolved cache rule)."""

    cache_model: str
    rule_id: str
    layouts: tuple[LayoutResult, ...]

    def layout(self, name: str) -> LayoutResult:
        """The result of layout ``name``; ``KeyError`` naming the layouts present."""
        for item in self.layouts:
            if item.layout == name:
                return item
        known = ", ".join(x.layout for x in self.layouts)
        raise KeyError(f"no layout {name!r} in {self.cache_model} results (layouts: {known})")


class TraceResult(msgspec.Struct, frozen=True):
    """One trace replayed under one blueprint.

    ``group`` is the trace's source format (``swe-agent``, ``tau-bench``, ...);
    ``requests`` the model calls replayed; ``append_only_hit_rate`` the bound of the raw trace;
    ``region_writes`` how many region writes the capture policy made after the first request
    (a blueprint with ``region_writes > 0`` has regions written during the run);
    ``refused_writes`` writes a region refused; ``notes`` what was skipped or approximated.
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

    def model(self, name: str) -> ModelResult:
        """The results under cache model ``name``; ``KeyError`` naming the ones present."""
        for item in self.models:
            if item.cache_model == name:
                return item
        known = ", ".join(m.cache_model for m in self.models)
        raise KeyError(f"no cache model {name!r} in trace {self.trace!r} (models: {known})")


class BenchReport(msgspec.Struct, frozen=True):
    """A whole run: per-trace results, totals per cache model and layout (sums over traces;
    rates recomputed from the sums), and run-level notes."""

    traces: tuple[TraceResult, ...]
    totals: tuple[ModelResult, ...]
    notes: tuple[str, ...] = ()
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
