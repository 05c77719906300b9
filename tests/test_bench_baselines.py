"""The recorded baseline, the peers, the broken-request rule, skip-on-oversize, the bounds,
pressure scaling and the canaries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _bench_fixtures import swe_trace, tau_trace, tiny_blueprint
from regio.bench.baselines import plain_message, plain_request, split_tokens
from regio.bench.metrics import append_only_hit_rate, window_capped_bound
from regio.bench.peers import TrimPeer, peer_available
from regio.bench.pressure import scale_blueprint
from regio.bench.replay import replay
from regio.bench.retention import (
    PROBE_TYPES,
    Probe,
    RetentionMeter,
    plant_canaries,
    trace_facts,
)
from regio.bench.run import run_bench
from regio.blueprint import load_blueprint
from regio.content import Message, Text, ToolResult, ToolUse, content_hash
from regio.tokens import get_counter
from regio.traces.format import (
    AssistantMessage,
    Header,
    SystemPrompt,
    ToolResults,
    Trace,
    UserMessage,
)
from regio.traces.synth import synthesize

needs_langchain = pytest.mark.skipif(
    not peer_available("trim"), reason="langchain-core (extra 'bench') is not installed"
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "blueprints"


def test_split_tokens_keeps_the_sum() -> None:
    msg = Message.assistant("abc" * 30, [ToolUse("x", "t", {"a": 1})])
    assert sum(split_tokens(101, msg.blocks)) == 101


def test_a_plain_request_marks_the_system_and_the_last_message() -> None:
    msgs = [plain_message(Message.user("hi " * 20), 20), plain_message(Message.user("x"), 1)]
    req = plain_request(("sys", 3), msgs, id="r", t_start=1.0)
    assert [i for i, b in enumerate(req.blocks) if b.mark] == [0, len(req.blocks) - 1]
    assert req.prompt_tokens == 3 + 21


def test_recorded_requests_carry_exactly_the_traces_messages() -> None:
    trace = tau_trace()
    out = replay(trace, tiny_blueprint(), layouts=("recorded",))
    steps = trace.steps()
    assert len(out.requests["recorded"]) == len(steps)
    for req, step in zip(out.requests["recorded"], steps, strict=True):
        system = [b for b in req.blocks if b.level == "system"]
        assert [b.digest for b in system] == [content_hash(["system", step.system])]
        expected = [
            content_hash(["messages", m.role, block]) for m in step.messages for block in m.blocks
        ]
        assert [b.digest for b in req.blocks if b.level == "messages"] == expected
        assert sum(b.tokens for b in req.blocks) == out.raw_sizes[step.index]


def test_append_only_bound_on_a_hand_made_vector() -> None:
    assert append_only_hit_rate([100, 200, 300]) == pytest.approx(1 - 300 / 600)


def test_window_capped_bound_on_a_hand_made_vector() -> None:
    # sizes 100, 200, 300 in a 250-token window: m = 100, 200, 250; new = 100, 100, 100
    assert window_capped_bound([100, 200, 300], 250) == pytest.approx(1 - 300 / 550)


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=30).map(sorted))
def test_window_capped_bound_without_a_cap_is_the_append_only_bound(sizes: list[int]) -> None:
    huge = max(sizes) + 1
    assert window_capped_bound(sizes, huge) == pytest.approx(append_only_hit_rate(sizes))


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=30), st.integers(1, 20_000))
def test_window_capped_bound_is_a_share(sizes: list[int], window: int) -> None:
    assert 0.0 <= window_capped_bound(sizes, window) <= 1.0


def test_pressure_scales_non_pinned_budgets_and_keeps_pinned_ones() -> None:
    bp = tiny_blueprint()
    small = scale_blueprint(bp, 6000)
    assert small.model.context_window == 6000
    assert small.region("system").budget == bp.region("system").budget
    assert small.region("customer").budget == round(4000 * 6000 / 60000)
    with pytest.raises(ValueError, match="already has"):
        scale_blueprint(bp, 90_000)


@needs_langchain
def test_trim_that_drops_the_only_user_message_sends_broken_requests() -> None:
    counter = get_counter("o200k_base")
    peer = TrimPeer(allowance=200, system_tokens=10)
    peer.add(plain_message(Message.user("Fix the bug."), 5))
    for i in range(6):
        peer.add(plain_message(Message.assistant(f"step {i}", [ToolUse(f"c{i}", "ls", {})]), 10))
        body = "output " * 60
        peer.add(plain_message(Message.tool((ToolResult(f"c{i}", body),)), counter.count(body)))
    view = peer.view()
    assert view.messages == [] and not view.summary and view.compacted


@needs_langchain
def test_a_replay_counts_the_requests_that_lost_the_task() -> None:
    out = replay(
        swe_trace(steps=40), tiny_blueprint(), layouts=("recorded", "trim"), window_tokens=4000
    )
    # the recorded requests keep the task (some pass the 4,000-token window: those are
    # broken for that reason, counted apart)
    assert out.runs["recorded"].lost_task_requests == 0
    # the observations are user messages, but not the task: once trim cut the task message
    # every later request is broken
    assert out.runs["trim"].lost_task_requests > 0
    assert out.runs["trim"].broken_requests >= out.runs["trim"].lost_task_requests


def _oversized_trace(result: bool = True) -> Trace:
    """A short run whose second message holds 80,000 words, more than the whole 56,000-token
    window of the tiny blueprint: a tool result (``result``) or a user message."""
    huge = "word " * 80_000
    events: list[Any] = [SystemPrompt(0.0, "Be brief."), UserMessage(0.0, (Text("Hello"),))]
    if result:
        events += [
            AssistantMessage(1.0, (ToolUse("c1", "cat", {}),)),
            ToolResults(2.0, (ToolResult("c1", huge),)),
        ]
    else:
        events += [AssistantMessage(1.0, (Text("Paste it"),)), UserMessage(2.0, (Text(huge),))]
    events += [
        AssistantMessage(3.0, (Text("That file is long."),)),
        UserMessage(4.0, (Text("Thanks"),)),
        AssistantMessage(5.0, (Text("Bye"),)),
    ]
    return Trace(Header(id="tiny/huge", source_format="regio"), tuple(events))


def test_a_tool_result_larger_than_the_window_is_trimmed_to_fit_not_skipped() -> None:
    out = replay(_oversized_trace(), tiny_blueprint(), layouts=("recorded", "regio"))
    assert not any("skipped" in n for n in out.notes)
    sizes = [sum(b.tokens for b in r.blocks) for r in out.requests["regio"]]
    assert len(sizes) == 3 and max(sizes) <= 56_000 < out.raw_sizes[1]
    assert max(sizes) > 40_000  # trimmed to what fits, not cleared away


def test_a_user_message_larger_than_the_window_is_skipped_with_a_note() -> None:
    out = replay(_oversized_trace(result=False), tiny_blueprint(), layouts=("recorded", "regio"))
    assert any("larger than the conversation region can hold" in n for n in out.notes)
    assert len(out.requests["regio"]) == 3
    # the recorded requests keep it: it was sent
    assert out.raw_sizes[1] > 80_000


def test_a_trace_that_cannot_be_replayed_is_skipped_and_the_run_goes_on() -> None:
    bad = Trace(
        Header(id="tiny/bad", source_format="regio"),
        (UserMessage(0.0, (Text("hi"),)), AssistantMessage(1.0, (Text("x"),))),
    )
    report = run_bench(
        [(bad, tiny_blueprint()), (tau_trace(), tiny_blueprint())],
        layouts=("recorded", "regio"),
        window_tokens=500,
    )
    assert [t.trace for t in report.traces] == []
    assert len(report.skipped) == 2 and "tiny/bad" in report.skipped[0]


def test_canaries_are_planted_once_each_and_found_where_planted() -> None:
    trace, probes = plant_canaries(swe_trace(steps=12), seed=3)
    again, same = plant_canaries(swe_trace(steps=12), seed=3)
    assert probes == same and trace == again
    text = "\n".join(
        b.text for e in trace.events for b in getattr(e, "blocks", ()) if isinstance(b, Text)
    )
    system = next(e.text for e in trace.events if isinstance(e, SystemPrompt))
    for p in probes:
        assert (text + system).count(p.needle) == 1, p
    assert {p.type for p in probes} >= {"fact", "constraint", "todo", "update"}


def test_the_meter_counts_only_probes_planted_before_the_request() -> None:
    probes = (
        Probe("fact", "AAA", event=0),
        Probe("fact", "BBB", event=5),
        Probe("update", "OLD", event=0, until=2),
    )
    meter = RetentionMeter(probes, call_events=[1, 3, 9])
    meter.observe(1, "AAA OLD")  # at event 3: AAA counts, OLD expired, BBB not yet
    meter.observe(2, "BBB")  # at event 9: AAA lost, BBB kept
    assert meter.result() == {"overall": 2 / 3, "canaries": 2 / 3, "fact": 2 / 3}


def test_trace_facts_pick_paths_numbers_and_error_lines() -> None:
    events = (
        ToolResults(
            1.0,
            (ToolResult("c", "Traceback (most recent call last)\nsrc/pkg/mod.py line 4242"),),
        ),
    )
    facts = {p.needle for p in trace_facts(Trace(Header(id="f", source_format="regio"), events))}
    assert {"src/pkg/mod.py", "4242", "Traceback (most recent call last)"} <= facts


@needs_langchain
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.integers(1, 400)), max_size=40),
    st.integers(1, 3000),
)
def test_trim_on_the_cut_suffix_equals_trim_on_the_whole_list(
    turns: list[tuple[str, int]], allowance: int
) -> None:
    from langchain_core.messages import SystemMessage, trim_messages

    peer = TrimPeer(allowance=allowance, system_tokens=7)
    for role, n in turns:
        message = Message.user(f"u{n}") if role == "user" else Message.assistant(f"a{n}")
        peer.add(plain_message(message, n))
    whole = trim_messages(
        [SystemMessage(content="", id="system"), *peer.log.lc],
        max_tokens=allowance + 7,
        token_counter=peer._count,
        strategy="last",
        start_on="human",
        include_system=True,
    )
    assert peer.view().messages == peer.log.regio_messages(whole)


@needs_langchain
def test_summarizer_calls_of_regio_and_the_middleware_are_billed_alike() -> None:
    from regio.bench.run import score

    if not peer_available("summarization-middleware"):
        pytest.skip("langchain v1 (extra 'bench') is not installed")
    out = replay(
        swe_trace(steps=40),
        tiny_blueprint(),
        layouts=("summarization-middleware",),
        window_tokens=4000,
    )
    ours = replay(
        synthesize(150, 3),
        load_blueprint(EXAMPLES / "coding-agent.yaml"),
        layouts=("regio",),
        window_tokens=16384,
    )
    for name, result in (("summarization-middleware", out), ("regio", ours)):
        run = result.runs[name]
        assert run.summarizer == "llm" and run.compaction_calls == len(run.compaction_requests) > 0
        item = score(result, ["anthropic:claude-sonnet-4-5"])[0].layout(name)
        assert item.compaction_calls > 0 and (item.compaction_cost_usd or 0) > 0
        billed = (item.request_cost_usd or 0) + (item.compaction_cost_usd or 0)
        assert item.cost_usd == item.total_cost_usd == pytest.approx(billed)


def test_recorded_usage_is_compared_with_the_simulated_reads() -> None:
    from regio.traces.format import Usage

    trace = tau_trace()
    events = [
        msgspec.structs.replace(e, usage=Usage(prompt_tokens=1000, cached_tokens=500))
        if isinstance(e, AssistantMessage)
        else e
        for e in trace.events
    ]
    trace = msgspec.structs.replace(trace, events=tuple(events))
    report = run_bench([(trace, tiny_blueprint())], layouts=("recorded",))
    agreement = report.traces[0].usage_agreement
    assert agreement is not None and agreement.requests == len(trace.steps())
    assert agreement.recorded_read_tokens == 500 * agreement.requests
    assert 0.0 <= agreement.mean_share_error <= 1.0


def test_agent_framework_truncation_keeps_the_conversation_inside_its_allowance() -> None:
    if not peer_available("agent-framework-truncation"):
        pytest.skip("agent-framework-core (extra 'bench') is not installed")
    from regio.bench.peers import AgentFrameworkPeer

    counter = get_counter("o200k_base")
    peer = AgentFrameworkPeer(allowance=600, count=counter.count)
    peer.add(plain_message(Message.user("Fix the bug."), 5))
    for i in range(10):
        peer.add(plain_message(Message.assistant(f"step {i}", [ToolUse(f"c{i}", "ls", {})]), 10))
        body = "output " * 60
        peer.add(plain_message(Message.tool((ToolResult(f"c{i}", body),)), counter.count(body)))
        view = peer.view()
    assert view.compacted and sum(m.tokens for m in view.messages) <= 600


def test_memory_on_the_list_store_keeps_what_it_keeps_on_its_sqlite_store() -> None:
    if not peer_available("llamaindex-memory"):
        pytest.skip("llama-index-core (extra 'bench') is not installed")
    from llama_index.core.memory import Memory

    from regio.bench.peers import MemoryPeer

    counter = get_counter("o200k_base")
    fast = MemoryPeer(allowance=400, count=counter.count)
    slow = MemoryPeer(allowance=400, count=counter.count)
    slow.memory = Memory.from_defaults(token_limit=400, tokenizer_fn=slow._tokenize)
    for i in range(12):
        for peer in (fast, slow):
            peer.add(plain_message(Message.user(f"question {i} " * 10), 30))
            peer.add(plain_message(Message.assistant(f"answer {i} " * 20), 60))
        assert fast.view() == slow.view()
    assert fast.view().compacted


@given(st.integers(1024, 59_000))
def test_pressure_never_grows_a_budget_and_keeps_pinned_ones(window: int) -> None:
    bp = tiny_blueprint()
    small = scale_blueprint(bp, window)
    assert small.model.context_window == window
    for old, new in zip(bp.regions, small.regions, strict=True):
        if old.kind == "pinned" or not isinstance(old.budget, int):
            assert new.budget == old.budget
        else:
            assert 1 <= new.budget <= old.budget


_PLANTED = st.lists(
    st.tuples(
        st.sampled_from(PROBE_TYPES), st.integers(0, 40), st.one_of(st.none(), st.integers(0, 40))
    ),
    max_size=10,
)
_KEPT = st.lists(st.sets(st.integers(0, 9)), min_size=1, max_size=6)


def _needle(i: int) -> str:
    return f"<canary-{i}>"  # closed, so no needle is a substring of another


def _measure(probes: tuple[Probe, ...], events: list[int], kept: list[set[int]]) -> Any:
    meter = RetentionMeter(probes, call_events=events)
    for call, keep in enumerate(kept):
        meter.observe(call, " ".join(_needle(i) for i in sorted(keep)))
    return meter.result()


@given(_PLANTED, _KEPT, st.data())
def test_retention_is_the_kept_share_of_the_canaries_planted_before_each_request(
    planted: list[tuple[str, int, int | None]], kept: list[set[int]], data: st.DataObject
) -> None:
    probes = tuple(
        Probe(kind, _needle(i), event, until) for i, (kind, event, until) in enumerate(planted)
    )
    events = [7 * (k + 1) for k in range(len(kept))]
    result = _measure(probes, events, kept)
    # counted independently: a canary counts in a request when it was planted before the
    # request and not yet replaced (``until``), and is kept when its text is in the request
    total: dict[str, int] = {}
    found: dict[str, int] = {}
    for call, at in enumerate(events):
        for i, p in enumerate(probes):
            if p.event < at and (p.until is None or p.until >= at):
                total[p.type] = total.get(p.type, 0) + 1
                found[p.type] = found.get(p.type, 0) + (i in kept[call])
    if not total:
        assert result is None
        return
    expected = {"overall": sum(found.values()) / sum(total.values())}
    expected.update({k: found[k] / n for k, n in total.items()})
    planted = [k for k in total if k != "trace_fact"]
    if planted:
        expected["canaries"] = sum(found[k] for k in planted) / sum(total[k] for k in planted)
    assert result == pytest.approx(expected)
    # keeping more canaries in any request never lowers a share; all of them is 100%
    more = [keep | data.draw(st.sets(st.integers(0, 9))) for keep in kept]
    bigger = _measure(probes, events, more)
    assert all(bigger[k] >= v - 1e-12 for k, v in result.items())
    assert _measure(probes, events, [set(range(10))] * len(kept)) == pytest.approx(
        dict.fromkeys(expected, 1.0)
    )
