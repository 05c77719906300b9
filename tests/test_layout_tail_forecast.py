"""A stale tail copy leaves as soon as its rent until the conversation's next rewrite would
cost more than the rewrite that drops it now (regio.layout.tail.forecast_due,
regio.policies.rewriteodds.rewrite_horizon, docs/layout.md "Garbage collection")."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, common_prefix_tokens, make_window, say
from regio.layout import assemble
from regio.layout.assemble import DEFAULT_CHUNK_TOKENS, DEFAULT_SETTLE_SHARE
from regio.layout.model import TailCopy
from regio.layout.plan import Job, note_tokens, plan_regions
from regio.layout.renderlog import RenderLog
from regio.layout.strategy_registry import strategy_for
from regio.layout.tail import collection_rewrites, forecast_due, stale_tokens
from regio.policies.rewriteodds import MIN_STEPS, rewrite_horizon
from regio.providers import economics_for

ANTHROPIC = economics_for("anthropic", "claude-sonnet-4-5")


def _copy(region: str, tokens: int, anchor: str | None, digest: str) -> TailCopy:
    return TailCopy(region, digest, "x", tokens, 0, anchor, 1)


def _entries(*tokens: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(id=f"e{i}", tokens=t) for i, t in enumerate(tokens)]


# -- the horizon ----------------------------------------------------------------------------


def test_the_horizon_is_the_steps_to_the_trigger_at_the_mean_step() -> None:
    # 800 tokens to the trigger at 100 a step: 8 requests; 60 requests so far allow 20
    assert rewrite_horizon([100] * 8, 1000, 200, 60) == 8.0
    assert rewrite_horizon([50, 150] * 4, 1000, 200, 60) == 8.0


def test_the_horizon_is_at_most_a_third_of_the_requests_so_far() -> None:
    # a session that has made 9 requests is held to 3 more (three chances in four)
    assert rewrite_horizon([100] * 8, 10_000, 200, 9) == 3.0


def test_a_conversation_at_its_trigger_has_no_horizon_left() -> None:
    assert rewrite_horizon([100] * 8, 1000, 1500, 60) == 0.0


def test_too_few_steps_or_no_growth_give_no_horizon() -> None:
    assert rewrite_horizon([100] * (MIN_STEPS - 1), 1000, 0, 60) is None
    assert rewrite_horizon([0] * MIN_STEPS, 1000, 0, 60) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 5000), min_size=MIN_STEPS, max_size=32),
    st.integers(1, 200_000),
    st.integers(0, 200_000),
    st.integers(0, 2000),
)
def test_the_horizon_never_passes_the_trigger_nor_the_copernican_share(
    steps: list[int], trigger: int, used: int, replies: int
) -> None:
    h = rewrite_horizon(steps, trigger, used, replies)
    if sum(steps) == 0:
        assert h is None
        return
    assert h is not None and h >= 0
    mean = sum(steps) / len(steps)
    assert h <= max(0.0, (trigger - used) / mean) + 1e-9
    assert h <= replies / 3 + 1e-9


# -- the rule -------------------------------------------------------------------------------


def _old_and_new() -> tuple[list[TailCopy], list[TailCopy], list[SimpleNamespace]]:
    """A 1,000-token copy of ``a`` frozen after e1, superseded by the tail's new copy; a current
    200-token copy of ``b`` frozen after e2; e3 came with this request."""
    frozen = [_copy("a", 1000, "e1", "a1"), _copy("b", 200, "e2", "b1")]
    tail = [_copy("a", 1000, "e3", "a2")]
    return frozen, tail, _entries(100, 100, 100, 100)


SENT = "e2"  # the newest entry the last request carried


def test_a_collection_rewrites_what_the_last_request_sent_after_the_first_frozen_copy() -> None:
    frozen, tail, conv = _old_and_new()
    assert stale_tokens(frozen, tail) == 1000
    # e2 (100) and b's current copy (200): e3 and a's new copy are written either way, and the
    # stale copy leaves
    assert collection_rewrites(frozen, tail, conv, through=SENT) == 300
    # not knowing what was sent, every entry after the anchor counts (errs toward keeping)
    assert collection_rewrites(frozen, tail, conv) == 400
    # copies that open the conversation (no anchor): every sent entry follows them
    opening = [_copy("a", 1000, None, "a1"), *frozen[1:]]
    assert collection_rewrites(opening, tail, conv, through=SENT) == 500


def test_when_the_last_request_added_nothing_after_the_copy_only_the_copies_count() -> None:
    # the previous request's newest entry is the stale copy's own anchor: e2 and e3 came now
    frozen, tail, conv = [_copy("a", 1000, "e1", "a1")], [_copy("a", 1000, "e3", "a2")], None
    conv = _entries(100, 100, 100, 100)
    assert collection_rewrites(frozen, tail, conv, through="e1") == 0
    assert collection_rewrites(frozen, tail, conv, through=None) == 200  # unknown: all count


def test_notes_placed_after_the_first_frozen_copy_before_this_request_are_rewritten() -> None:
    frozen, tail, conv = _old_and_new()
    note = SimpleNamespace
    notes = [
        (note(anchor="e2", placed=1), 50),  # after it: rewritten
        (note(anchor="e1", placed=1), 7),  # before it (placed first)
        (note(anchor="e1", placed=2), 11),  # after it, same anchor
        (note(anchor="e3", placed=3), 900),  # this request's: new
        (note(anchor="e0", placed=1), 13),  # before the copy
    ]
    got = collection_rewrites(frozen, tail, conv, through=SENT, notes=notes, placed=3)
    assert got == 300 + 50 + 11


def test_the_rent_to_the_horizon_is_weighed_against_the_rewrite() -> None:
    frozen, tail, conv = _old_and_new()
    # 1,000 stale tokens x H against 11.5 x 300 = 3,450: due from H = 3.45 on
    assert not forecast_due(frozen, tail, conv, 3.44, 11.5, through=SENT)
    assert forecast_due(frozen, tail, conv, 3.45, 11.5, through=SENT)


def test_without_stale_copies_or_horizon_nothing_is_collected() -> None:
    frozen, _tail, conv = _old_and_new()
    assert not forecast_due(frozen, [], conv, 1e9, 11.5, through=SENT)  # every copy is current
    frozen, tail, conv = _old_and_new()
    assert not forecast_due(frozen, tail, conv, 0.0, 11.5, through=SENT)


def _options(log: RenderLog) -> dict:
    """The :class:`regio.layout.plan.Job` options ``assemble`` builds by default."""
    return {
        "ttl": "5m",
        "stable_ttl": None,
        "min_tokens": ANTHROPIC.min_cache_tokens,
        "economics": ANTHROPIC,
        "chunk_tokens": DEFAULT_CHUNK_TOKENS,
        "settle_share": DEFAULT_SETTLE_SHARE,
        "log": log,
    }


def _replay(steps: list[tuple[int, bool, bool]], at: int) -> tuple:
    """The window after ``steps[: at + 1]`` were admitted, with the state, the last request and
    the render log of the requests before ``at``."""
    w = make_window()
    w.write("scratch", "draft plan " * 300, tokens=800)
    log, state, prev = RenderLog(), None, None
    for n, (words_, change, note) in enumerate(steps[: at + 1]):
        if words_:  # 0: a request that adds no conversation entry (only regions change)
            say(w, "user", f"question {n} " * words_)
        if change:
            w.clear("scratch")
            w.write("scratch", f"plan {n} " * 300, tokens=800)
        if note:
            w.write("notes", f"note {n} " * 40, tokens=80)
        if n < at:
            req = assemble(w, "regio", tools=TOOLS, state=state, economics=ANTHROPIC, log=log)
            state, prev = req.state, req
            if words_:
                say(w, "assistant", f"answer {n} " * 20)
    return w, state, prev, log


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 400), st.booleans(), st.booleans()), min_size=4, max_size=10)
)
# a copy emitted and frozen by requests that added no entry, then replaced
@example([(50, False, False), (0, True, False), (0, False, False), (300, True, False)])
@example([(50, False, True), (0, True, True), (0, False, False), (300, True, True)])
# no entry at all until the copy is replaced (the CI's find)
@example([(0, False, False), (0, False, False), (0, False, False), (1, True, False)])
def test_the_rewrite_counted_is_what_a_collection_loses_of_the_last_requests_prefix(
    steps: list[tuple[int, bool, bool]],
) -> None:
    """Laid out twice from the same state, once keeping the stale copies and once collecting
    them, the collection reads back less of the last request's prefix by exactly the stale
    tokens and :func:`collection_rewrites`."""
    checked = 0
    for at in range(1, len(steps)):
        w, state, prev, log = _replay(steps, at)
        keep = assemble(w, "regio", tools=TOOLS, state=state, economics=ANTHROPIC, log=log)
        stale = stale_tokens(keep.state.frozen, keep.state.tail)
        if not stale or any(e.kind == "tail_settled" for e in keep.events):
            continue
        w, state, prev, log = _replay(steps, at)
        collect = assemble(
            w, "regio", tools=TOOLS, state=state, economics=ANTHROPIC, log=log, rewrite_horizon=1e12
        )
        assert [e.reason for e in collect.events if e.kind == "tail_settled"] == ["forecast"]
        lost = common_prefix_tokens(prev, keep) - common_prefix_tokens(prev, collect)
        conv = w.region("history").entries
        job = Job.build(w, strategy_for("regio"), state=state, **_options(log))
        notes = [(n, note_tokens(job, n, e)[1]) for n, e in plan_regions(job).notes]
        placed = keep.state.requests
        again = collection_rewrites(
            keep.state.frozen,
            keep.state.tail,
            conv,
            through=prev.state.newest_entry,
            notes=notes,
            placed=placed,
        )
        assert lost == stale + again
        checked += 1
    assume(checked)


# -- in the layout --------------------------------------------------------------------------


def _session(horizon: float | None, turns: int = 6, words: int = 1) -> list:
    """A large rewritten region changes once early; the conversation then grows by messages of
    ``words`` words."""
    w = make_window()
    w.write("scratch", "draft plan " * 400, tokens=1100)
    state, requests = None, []
    for n in range(turns):
        say(w, "user", f"question {n} " * words)
        if n == 2:
            w.clear("scratch")
            w.write("scratch", "final plan " * 400, tokens=1100)
        req = assemble(
            w, "regio", tools=TOOLS, state=state, economics=ANTHROPIC, rewrite_horizon=horizon
        )
        requests.append(req)
        state = req.state
        say(w, "assistant", f"answer {n} " * words)
    return requests


def _settled(requests: list) -> list[tuple[int, str]]:
    return [
        (i, e.reason) for i, r in enumerate(requests) for e in r.events if e.kind == "tail_settled"
    ]


def test_a_stale_copy_leaves_when_the_conversation_has_long_to_go() -> None:
    requests = _session(horizon=200.0)
    assert _settled(requests) == [(2, "forecast")]  # the request that made it stale
    last = requests[-1].state
    assert [c.region for c in (*last.frozen, *last.tail)].count("scratch") == 1
    assert last.rewrite_horizon == 200.0


def test_a_stale_copy_behind_little_leaves_even_when_the_rewrite_is_near() -> None:
    # a few tokens follow the stale copy: collecting costs less than one request's rent
    assert _settled(_session(horizon=1.0)) == [(2, "forecast")]


@pytest.mark.parametrize("horizon", [None, 1.0, 20.0])
def test_a_stale_copy_stays_when_a_rewrite_is_near_or_not_known(horizon: float | None) -> None:
    # ~3,000 tokens follow the 1,100-token stale copy: 11.5 x 3,000 is more than 20 requests
    # of rent, and the ski-rental rule needs more than six requests to reach it
    requests = _session(horizon=horizon, words=1000)
    assert _settled(requests) == []
    assert stale_tokens(requests[-1].state.frozen, requests[-1].state.tail) > 0


# -- through the engine ---------------------------------------------------------------------


def test_the_engine_lays_each_request_out_with_its_conversations_horizon() -> None:
    from regio.content import ToolUse
    from runtime_stubs import relieving_engine, words

    engine = relieving_engine(64_000)
    seen = []
    for i in range(MIN_STEPS + 3):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(300, f"r{i}x"))
        engine.request("anthropic", "claude-sonnet-4-6")
        seen.append(engine.state.layout_state.rewrite_horizon)
    # each assistant message closes the step before it: i steps are complete at request i, so
    # there is no horizon before MIN_STEPS of them; then, with ~400-token steps and a trigger
    # tens of thousands of tokens away, it is the Copernican cap: a third of the i + 1 replies
    assert seen[:MIN_STEPS] == [None] * MIN_STEPS
    assert seen[MIN_STEPS:] == [pytest.approx((i + 1) / 3) for i in range(MIN_STEPS, len(seen))]


def test_a_retry_lays_out_with_the_horizon_it_had(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same state, same bytes: a request laid out again with nothing changed uses the stored
    horizon, whatever the conversation would say now (here a stale copy stays at the first
    layout; a recomputed horizon would collect it on the retry)."""
    from regio.content import ToolUse
    from regio.policies.eviction import Compact
    from regio.regions import CompactHistory, Pinned, SlidingWindow, Temporary
    from runtime_stubs import StubSummarizer, make_engine, words

    engine = make_engine(
        [
            Pinned(name="system", budget=4000, volatility="stable"),
            Temporary(name="scratch", budget=6000, volatility="rewritten"),
            CompactHistory(name="history", source="conversation", budget=2000),
            SlidingWindow(name="conversation", budget=60_000, eviction=Compact(target=2000)),
        ],
        max_tokens=160_000,
        summarizer=StubSummarizer(size=60),
        clock=lambda: 0.0,
    )
    engine.write("system", words(2500, "sys"))
    engine.add_user("go")
    monkeypatch.setattr(SlidingWindow, "rewrite_horizon", lambda self: 0.0)
    for i in range(6):
        if i == 1:
            engine.write("scratch", words(3000, "draft"))
        if i == 4:
            engine.clear("scratch")
            engine.write("scratch", words(3000, "final"))
        engine.add_assistant(f"s{i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(200, f"r{i}"))
        req, first = engine.request("anthropic", "claude-sonnet-4-6")
    state = engine.state.layout_state
    assert stale_tokens(state.frozen, state.tail) > 0 and state.rewrite_horizon == 0.0
    assert not [e for e in req.events if e.kind == "tail_settled"]
    monkeypatch.setattr(SlidingWindow, "rewrite_horizon", lambda self: 1e9)
    again, second = engine.request("anthropic", "claude-sonnet-4-6")
    assert engine.state.layout_state.rewrite_horizon == 0.0
    assert not [e for e in again.events if e.kind == "tail_settled"]
    assert second == first
    engine.add_assistant("more", [ToolUse("cx", "bash", {"i": -1})])
    engine.add_tool_result("cx", words(200, "rx"))
    after, _ = engine.request("anthropic", "claude-sonnet-4-6")  # something changed: asked again
    assert engine.state.layout_state.rewrite_horizon == 1e9
    assert [e.reason for e in after.events if e.kind == "tail_settled"] == ["forecast"]


def test_the_newest_entry_a_request_carried_is_never_a_progress_report() -> None:
    from regio.content import Entry, Text, ToolResult
    from regio.layout.tail import newest_settled_entry

    def entry(i: str, *blocks: object) -> Entry:
        return Entry(
            id=i, role="tool" if isinstance(blocks[0], ToolResult) else "user", blocks=blocks
        )  # type: ignore[arg-type]

    said = entry("e0", Text("look"))
    final = entry("e1", ToolResult("c1", "done"))
    report = entry("e2", ToolResult("c2", "30% done", final=False))
    assert newest_settled_entry([said, final, report]) == "e1"
    assert newest_settled_entry([said, report]) == "e0"
    assert newest_settled_entry([report]) == ""
    assert newest_settled_entry([]) == ""
