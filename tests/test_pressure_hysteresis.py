"""Token hysteresis of the conversation (issue 13): token pressure fires ``compact`` like an
item count, ``bulk`` frees down to its target in one step, and between two steps the
conversation only grows at its end."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.errors import RegionConfigError
from regio.policies import Bulk, Compact
from regio.policies.hysteresis import cost_target, resolve_mark
from regio.regions import CompactHistory, Pinned, SlidingWindow, Window
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words


class FlakySummarizer(StubSummarizer):
    """Fails (raises) on the calls whose index is in ``fail``."""

    def __init__(self, fail: set[int], **kw: Any) -> None:
        super().__init__(**kw)
        self.fail = fail
        self.calls = 0

    def __call__(self, entries: Any, standing: str, extra: str | None) -> str:
        self.calls += 1
        if self.calls in self.fail:
            raise RuntimeError("summarizer service unavailable")
        return super().__call__(entries, standing, extra)


def _engine(eviction: Any, budget: int = 2000, summarizer: Any = None) -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=400, volatility="grows"),
            SlidingWindow(name="conversation", budget=budget, eviction=eviction),
        ],
        max_tokens=budget + 1000,
        summarizer=summarizer or StubSummarizer(size=8, distinct=True),
    )


def _turn(engine: Any, i: int, size: int) -> None:
    call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
    engine.add_assistant(f"step {i}", [call])
    engine.add_tool_result(call.id, words(size, f"t{i}x"))


def _kinds(engine: Any) -> list[Any]:
    seen: list[Any] = []
    engine.subscribe(seen.append)
    return seen


def _conversation_bytes(engine: Any) -> bytes:
    conv = engine.window.region("conversation")
    return json.dumps([[e.role, e.text] for e in conv.entries]).encode()


def test_token_pressure_compacts_a_compact_conversation_instead_of_evicting() -> None:
    engine = _engine(Compact(compact_count=10))
    seen = _kinds(engine)
    engine.add_user("fix the bug")
    for i in range(60):
        engine.request()
        _turn(engine, i, 150)
    evicted = [e for e in seen if e.kind == "evicted" and e.region == "conversation"]
    completed = [e for e in seen if e.kind == "compaction_completed"]
    assert evicted == []
    assert completed, "token pressure never compacted"
    assert all(e.region == "conversation" for e in completed)
    conv = engine.window.region("conversation")
    assert conv.used_tokens <= conv.budget


def test_token_trigger_queues_a_compaction_down_to_the_target() -> None:
    engine = _engine(Compact(compact_count=10, trigger=1000, target=400))
    engine.add_user("go")
    conv = engine.window.region("conversation")
    i = 0
    while conv.used_tokens < 1000:
        engine.request()  # each turn reaches the model before anything may summarize it
        _turn(engine, i, 100)
        i += 1
    (pending,) = engine.pending()
    assert pending.reason == "token_trigger"
    engine.request()
    assert conv.used_tokens <= 400
    assert engine.pending() == []


def test_bulk_token_trigger_evicts_down_to_the_target_in_one_step() -> None:
    window = Window(
        regions=[
            SlidingWindow(name="conversation", budget=1000, eviction=Bulk(trigger=800, target=300))
        ],
        max_tokens=2000,
        counter=StubCounter(),
    )
    seen: list[Any] = []
    window.events.subscribe(seen.append)
    from regio.content import Message, Text

    for i in range(40):
        window.add_message(Message("user", (Text(words(90, f"m{i}")),)))
    steps = [e for e in seen if e.kind == "evicted"]
    assert steps, "bulk never evicted"
    conv = window.region("conversation")
    # each step freed down to the target: at most 300 tokens were kept right after it
    assert len(steps) <= 40 * 90 // (800 - 300) + 1
    assert conv.used_tokens <= 800


def test_summarizer_failure_runs_the_declared_fallback_with_an_event() -> None:
    engine = _engine(Compact(compact_count=10), summarizer=FlakySummarizer(set(range(1, 100))))
    seen = _kinds(engine)
    engine.add_user("go")
    for i in range(40):
        engine.request()
        _turn(engine, i, 150)
    evicted = [e for e in seen if e.kind == "evicted" and e.region == "conversation"]
    assert evicted and all(e.reason == "compaction_fallback" for e in evicted)
    assert any(e.kind in ("compaction_fallback", "compaction_no_progress") for e in seen)


def test_marks_accept_tokens_or_a_percent_of_the_budget() -> None:
    assert resolve_mark("90%", 1000) == 900
    assert resolve_mark(700, 1000) == 700
    with pytest.raises(RegionConfigError, match="percent"):
        Compact(trigger="150%")
    with pytest.raises(RegionConfigError, match="tokens >= 1"):
        Bulk(target=0)


def test_cost_target_keeps_more_when_requests_add_less() -> None:
    slow = cost_target(90_000, 500)
    fast = cost_target(90_000, 5_000)
    assert 0 < fast < slow < 90_000


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(min_value=5, max_value=400), min_size=5, max_size=40),
    strategy=st.sampled_from(["compact", "bulk"]),
    fail=st.sets(st.integers(min_value=1, max_value=12), max_size=4),
)
def test_between_steps_the_conversation_only_grows_at_its_end(
    sizes: list[int], strategy: str, fail: set[int]
) -> None:
    eviction = Compact(compact_count=10) if strategy == "compact" else Bulk(overflow=10)
    engine = _engine(eviction, budget=1500, summarizer=FlakySummarizer(fail, size=8))
    steps: list[Any] = []
    engine.subscribe(
        lambda e: (
            steps.append(e)
            if e.kind in ("evicted", "compaction_completed") and e.region == "conversation"
            else None
        )
    )
    engine.add_user("start")
    before = _conversation_bytes(engine)
    for i, size in enumerate(sizes):
        n_steps = len(steps)
        engine.request()
        _turn(engine, i, size)
        after = _conversation_bytes(engine)
        if len(steps) == n_steps:
            # no step: the old conversation is a byte prefix of the new one (the JSON list's
            # closing bracket aside)
            assert after[: len(before) - 1] == before[:-1]
        before = after


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(min_value=5, max_value=400), min_size=5, max_size=40),
    fail=st.sets(st.integers(min_value=1, max_value=12), max_size=6),
)
def test_token_pressure_never_drops_a_compact_entry_without_its_summary(
    sizes: list[int], fail: set[int]
) -> None:
    summarizer = FlakySummarizer(fail, size=8)
    engine = _engine(Compact(compact_count=10), budget=1500, summarizer=summarizer)
    events: list[Any] = []
    engine.subscribe(events.append)
    engine.add_user("start")
    for i, size in enumerate(sizes):
        engine.request()
        _turn(engine, i, size)
    summarized = {i for e in events if e.kind == "compaction_completed" for i in e.entry_ids}
    for e in events:
        if e.kind == "evicted" and e.region == "conversation":
            # only the declared fallback evicts, and only after a summarizer failure
            assert e.reason == "compaction_fallback"
            assert summarizer.calls >= min(fail), "fallback without a failed summary"
            assert not set(e.entry_ids) & summarized
    gone = {
        r.entry.id for r in engine.transcript() if r.kind == "message" and r.entry is not None
    } - {e.id for e in engine.window.region("conversation").entries}
    evicted = {i for e in events if e.kind == "evicted" for i in e.entry_ids}
    assert gone <= summarized | evicted


@given(
    trigger=st.integers(min_value=1000, max_value=500_000),
    growth=st.floats(min_value=10, max_value=20_000),
    write=st.floats(min_value=1.0, max_value=2.0),
    read=st.floats(min_value=0.01, max_value=0.5),
    share=st.floats(min_value=0.01, max_value=1.0),
)
def test_cost_target_balances_the_rewrite_against_the_reads(
    trigger: int, growth: float, write: float, read: float, share: float
) -> None:
    kept = cost_target(trigger, growth, multipliers=(write, read), rewrite_share=share)
    assert 0 <= kept < trigger

    def gap(r: float) -> float:  # rewrite spread over the cycle minus its share of reads
        return write * r * growth / (trigger - r) - share * read * (trigger + r) / 2

    if 0 < kept < trigger - 1:  # the balance point lies between kept and kept + 1
        assert gap(kept) <= 1e-6 * trigger
        assert gap(kept + 1) >= -1e-6 * trigger
    more = cost_target(trigger, growth * 2, multipliers=(write, read), rewrite_share=share)
    assert more <= kept
