"""One broken rule for every strategy: a request that lost its task, a request over the window
(whoever sent it, regio included) and the calls a strategy never sent because it raised are
broken, each call counted once, shown and never ranked; a strategy that raises fails alone and
the trace keeps every other strategy's row."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from _bench_fixtures import swe_trace, tiny_blueprint
from regio.bench.output import broken_lines, model_tables
from regio.bench.replay import replay
from regio.bench.report import LayoutResult, ModelResult
from regio.bench.retention import RetentionMeter
from regio.bench.run import run_bench
from regio.bench.tracking import Tracker, prompt_tokens
from regio.cache.types import CacheBlock, CacheRequest
from regio.content import Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.errors import RegionFullError
from regio.traces import AssistantMessage, Header, SystemPrompt, ToolResults, Trace, UserMessage

CACHE = "anthropic:claude-sonnet-4-6"


def test_a_request_over_the_window_is_broken_whoever_sent_it() -> None:
    out = replay(swe_trace(steps=40), tiny_blueprint(), layouts=("recorded",), window_tokens=4000)
    run = out.runs["recorded"]
    assert out.prompt_limit == 4000 - round(4000 * 4000 / 60000)  # the window less the reply
    over = sum(prompt_tokens(r) > out.prompt_limit for r in run.requests)
    assert over > 0
    assert run.over_window_requests == over
    assert run.broken_requests == over and run.lost_task_requests == 0


def test_requests_inside_the_window_are_not_broken() -> None:
    out = replay(swe_trace(steps=6), tiny_blueprint(), layouts=("recorded", "regio"))
    assert all(run.broken_requests == 0 for run in out.runs.values())
    assert out.prompt_limit == 60000 - 4000


def _raising_from(strategy: str, call: int) -> Any:
    """``Engine.request`` raising ``RegionFullError`` for ``strategy``'s engine from its
    ``call``-th request (0-based) on."""
    original = Engine.request

    def request(self: Engine, *args: Any, **kwargs: Any) -> Any:
        made = self.__dict__.setdefault("_test_calls", 0)
        self.__dict__["_test_calls"] = made + 1
        if self.options.strategy == strategy and made >= call:
            raise RegionFullError(
                "region 'conversation' is full", region="conversation", requested=9, available=1
            )
        return original(self, *args, **kwargs)

    return request


def test_a_strategy_that_raises_fails_alone_and_the_trace_keeps_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Engine, "request", _raising_from("naive", 2))
    report = run_bench(
        [(swe_trace(steps=10), tiny_blueprint())],
        layouts=("recorded", "naive", "regio"),
        cache_models=(CACHE,),
    )
    assert report.skipped == ()
    (trace,) = report.traces
    model = trace.model(CACHE)
    failed = model.layout("naive")
    assert failed.failure is not None and failed.failure.startswith("RegionFullError")
    assert failed.failed_at == 2 and failed.requests == 2
    assert failed.unsent_requests == 8 and failed.broken_requests == 8
    for name in ("recorded", "regio"):
        assert model.layout(name).requests == 10 and model.layout(name).broken_requests == 0
    lines = broken_lines(model)
    assert lines == [
        f"broken: naive ({CACHE}) 8 of 10 calls (8 never sent); failed: {failed.failure}"
    ]
    assert any("naive failed at call 2: RegionFullError" in n for n in report.notes)


def test_a_turn_that_overflows_regio_keeps_the_trace_and_every_other_row() -> None:
    """A turn of two parallel results (5,205 tokens) in a 10,000-token window, more than is
    free of the conversation's fixed budget: whatever regio does with it (today its
    conversation refuses the write with ``RegionFullError``), the trace stays in the report
    with every strategy's row, and a strategy that stopped has its unsent calls broken."""
    calls = ToolUse("a", "cat", {"f": "a"}), ToolUse("b", "cat", {"f": "b"})
    big = "word " * 2_600
    events = [
        SystemPrompt(0.0, "You are careful."),
        UserMessage(0.0, (Text("Fix it. " * 200),)),
        AssistantMessage(1.0, (Text("reading"), *calls)),
        ToolResults(2.0, (ToolResult("a", big), ToolResult("b", big))),
        AssistantMessage(3.0, (Text("done"),)),
        UserMessage(4.0, (Text("Thanks."),)),
        AssistantMessage(5.0, (Text("ok"),)),
    ]
    trace = Trace(Header(id="tiny/parallel", source_format="synth"), tuple(events))
    report = run_bench(
        [(trace, tiny_blueprint())],
        layouts=("recorded", "naive", "regio"),
        cache_models=(CACHE,),
        window_tokens=10_000,
    )
    assert report.skipped == ()
    model = report.traces[0].model(CACHE)
    assert [x.layout for x in model.layouts] == ["recorded", "naive", "regio"]
    assert model.layout("recorded").requests == 3
    for x in model.layouts:
        assert x.requests + x.unsent_requests == 3
        assert (x.failure is None) == (x.unsent_requests == 0)
        assert x.broken_requests >= x.unsent_requests


def _request(call: int, tokens: int) -> CacheRequest:
    return CacheRequest(id=f"{call:05d}", blocks=(CacheBlock(tokens, f"d{call}"),), t_start=call)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 200), min_size=1, max_size=30),
    lost=st.sets(st.integers(0, 29)),
    limit=st.integers(0, 200),
    stop=st.one_of(st.none(), st.integers(0, 29)),
)
def test_every_broken_call_counts_once_whatever_its_reasons(
    sizes: list[int], lost: set[int], limit: int, stop: int | None
) -> None:
    calls = len(sizes)
    failed_at = None if stop is None or stop >= calls else stop
    tracker = Tracker(RetentionMeter((), (), 1))
    sent = calls if failed_at is None else failed_at
    for call in range(sent):
        tracker.requests.append(_request(call, sizes[call]))
        tracker.seen(call, call not in lost, False, str)
    if failed_at is not None:
        tracker.fail(failed_at, RegionFullError("full", region="c", requested=1, available=0))
    run = tracker.run(None, limit, calls)
    lost_sent = {c for c in lost if c < sent}
    over = {c for c in range(sent) if sizes[c] > limit}
    unsent = set(range(sent, calls))
    assert run.lost_task_requests == len(lost_sent)
    assert run.over_window_requests == len(over)
    assert run.unsent_requests == len(unsent)
    assert run.broken_requests == len(lost_sent | over | unsent)
    assert (run.failure is None) == (failed_at is None)


def _layout(name: str, cost: float, **fields: Any) -> LayoutResult:
    return LayoutResult(name, 3, 300, 200, 100, 0, 0.67, cost, 0.7, 0.95, **fields)


def test_a_broken_strategy_is_shown_and_never_ranked() -> None:
    over = _layout("trim", 0.5, broken_requests=2, over_window_requests=2)
    lost = _layout("llamaindex-memory", 0.6, broken_requests=1, lost_task_requests=1)
    model = ModelResult(
        CACHE,
        "rule",
        (_layout("regio", 1.0), over, lost, _layout("agent-framework-truncation", 2.0)),
    )
    console = Console(record=True, width=240)
    for table in model_tables("t", model):
        console.print(table)
    rows = {
        line.split("│")[1].strip(): line
        for line in console.export_text().splitlines()
        if "│" in line
    }
    assert "trim (broken)" in rows and "llamaindex-memory (broken)" in rows
    # the cheapest unbroken peer is agent-framework-truncation (2.0): regio is -50% of it
    assert "-50.0%" in rows["regio"]
    assert broken_lines(model) == [
        f"broken: trim ({CACHE}) 2 of 3 calls (2 over the window)",
        f"broken: llamaindex-memory ({CACHE}) 1 of 3 calls (1 lost the task)",
    ]


def test_delegation_is_left_out_with_a_note_where_the_blueprint_renders_for_an_api_without_it() -> (
    None
):
    # tau-bench's support-agent blueprint renders Chat Completions: every regio-delegate call
    # raised ProviderCompactionError, so `regio demo` showed it broken on 571 of 571 calls
    blueprint = attrs.evolve(
        tiny_blueprint(),
        model=attrs.evolve(tiny_blueprint().model, provider="openai", name="gpt-4o"),
    )
    out = replay(swe_trace(steps=6), blueprint, layouts=("regio", "regio-delegate"))
    assert "regio-delegate" not in out.runs and "regio" in out.runs
    assert any("regio-delegate left out" in n and "openai_chat" in n for n in out.notes)
    anthropic = replay(swe_trace(steps=6), tiny_blueprint(), layouts=("regio-delegate",))
    assert "regio-delegate" in anthropic.runs
