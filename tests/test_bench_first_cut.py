"""Each strategy's own first cut, in the replay, the JSON report and the printed line.

``first_cut`` is the model call at which a strategy first cut something it had been sending;
the run's ``retention_from`` (the call every strategy is scored from) is the smallest of them.
The trace below is small and hand-made, so where each strategy must cut is known: the request
that first drops a block the strategy's previous request sent, the first request over the
window for ``trim``, the first over half the window for the server-side edit.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.metrics import total_models
from regio.bench.output import retention_line
from regio.bench.peers import PEERS, peer_available
from regio.bench.peers.editing import TRIGGER_SHARE
from regio.bench.replay import ABLATIONS, LAYOUTS, ReplayOutput, replay
from regio.bench.report import BenchReport, TraceResult, load_report, report_json
from regio.bench.retention import plant_canaries, trace_facts
from regio.bench.run import bench_trace
from regio.blueprint import load_blueprint
from regio.cache.types import CacheRequest
from regio.content import Text, ToolResult, ToolUse
from regio.tokens import get_counter
from regio.traces.format import (
    AssistantMessage,
    Header,
    SystemPrompt,
    ToolResults,
    Trace,
    UserMessage,
)

BLUEPRINT = """
version: 1
name: cutter
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 8000,
        max_output_tokens: 1000}
tokenizer: heuristic
summarizer: {max_summary_tokens: 300}
relief: {enabled: true, keep_last: 1, clear_at_least: 200}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, heading: false,
     capture: [{rule: system_prompt}]}
  - {name: conversation_history, kind: compact_history, source: conversation,
     volatility: grows, budget: 600}
  - name: conversation
    kind: sliding_window
    budget: 4000
    eviction: {strategy: compact, compact_count: 4}
"""
WINDOW = 7000  # the blueprint's window: context_window - max_output_tokens

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
_WORDS += ("golf", "hotel", "india", "juliet", "kilo", "lima")
_TOOLS = (
    {
        "name": "read_file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
)


def _body(i: int, words: int) -> str:
    """``words`` words no other call of the trace repeats."""
    return " ".join(f"{_WORDS[(i * 7 + k) % 12]}{i}x{k}" for k in range(words))


def reading_trace(steps: int, result_words: int = 60) -> Trace:
    """A coding session: a task, then ``steps`` file reads (a tool_use and its result of
    ``result_words`` words each), a short exchange with the user after every fifth read."""
    events: list = [
        SystemPrompt(0.0, "You are a careful engineer. Read files and fix bugs."),
        UserMessage(0.0, (Text("Task: fix the parser bug. " + _body(99, 20)),)),
    ]
    t = 0.0
    for i in range(steps):
        t += 2
        events.append(AssistantMessage(t, (ToolUse(f"c{i}", "read_file", {"path": f"m{i}.py"}),)))
        t += 1
        events.append(ToolResults(t, (ToolResult(f"c{i}", _body(i, result_words)),)))
        if i % 5 == 4:
            t += 1
            events.append(AssistantMessage(t, (Text(f"Checked {i}. " + _body(1000 + i, 10)),)))
            t += 1
            events.append(UserMessage(t, (Text(f"Keep going ({i}). " + _body(2000 + i, 15)),)))
    header = Header(id=f"cut/{steps}-{result_words}", source_format="regio", tools=_TOOLS)
    return Trace(header, tuple(events))


def _strategies() -> tuple[str, ...]:
    """Every strategy whose package is installed (``recorded`` first)."""
    peers = tuple(p for p in PEERS if peer_available(p))
    return ("recorded", *LAYOUTS, *ABLATIONS, *peers)


def _replay(trace: Trace, layouts: tuple[str, ...]) -> ReplayOutput:
    planted, probes = plant_canaries(trace, 0)
    return replay(
        planted,
        load_blueprint(BLUEPRINT),
        layouts=layouts,
        counter=get_counter("heuristic"),
        probes=probes + trace_facts(planted),
    )


def first_drop(requests: list[CacheRequest]) -> int | None:
    """The first request that does not send a block the request before it sent: the call
    at which a strategy first cut (a strategy that cuts nothing only ever appends)."""
    for i in range(1, len(requests)):
        if {b.digest for b in requests[i - 1].blocks} - {b.digest for b in requests[i].blocks}:
            return i
    return None


@pytest.fixture(scope="module")
def session() -> ReplayOutput:
    return _replay(reading_trace(50), _strategies())


def test_each_strategy_first_cut_is_the_first_request_that_drops_what_it_sent(
    session: ReplayOutput,
) -> None:
    cuts = {k: r.first_cut for k, r in session.runs.items()}
    assert cuts == {k: first_drop(r.requests) for k, r in session.runs.items()}
    # the precondition: the strategies cut at different calls, and one never does
    assert cuts["recorded"] is None
    assert len({v for v in cuts.values() if v is not None}) >= 2, cuts


def test_trim_first_cuts_at_the_first_request_over_the_window(session: ReplayOutput) -> None:
    if "trim" not in session.runs:
        pytest.skip("langchain-core is not installed (extra 'bench')")
    over = next(i for i, n in enumerate(session.raw_sizes) if n > WINDOW)
    assert session.runs["trim"].first_cut == over


def test_the_server_side_edit_first_cuts_at_the_first_request_over_its_trigger(
    session: ReplayOutput,
) -> None:
    trigger = WINDOW * TRIGGER_SHARE
    over = next(i for i, n in enumerate(session.raw_sizes) if n > trigger)
    assert session.runs["anthropic-clear-tool-uses"].first_cut == over


def test_retention_is_scored_from_the_smallest_first_cut(session: ReplayOutput) -> None:
    cuts = [r.first_cut for r in session.runs.values() if r.first_cut is not None]
    assert session.retention_from == min(cuts)


@settings(max_examples=6, deadline=None)
@given(st.integers(8, 40), st.integers(20, 90))
def test_first_cuts_and_the_common_start_hold_on_any_session(steps: int, words: int) -> None:
    out = _replay(reading_trace(steps, words), ("recorded", "regio", "anthropic-clear-tool-uses"))
    for run in out.runs.values():
        assert run.first_cut == first_drop(run.requests)
    cuts = [r.first_cut for r in out.runs.values() if r.first_cut is not None]
    assert out.retention_from == (min(cuts) if cuts else None)


@pytest.fixture(scope="module")
def benched() -> TraceResult:
    return bench_trace(
        reading_trace(50),
        load_blueprint(BLUEPRINT),
        layouts=("recorded", "regio", "regio-summarize-only", "anthropic-clear-tool-uses"),
        cache_models=("anthropic:claude-sonnet-4-6", "openai:gpt-5"),
        canaries=True,
    )


def test_the_json_report_holds_each_strategy_first_cut_and_the_start_is_their_minimum(
    benched: TraceResult,
) -> None:
    per_model = [{x.layout: x.first_cut for x in m.layouts} for m in benched.models]
    assert per_model[0] == per_model[1]  # one strategy's cut does not depend on the price
    cuts = per_model[0]
    assert cuts["recorded"] is None
    assert all(cuts[k] is not None for k in cuts if k != "recorded")
    assert benched.retention_from == min(v for v in cuts.values() if v is not None)
    report = BenchReport(traces=(benched,), totals=total_models([benched.models]))
    decoded = load_report(report_json(report))
    assert {x.layout: x.first_cut for x in decoded.traces[0].models[0].layouts} == cuts


def test_the_printed_line_names_each_strategy_first_cut_earliest_first(
    benched: TraceResult,
) -> None:
    line = retention_line([benched])
    assert line is not None
    cuts = {x.layout: x.first_cut for x in benched.models[0].layouts if x.layout != "recorded"}
    listed = line.split("first cut per strategy: ")[1].rstrip(")").split(", ")
    assert [item.rsplit(" ", 1)[0] for item in listed] == sorted(cuts, key=lambda k: cuts[k])
    assert all(f"{k} {v}" in listed for k, v in cuts.items())
    assert "recorded" not in line


def test_over_several_traces_the_line_says_which_strategy_cut_first_in_how_many(
    benched: TraceResult,
) -> None:
    other = bench_trace(
        reading_trace(30, 40),
        load_blueprint(BLUEPRINT),
        layouts=("regio", "anthropic-clear-tool-uses"),
        cache_models=("anthropic:claude-sonnet-4-6",),
        canaries=True,
    )
    firsts = [
        {x.layout for x in t.models[0].layouts if x.first_cut == t.retention_from}
        for t in (benched, other)
    ]
    line = retention_line([benched, other])
    assert line is not None and "the first to cut: " in line
    for name in set().union(*firsts):
        n = sum(name in f for f in firsts)
        assert f"{name} in {n}" in line
