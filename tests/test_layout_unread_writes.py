"""A request writes no conversation prefix the next request will not read
(:mod:`regio.policies.rewriteodds`; :mod:`regio.layout.breakpoints`, "A write no request
reads"): when the steps the session made say the next one will bring the conversation to a
rewrite (a compaction or a relief pass) with odds above ``1 - mark_odds``, the request places
no ``newest`` (nor ``tail``) marker, still reads what earlier requests marked, and sends the
rest uncached (1.0x the input price instead of 1.25x). On generated sessions at a 32k window
the newest marker of 187 of 300 requests (parallel tool results) wrote tokens no request read
(docs/benchmark.md, "Writes no request reads")."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import Text, ToolUse
from regio.layout import LayoutBlock, to_cache_request
from regio.layout.breakpoints import regio_wanted
from regio.policies.eviction import Compact
from regio.policies.rewriteodds import (
    MIN_STEPS,
    STEP_HISTORY,
    StepLog,
    push_step,
    rewrite_odds,
)
from regio.providers import cache_model_for
from regio.regions import CompactHistory, Pinned, SlidingWindow, Temporary
from runtime_stubs import (
    StubCounter,
    StubSummarizer,
    make_engine,
    relieving_engine,
    words,
)

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "12"))
CACHE = "anthropic:claude-sonnet-4-6"


# ----- the odds -----------------------------------------------------------------------------
def _at_least(headroom: int) -> Callable[[int], bool]:
    return lambda size: size >= headroom


def _steps(*sizes: int, others: int = 0) -> list[tuple[int, int]]:
    return [(size, others) for size in sizes]


NO_ROOM_LIMIT = 10**9


def test_the_odds_are_the_share_of_the_last_steps_that_would_reach_the_trigger() -> None:
    steps = _steps(1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000)
    assert rewrite_odds(steps, _at_least(6000), NO_ROOM_LIMIT) == 3 / 8  # 6000, 7000, 8000
    assert rewrite_odds(steps, _at_least(500), NO_ROOM_LIMIT) == 1.0
    assert rewrite_odds(steps, _at_least(9000), NO_ROOM_LIMIT) == 0.0
    more = [*steps, *_steps(7000, 7000)]
    assert rewrite_odds(more, _at_least(6500), NO_ROOM_LIMIT) == 4 / 10


def test_a_step_whose_other_regions_take_the_room_rewrites_too() -> None:
    """An elastic conversation's room is what the other regions leave: a step that parks a
    large output beside a small stub passes it."""
    steps = [(500, 6000), (500, -6000)] * 4
    assert rewrite_odds(steps, _at_least(9000), 4000) == 0.5  # the parking steps
    assert rewrite_odds(steps, _at_least(9000), 7000) == 0.0


def test_too_few_steps_give_no_odds() -> None:
    few = _steps(*[5000] * (MIN_STEPS - 1))
    assert rewrite_odds(few, _at_least(10), NO_ROOM_LIMIT) is None
    assert rewrite_odds([*few, (5000, 0)], _at_least(10), NO_ROOM_LIMIT) == 1.0


def test_a_conversation_remembers_only_the_last_steps() -> None:
    steps: tuple[tuple[int, int], ...] = ()
    for n in range(STEP_HISTORY + 5):
        steps = push_step(steps, (n, -n))
    assert steps == tuple((n, -n) for n in range(5, STEP_HISTORY + 5))


@settings(max_examples=EXAMPLES * 10, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 50_000), st.integers(-20_000, 20_000)), min_size=0, max_size=40
    ),
    low=st.integers(min_value=-1000, max_value=60_000),
    more=st.integers(min_value=0, max_value=60_000),
    room=st.integers(min_value=-1000, max_value=60_000),
)
def test_the_odds_are_the_counted_share_and_never_grow_with_the_headroom(
    steps: list[tuple[int, int]], low: int, more: int, room: int
) -> None:
    """The bisection gives the share a count over every step gives, for any monotone
    trigger; more headroom or more room never raises the odds."""
    a = rewrite_odds(steps, _at_least(low), room)
    b = rewrite_odds(steps, _at_least(low + more), room + more)
    if len(steps) < MIN_STEPS:
        assert a is None and b is None
        return
    counted = sum(1 for t, o in steps if t >= low or t + max(0, o) > room) / len(steps)
    assert a == counted
    assert b is not None and 0.0 <= b <= a <= 1.0


# ----- the markers ---------------------------------------------------------------------------
def _blocks(levels: list[str]) -> list[LayoutBlock]:
    """Blocks of the given levels, 2,000 tokens each, prefix hashes ``p0``, ``p1``, ..."""
    return [
        LayoutBlock(
            level=level,  # type: ignore[arg-type]
            role="system" if level == "system" else "user",
            tokens=2000,
            digest=f"d{i}",
            prefix_hash=f"p{i}",
            block=Text(f"block {i}"),
            origin="region" if level != "messages" else "entry",
            message=None if level == "system" else i,
        )
        for i, level in enumerate(levels)
    ]


def test_an_unread_newest_mark_is_not_placed_and_the_remembered_prefix_is_read_instead() -> None:
    blocks = _blocks(["system", "messages", "messages", "messages", "messages", "tail"])
    options: dict[str, Any] = {
        "ttl": "5m",
        "stable_ttl": "5m",
        "previous_newest": "p2",
        "tail_index": 5,
    }
    marked = {slot: index for index, _ttl, slot in regio_wanted(blocks, **options)}
    assert marked.get("newest") == 4 and "spare" not in marked  # within the lookback
    assert marked.get("tail") == 5
    unread = {
        slot: index for index, _ttl, slot in regio_wanted(blocks, newest_unread=True, **options)
    }
    assert "newest" not in unread and "tail" not in unread
    assert unread["spare"] == 2  # what the previous request wrote is still read


def test_with_nothing_remembered_an_unread_request_marks_only_its_system_prefix() -> None:
    blocks = _blocks(["system", "messages", "messages"])
    wanted = regio_wanted(blocks, ttl="5m", stable_ttl="5m", newest_unread=True)
    assert [slot for _i, _t, slot in wanted] == ["settled"]


# ----- in an engine --------------------------------------------------------------------------
def _engine() -> Any:
    """A 32,000-token window whose conversation holds about three steps of ~4,000-token tool
    results before it compacts (the engine's Anthropic prices; relief clears after a
    summary)."""
    return relieving_engine(32_000)


def _run(sizes: list[int], *, odds: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """One request per step answered by a tool result of ``sizes[i]`` words; with ``odds``
    off the conversation gives no odds (every request marks its newest block). Returns
    ``(request, outcome)`` per request under Anthropic's cache."""
    with monkeypatch.context() as m:
        if not odds:
            m.setattr(SlidingWindow, "rewrite_odds", lambda self: None)
        engine = _engine()
        sim = cache_model_for(CACHE)
        runs = []
        for i, size in enumerate(sizes):
            engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
            engine.add_tool_result(f"c{i}", words(size, f"r{i}x"))
            req, _payload = engine.request("anthropic", "claude-sonnet-4-6")
            cache = to_cache_request(req, t_start=i * 5.0, id=f"r{i:03d}", model="claude")
            runs.append((req, sim.process(cache)))
        return runs


def _cost(runs: list[Any]) -> float:
    """Input-token equivalents under Anthropic's 5-minute prices (write 1.25, read 0.1)."""
    return sum(1.25 * o.write_5m + 0.1 * o.read + o.uncached for _r, o in runs)


def test_large_steps_near_the_trigger_leave_the_newest_mark_off_and_cost_less(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sizes = [4000] * 40
    with_odds = _run(sizes, odds=True, monkeypatch=monkeypatch)
    without = _run(sizes, odds=False, monkeypatch=monkeypatch)
    unread = [n for n, (req, _o) in enumerate(with_odds) if not _slots(req) & {"newest"}]
    assert unread and min(unread) >= MIN_STEPS - 1  # never before the odds exist
    assert all("newest" in _slots(req) for req, _o in without)
    assert _cost(with_odds) < _cost(without)
    for n in unread:  # marked, its newest write would have gone unread: the next rewrote
        if n + 1 < len(without):
            assert without[n + 1][1].read < without[n][1].prompt_tokens


def test_small_steps_far_from_the_trigger_keep_every_newest_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _run([300] * 30, odds=True, monkeypatch=monkeypatch)
    assert all("newest" in _slots(req) for req, _o in runs)


def _slots(req: Any) -> set[str]:
    return {m.slot for m in req.breakpoints}


def test_the_steps_survive_a_save_and_the_loaded_session_places_the_same_marks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from regio.engine import Engine
    from regio.persistence.store import SQLiteStore

    engine = _engine()
    for i in range(12):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(4000, f"r{i}x"))
        engine.request("anthropic", "claude-sonnet-4-6")
    conv: Any = engine.window.region("conversation")
    assert len(conv.steps.done) >= MIN_STEPS - 1
    store = SQLiteStore(tmp_path / "s.db")
    engine.save_to(store, "s")
    loaded = Engine.load_from(
        store, "s", summarizer=StubSummarizer(size=60), token_counter=StubCounter()
    )
    again: Any = loaded.window.region("conversation")
    assert again.steps == conv.steps
    assert again.rewrite_odds() == conv.rewrite_odds() is not None
    for session in (engine, loaded):
        session.add_assistant("step 12", [ToolUse("c12", "bash", {"i": 12})])
        session.add_tool_result("c12", words(4000, "r12x"))
    assert (
        loaded.request("anthropic", "claude-sonnet-4-6")[1]
        == engine.request("anthropic", "claude-sonnet-4-6")[1]
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(min_value=100, max_value=9000), min_size=10, max_size=30))
def test_a_request_without_a_newest_mark_writes_no_new_prefix_and_reads_what_is_held(
    sizes: list[int],
) -> None:
    """Over random step sizes: a request that leaves its newest mark off marks in its
    conversation only prefixes earlier requests marked, and when the previous request's
    newest prefix is still part of it, a marker sits at or after that block (it is read)."""
    engine = _engine()
    marked: set[str] = set()
    previous_newest: str | None = None
    for i, size in enumerate(sizes):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(size, f"r{i}x"))
        req, _payload = engine.request("anthropic", "claude-sonnet-4-6")
        hashes = [b.prefix_hash for b in req.blocks]
        if "newest" not in _slots(req):
            in_messages = [m for m in req.breakpoints if req.blocks[m.index].level == "messages"]
            assert all(hashes[m.index] in marked for m in in_messages)
            if previous_newest in hashes:
                at = hashes.index(previous_newest)
                assert any(m.index >= at for m in req.breakpoints)
        marked.update(hashes[m.index] for m in req.breakpoints)
        newest = [m for m in req.breakpoints if m.slot == "newest"]
        previous_newest = hashes[newest[0].index] if newest else previous_newest


# ----- the step log --------------------------------------------------------------------------
def test_a_step_runs_from_one_reply_to_the_next_and_counts_the_other_regions_growth() -> None:
    log = StepLog().appended(40, reply=False, others=100)  # the task: no step yet
    assert log.samples(100) == ()
    log = log.appended(10, reply=True, others=100)
    log = log.appended(3000, reply=False, others=2600)  # a result; an output parked beside it
    assert log.samples(2600) == ((3010, 2500),)
    log = log.appended(12, reply=True, others=2600)
    assert log.done == ((3010, 2500),) and log.samples(2600) == ((3010, 2500), (12, 0))


@pytest.mark.parametrize(
    "saved",
    [None, "steps", {"done": [[1, 2, 3]]}, {"done": [[1, True]]}, {"done": "x"}, [[1, 2]]],
)
def test_a_malformed_saved_log_loads_empty(saved: Any) -> None:
    assert StepLog.from_extra(saved) == StepLog()


@settings(max_examples=EXAMPLES * 5, deadline=None)
@given(
    writes=st.lists(
        st.tuples(st.integers(0, 20_000), st.booleans(), st.integers(0, 40_000)), max_size=80
    )
)
def test_the_step_log_is_bounded_and_saves_as_it_was(writes: list[tuple[int, bool, int]]) -> None:
    log = StepLog()
    for tokens, reply, others in writes:
        log = log.appended(tokens, reply=reply, others=others)
    assert len(log.done) <= STEP_HISTORY
    assert len(log.samples(0)) == len(log.done) + log.started
    extra = log.to_extra()
    assert StepLog.from_extra(extra) == log
    assert (extra is None) == (not writes or not any(reply for _t, reply, _o in writes))


class _ForkingStub(StubSummarizer):
    """A summarizer with a ``fork`` method, as ``ForkSummarizer`` has: on the agent's own
    model a compaction forks the agent's last request and reads that request's prefix."""

    def fork(self, payload: dict[str, Any]) -> str:
        return " ".join(["summary"] * self.size)


def test_a_summarizer_that_forks_the_last_request_keeps_every_newest_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fork reads the newest prefix when the conversation compacts, so that write is read
    after all (tests/test_runtime_fork_summarizer.py: each fork reads at least 90% from the
    cache)."""
    engine = _engine()
    engine.summarizer = _ForkingStub(size=60)  # the engine prices (and reads) it anew
    conv: Any = engine.window.region("conversation")
    assert conv.summary_reads_request
    for i in range(30):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(4000, f"r{i}x"))
        req, _payload = engine.request("anthropic", "claude-sonnet-4-6")
        assert "newest" in _slots(req)
    assert conv.rewrite_odds() is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_retry_after_usage_moved_the_calibration_renders_the_same_bytes(seed: int) -> None:
    """The odds move with the calibration (the room an elastic conversation has, the trigger's
    outside tokens), but a request laid out again with nothing changed (the same fingerprint)
    uses the odds it had: "same state, same bytes" (the review's case: seed 0, step 8 went
    from a spare to a newest marker)."""
    rng = random.Random(seed)
    engine = _engine()
    base = rng.randint(2000, 9000)
    compared = 0
    for i in range(20):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        size = max(50, int(rng.gauss(base, base * 0.3)))
        engine.add_tool_result(f"c{i}", words(size, f"r{i}x"))
        _req, first = engine.request("anthropic", "claude-sonnet-4-6")
        fingerprint, estimate = engine.state.layout_fingerprint, engine.state.last_estimate
        ratio = 1.25 if i % 2 else 0.95
        engine.observe({"input_tokens": int(estimate * ratio), "output_tokens": 10})
        _again, second = engine.request("anthropic", "claude-sonnet-4-6")
        if engine.state.layout_fingerprint == fingerprint:
            compared += 1
            assert second == first
    assert compared > 0


def test_the_newest_mark_is_left_off_exactly_below_the_break_even_odds() -> None:
    """``Job.newest_unread``: the odds that the next request reads the newest prefix
    (``1 - rewrite_odds``) against the marker's ``mark_odds`` (0.25 / 1.15 for Anthropic's
    5-minute marker)."""
    from regio.layout.plan import Job
    from regio.providers import economics_for

    odds = economics_for("anthropic", "claude-sonnet-4-6").odds_for("5m")
    assert odds == pytest.approx(0.25 / 1.15)

    def unread(rewrite: float | None, mark: float = odds) -> bool:
        fields = {a.name: None for a in Job.__attrs_attrs__}
        return Job(**{**fields, "mark_odds": mark, "rewrite_odds": rewrite}).newest_unread

    assert unread(1 - odds + 0.01) and not unread(1 - odds - 0.01)
    assert not unread(None) and not unread(1.0, mark=0.0)  # no odds; no write fee


def _parking_engine() -> Any:
    """The 32k engine of :func:`_engine` with a ``tool_output`` region beside the
    conversation (as the coding example parks large outputs there)."""
    engine = make_engine(
        [
            Pinned(name="system", budget=3000, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=2000),
            Temporary(name="tool_output", budget=9000),
            SlidingWindow(name="conversation", budget="50%", eviction=Compact(target=2000)),
        ],
        max_tokens=32_000,
        summarizer=StubSummarizer(size=60),
    )
    engine.write("system", words(2500, "sys"))
    engine.add_user("fix the bug")
    return engine


def test_an_output_parked_beside_the_conversation_counts_against_its_room() -> None:
    """Each step records how much the other regions grew (a parked output), and an elastic
    conversation's odds count it against the room they leave: the same conversation steps
    with outputs parked beside them give higher odds."""
    parked, plain = _parking_engine(), _parking_engine()
    higher = 0
    for i in range(14):
        for engine, park in ((parked, True), (plain, False)):
            engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
            if park:
                engine.write("tool_output", words(3000, f"p{i}x"), key=None)
            engine.add_tool_result(f"c{i}", words(1500, f"r{i}x"))
        odds = [e.window.region("conversation").rewrite_odds() for e in (parked, plain)]
        if odds[0] is not None:
            assert odds[1] is not None and odds[0] >= odds[1]
            higher += odds[0] > odds[1]
        for engine in (parked, plain):
            engine.request("anthropic", "claude-sonnet-4-6")
    done: Any = parked.window.region("conversation")
    assert any(others >= 3000 for _tokens, others in done.steps.done)
    assert higher > 0


def test_the_bench_stand_in_for_a_forking_summarizer_counts_as_one() -> None:
    """The bench bills its offline summarizer as the fork it stands for (``forks``), so the
    engine treats it as one; a summarizer naming another model never forks."""
    from regio.bench.billing import BilledExtractive
    from regio.compaction._forking import forks_last_request

    assert forks_last_request(_ForkingStub()) and not forks_last_request(StubSummarizer())
    assert forks_last_request(BilledExtractive(forks=True))
    assert not forks_last_request(BilledExtractive())
    engine = _engine()
    engine.summarizer = BilledExtractive(forks=True)
    assert engine.window.region("conversation").summary_reads_request  # type: ignore[attr-defined]
    other = BilledExtractive(forks=True)
    other.model, other.api = "claude-haiku-4-5", "anthropic"
    engine.summarizer = other
    assert not engine.window.region("conversation").summary_reads_request  # type: ignore[attr-defined]


def test_without_a_write_fee_the_odds_are_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenAI's cache has no write fee: a marker always pays, so the engine does not weigh the
    odds at all (nothing on the request's path for it)."""
    engine = _engine()
    for i in range(12):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(4000, f"r{i}x"))
        if i == 10:

            def refuse(self: Any) -> float | None:
                raise AssertionError("rewrite odds weighed for a cache without a write fee")

            monkeypatch.setattr(SlidingWindow, "rewrite_odds", refuse)
        req, _payload = engine.request("openai", "gpt-5")
        assert req.state.rewrite_odds is None
