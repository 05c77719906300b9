"""Retention is scored for every strategy of a run from one common model call.

Before, each strategy was scored from its own first cut, so a strategy that cut late was
scored on fewer requests and fewer probe observations than one that cut early: different
denominators, an uneven comparison. Now every strategy is scored from the first call at which
any strategy of the run had cut something.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.bench.cli import examples_dir
from regio.bench.output import retention_line
from regio.bench.replay import ReplayOutput, replay
from regio.bench.report import TraceResult
from regio.bench.retention import PROBE_TYPES, Probe, RetentionMeter, plant_canaries, trace_facts
from regio.bench.run import bench_trace
from regio.blueprint import load_blueprint
from regio.traces.synth import synthesize

WINDOW = 24_576
# the simulated server-side edit needs no third-party package (CI runs without the bench extra)
LAYOUTS = ("recorded", "regio", "regio-summarize-only", "anthropic-clear-tool-uses")
EDIT = "anthropic-clear-tool-uses"


@pytest.fixture(scope="module")
def pressured() -> ReplayOutput:
    """A generated 120-call coding session at a 24,576-token window, where regio and the
    server-side edit cut at different calls (checked below, so the test means something)."""
    bp = load_blueprint(examples_dir() / "blueprints" / "coding-agent.yaml")
    trace, planted = plant_canaries(synthesize(120, 7), 0)
    return replay(
        trace, bp, layouts=LAYOUTS, window_tokens=WINDOW, probes=planted + trace_facts(trace)
    )


def test_strategies_that_cut_at_different_calls_are_scored_on_the_same_probe_observations(
    pressured: ReplayOutput,
) -> None:
    cuts = {k: r.first_cut for k, r in pressured.runs.items() if k != "recorded"}
    assert cuts[EDIT] is not None and cuts["regio"] is not None
    assert cuts[EDIT] != cuts["regio"], cuts  # the precondition: they cut at different calls
    observed = {k: pressured.runs[k].retention_observations for k in cuts}
    assert observed["regio"], "nothing was scored"
    assert observed[EDIT] == observed["regio"] == observed["regio-summarize-only"]
    assert {"fact", "constraint", "todo", "update", "trace_fact"} <= set(observed["regio"])


def test_retention_is_scored_from_the_first_cut_of_any_strategy(
    pressured: ReplayOutput,
) -> None:
    cuts = [r.first_cut for k, r in pressured.runs.items() if r.first_cut is not None]
    assert pressured.retention_from == min(cuts)


def test_the_recorded_requests_are_not_scored(pressured: ReplayOutput) -> None:
    recorded = pressured.runs["recorded"]
    assert recorded.first_cut is None and recorded.retention is None


@pytest.fixture(scope="module")
def short() -> ReplayOutput:
    """60 calls at 64k: regio cuts (a parked tool output displaces an older one), the
    server-side edit never reaches its trigger (checked below)."""
    bp = load_blueprint(examples_dir() / "blueprints" / "coding-agent.yaml")
    trace, planted = plant_canaries(synthesize(60, 7), 0)
    return replay(
        trace,
        bp,
        layouts=("regio", EDIT),
        window_tokens=65_536,
        probes=planted + trace_facts(trace),
    )


def test_a_strategy_that_cut_nothing_is_scored_and_keeps_every_canary(
    short: ReplayOutput,
) -> None:
    # before, the edit was left unscored here ("no compaction") while regio was scored
    edit = short.runs[EDIT].retention
    assert edit is not None and edit["canaries"] == 1.0
    assert short.runs["regio"].retention is not None


def test_a_strategy_that_never_cut_is_scored_on_the_same_observations_as_one_that_did(
    short: ReplayOutput,
) -> None:
    edit, regio = short.runs[EDIT], short.runs["regio"]
    assert edit.first_cut is None and regio.first_cut is not None  # the precondition
    assert short.retention_from == regio.first_cut
    assert edit.retention_observations == regio.retention_observations


def test_the_report_says_from_which_call_retention_is_scored() -> None:
    bp = load_blueprint(examples_dir() / "blueprints" / "coding-agent.yaml")
    result = bench_trace(
        synthesize(60, 7),
        bp,
        layouts=("regio", "trim"),
        cache_models=("anthropic:claude-sonnet-4-6",),
        window_tokens=WINDOW,
        canaries=True,
    )
    assert result.retention_from is not None and result.retention_from > 0
    plain = bench_trace(
        synthesize(60, 7),
        bp,
        layouts=("regio", "trim"),
        cache_models=("anthropic:claude-sonnet-4-6",),
        window_tokens=WINDOW,
    )
    assert plain.retention_from is None  # no probes: nothing scored


_PLANTED = st.lists(
    st.tuples(
        st.sampled_from(PROBE_TYPES), st.integers(0, 40), st.one_of(st.none(), st.integers(0, 40))
    ),
    max_size=10,
)
_KEPT = st.lists(st.sets(st.integers(0, 9)), min_size=1, max_size=6)


def _needle(i: int) -> str:
    return f"<canary-{i}>"


@given(_PLANTED, _KEPT, st.integers(0, 7))
def test_scoring_from_a_call_is_scoring_only_the_requests_from_that_call_on(
    planted: list[tuple[str, int, int | None]], kept: list[set[int]], since: int
) -> None:
    probes = tuple(
        Probe(kind, _needle(i), event, until) for i, (kind, event, until) in enumerate(planted)
    )
    events = [7 * (k + 1) for k in range(len(kept))]
    texts = [" ".join(_needle(i) for i in sorted(keep)) for keep in kept]
    every = RetentionMeter(probes, call_events=events)
    later = RetentionMeter(probes, call_events=events)
    for call, text in enumerate(texts):
        every.observe(call, text)
        if call >= since:
            later.observe(call, text)
    assert every.result(since) == later.result()
    assert every.observations(since) == later.observations()
    # the denominators depend on the probes and the calls only, never on what was kept
    empty = RetentionMeter(probes, call_events=events)
    for call in range(len(texts)):
        empty.observe(call, "")
    assert empty.observations(since) == every.observations(since)


def _trace_result(name: str, start: int | None) -> TraceResult:
    return TraceResult(
        trace=name,
        group="regio",
        blueprint="b",
        requests=10,
        append_only_hit_rate=0.5,
        region_writes=0,
        refused_writes=0,
        models=(),
        retention_from=start,
    )


def test_the_printed_report_says_every_strategy_is_scored_from_the_same_call() -> None:
    assert retention_line([_trace_result("a", None)]) is None
    one = retention_line([_trace_result("a", 29)])
    assert one is not None and "from call 29" in one and "same requests" in one
    many = retention_line([_trace_result("a", 29), _trace_result("b", 7), _trace_result("c", None)])
    assert many is not None and "calls 7-29" in many
