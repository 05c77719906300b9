"""The simulator against recorded provider usage (regio.bench.agreement): what is compared when
the log lacks the system prompt and tool schemas, when it is not comparable, and the real
OpenHands runs."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from _bench_fixtures import tau_trace, tiny_blueprint
from _traces_support import raw_traces_dir
from regio.bench.agreement import prefix_is_unlogged
from regio.bench.output import agreement_lines
from regio.bench.replay import replay
from regio.bench.run import run_bench
from regio.content import Text, ToolResult, ToolUse
from regio.traces.detect import expand_sources, import_file
from regio.traces.format import (
    AssistantMessage,
    Header,
    ToolResults,
    Trace,
    Usage,
    UserMessage,
)

MODEL = "anthropic:claude-sonnet-4-6"


def _unlogged_trace(steps: int) -> Trace:
    """An agent run whose log kept the messages but not the system prompt or tool schemas."""
    events: list = [UserMessage(0.0, (Text("Rename game.py to main.py."),))]
    t = 0.0
    for i in range(steps):
        t += 2.0
        events.append(AssistantMessage(t, (ToolUse(f"c{i}", "bash", {"command": f"ls d{i}"}),)))
        t += 1.0
        events.append(ToolResults(t, (ToolResult(f"c{i}", f"file_{i}.py " * (20 + 7 * i)),)))
    events.append(AssistantMessage(t + 2.0, (Text("Done."),)))
    return Trace(Header(id="tiny/unlogged", source_format="regio"), tuple(events))


def _with_usage(trace: Trace, usages: list[Usage | None]) -> Trace:
    calls = iter(usages)
    events = tuple(
        msgspec.structs.replace(e, usage=next(calls)) if isinstance(e, AssistantMessage) else e
        for e in trace.events
    )
    return msgspec.structs.replace(trace, events=events)


def _ideal_provider(sizes: list[int], prefix: int) -> list[Usage | None]:
    """What a provider caching the whole previous prompt reports for requests of ``sizes``
    tokens sent behind a ``prefix``-token system prompt and tool schemas."""
    out: list[Usage | None] = []
    for i, n in enumerate(sizes):
        read = prefix + sizes[i - 1] if i else 0
        out.append(Usage.anthropic(0, 10, read, prefix + n - read))
    return out


def test_a_log_without_system_prompt_or_tools_is_compared_behind_the_estimated_prefix() -> None:
    trace = _unlogged_trace(6)
    assert prefix_is_unlogged(trace)
    sizes = replay(trace, tiny_blueprint(), layouts=("recorded",)).raw_sizes
    real = _with_usage(trace, _ideal_provider(sizes, 3000))
    report = run_bench([(real, tiny_blueprint())], layouts=("recorded",), cache_models=(MODEL,))
    a = report.traces[0].usage_agreement
    assert a is not None and a.comparable
    assert a.unlogged_prefix_tokens == 3000
    assert a.requests == len(sizes) - 1  # the first call fixed the estimate
    assert a.simulated_read_tokens == a.recorded_read_tokens
    assert a.simulated_prompt_tokens == a.recorded_prompt_tokens
    assert a.mean_share_error < 1e-9
    beyond = sum(sizes[:-1])  # each later call reads the previous request past the prefix
    assert a.simulated_beyond_prefix_tokens == a.recorded_beyond_prefix_tokens == beyond > 0
    line = " ".join(agreement_lines(report.traces))
    assert "prefix estimated from each trace's first recorded prompt (3,000 tokens)" in line


@settings(max_examples=20, deadline=None)
@given(st.integers(1100, 20_000), st.integers(2, 7))
def test_added_tokens_compare_the_growth_both_sides_see_whatever_the_prefix(
    prefix: int, steps: int
) -> None:
    trace = _unlogged_trace(steps)
    sizes = replay(trace, tiny_blueprint(), layouts=("recorded",)).raw_sizes
    real = _with_usage(trace, _ideal_provider(sizes, prefix))
    report = run_bench([(real, tiny_blueprint())], layouts=("recorded",), cache_models=(MODEL,))
    a = report.traces[0].usage_agreement
    assert a is not None and a.unlogged_prefix_tokens == prefix
    assert a.added_pairs == len(sizes) - 1
    assert a.recorded_added_tokens == a.simulated_added_tokens == sizes[-1] - sizes[0]


def test_a_log_whose_only_usage_fixes_the_prefix_is_not_comparable_with_the_reason() -> None:
    trace = _unlogged_trace(3)
    calls = len(trace.steps())
    usage = Usage.anthropic(10, 10, 2000, 500)
    real = _with_usage(trace, [None] * (calls - 1) + [usage])
    report = run_bench([(real, tiny_blueprint())], layouts=("recorded",), cache_models=(MODEL,))
    a = report.traces[0].usage_agreement
    assert a is not None and not a.comparable and a.requests == 0
    lines = agreement_lines(report.traces)
    assert lines == [f"recorded usage of tiny/unlogged not comparable: {a.reason}"]
    assert "nothing left to compare" in a.reason


def test_a_recorded_prompt_smaller_than_the_replay_is_not_comparable() -> None:
    trace = _unlogged_trace(3)
    tiny = Usage.anthropic(3, 10)
    real = _with_usage(trace, [tiny] * len(trace.steps()))
    report = run_bench([(real, tiny_blueprint())], layouts=("recorded",), cache_models=(MODEL,))
    a = report.traces[0].usage_agreement
    assert a is not None and not a.comparable
    assert "does not hold what was sent" in a.reason


def test_a_log_with_its_system_prompt_is_compared_as_recorded_on_every_call() -> None:
    trace = tau_trace()
    assert not prefix_is_unlogged(trace)
    usage = Usage(prompt_tokens=1000, cached_tokens=500)
    real = _with_usage(trace, [usage] * len(trace.steps()))
    report = run_bench([(real, tiny_blueprint())], layouts=("recorded",))
    a = report.traces[0].usage_agreement
    assert a is not None and a.comparable and a.unlogged_prefix_tokens == 0
    assert a.requests == len(trace.steps())
    assert a.recorded_read_tokens == 500 * a.requests


def test_the_openhands_runs_are_compared_on_the_reads_beyond_the_estimated_prefix() -> None:
    """The three OpenHands trajectories (claude-3-5-sonnet and gpt-4o, real usage): two are
    comparable behind an estimated prefix of about 3,460 tokens. That prefix is cached on
    both sides by construction (about 96% of the reads), so the reads past it are what the
    simulator decided: each comparable trace must read past it, and the total must stay
    within a factor of 3 of the recorded reads past it (measured: 256 vs 522, -51%). The
    third records usage on its last call only."""
    folder = raw_traces_dir() / "openhands"
    traces = [t for p in expand_sources([folder]) for t in import_file(p).traces]
    report = run_bench([(t, tiny_blueprint()) for t in traces], layouts=("recorded",))
    found = {t.trace: t.usage_agreement for t in report.traces}
    comparable = [a for a in found.values() if a is not None and a.comparable]
    assert len(comparable) == 2
    assert all(a.unlogged_prefix_tokens > 3000 for a in comparable)
    for a in comparable:
        assert a.simulated_beyond_prefix_tokens > 0, a  # read something the prefix does not
        assert a.recorded_beyond_prefix_tokens > 0, a
    rec = sum(a.recorded_beyond_prefix_tokens for a in comparable)
    sim = sum(a.simulated_beyond_prefix_tokens for a in comparable)
    # measured 256 simulated against 522 recorded (0.49; docs/benchmark.md): the simulator
    # reads about half of what the provider read past the prefix. A move of more than 0.1
    # either way is a change in the simulator or the importer and must be looked at.
    assert 0.39 <= sim / rec <= 0.59, (sim, rec)
    lines = agreement_lines(report.traces)
    for name, a in found.items():
        if a is not None and a.comparable:
            assert any(line.strip().startswith(f"{name} (") for line in lines), lines
    other = found["openhands/basic_interactions"]
    assert other is not None and not other.comparable
