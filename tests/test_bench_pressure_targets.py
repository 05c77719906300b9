"""Pressure targets on the bundled tau-bench runs at the demo's window (6,144 tokens, canaries
planted), under the Anthropic and OpenAI cache models, with the support-agent example:

1. regio is not dominated: no unbroken peer is both cheaper and keeps at least as many
   canaries (overall retention share);
2. regio costs less than the unbroken peer that keeps the most canaries.

The generated 1,000-call sessions (32k and 64k windows) are measured in full by the bench
itself (docs/benchmark.md); the same targets on a generated session sized for CI are in
``test_bench_long_session_targets.py``. The bundled coding runs do not compact at the smallest
window the coding-agent example fits (12,288 tokens).
"""

from __future__ import annotations

import pytest

from regio.bench.cli import DEMO_WINDOW_TOKENS, examples_dir
from regio.bench.peers import PEER_PACKAGES, PEERS, peer_available
from regio.bench.report import BenchReport, ModelResult
from regio.bench.run import DEFAULT_CACHE_MODELS, run_bench
from regio.blueprint import load_blueprint
from regio.traces.detect import expand_sources, import_file

MODELS = DEFAULT_CACHE_MODELS  # anthropic:claude-sonnet-4-6, openai:gpt-5
AVAILABLE = tuple(p for p in PEERS if peer_available(p))

# the simulated server-side edit always imports; the targets need the third-party peers
THIRD_PARTY = [p for p in AVAILABLE if PEER_PACKAGES[p][1] != "regio"]
pytestmark = pytest.mark.skipif(
    not THIRD_PARTY, reason="no third-party peer package installed (bench extra)"
)


@pytest.fixture(scope="module")
def report() -> BenchReport:
    root = examples_dir()
    bp = load_blueprint(root / "blueprints" / "support-agent.yaml")
    jobs = [
        (t, bp)
        for path in expand_sources([root / "traces" / "tau-bench"])
        for t in import_file(path).traces
    ]
    return run_bench(
        jobs,
        cache_models=MODELS,
        layouts=("regio", *AVAILABLE),
        window_tokens=DEMO_WINDOW_TOKENS["support-agent.yaml"],
        canaries=True,
    )


def _total(report: BenchReport, model: str) -> ModelResult:
    return next(m for m in report.totals if m.cache_model == model)


def _kept(x: object) -> float:
    retention = getattr(x, "retention", None)
    assert retention is not None, "retention was not measured"
    return float(retention["overall"])


@pytest.mark.parametrize("model", MODELS)
def test_no_unbroken_peer_is_cheaper_and_keeps_as_many_canaries(
    report: BenchReport, model: str
) -> None:
    total = _total(report, model)
    mine = total.layout("regio")
    dominating = [
        p.layout
        for p in total.layouts
        if p.layout in AVAILABLE
        and p.broken_requests == 0
        and p.cost_usd is not None
        and mine.cost_usd is not None
        and p.cost_usd < mine.cost_usd
        and _kept(p) >= _kept(mine)
    ]
    assert dominating == []


@pytest.mark.parametrize("model", MODELS)
def test_regio_costs_less_than_the_peer_keeping_the_most_canaries(
    report: BenchReport, model: str
) -> None:
    total = _total(report, model)
    peers = [p for p in total.layouts if p.layout in AVAILABLE and p.broken_requests == 0]
    assert peers, "no unbroken peer ran"
    best = max(peers, key=_kept)
    mine = total.layout("regio")
    assert mine.cost_usd is not None and best.cost_usd is not None
    assert mine.cost_usd < best.cost_usd, (best.layout, best.cost_usd, mine.cost_usd)
