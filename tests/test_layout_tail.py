"""The freezing tail of the regio layout: rewritten regions freeze into the conversation when
they stop changing, changed values go to the tail again, stale copies are only dropped when the
prefix is rewritten anyway or past the settle share (docs/layout.md, regio.layout.tail)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, answer, call, make_window, say
from regio.cache.types import CacheReport
from regio.content import content_hash
from regio.layout import (
    LayoutState,
    assemble,
    classify,
    count_cache_markers,
    render_anthropic,
    render_openai_chat,
    to_cache_request,
)
from regio.providers import cache_model_for, economics_for
from regio.regions import Keyed, Pinned, SlidingWindow, Window

PROP = settings(max_examples=50, deadline=None)
MODEL = "claude-sonnet-4-5"


def _set_scratch(w, text: str) -> None:
    w.clear("scratch")
    w.write("scratch", text, tokens=max(1, len(text) // 4))


def _frozen(req):
    return [b for b in req.blocks if b.source.startswith("frozen:")]


def test_an_unchanged_rewritten_region_freezes_where_it_was_and_leaves_the_tail():
    w = make_window()
    say(w, "user", "hello")
    r1 = assemble(w, "regio", tools=TOOLS)
    (tail,) = r1.level("tail")
    call(w, "a1", "c1")
    answer(w, "c1")
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    assert r2.level("tail") == ()
    (frozen,) = _frozen(r2)
    # same bytes at the same place: the prefix through the old tail block is unchanged
    assert frozen.digest == tail.digest and frozen.prefix_hash == tail.prefix_hash
    assert frozen.region == "scratch" and frozen.level == "messages"
    assert classify(r1, r2).kind == "extension"


def test_a_frozen_region_that_changes_keeps_its_stale_copy_and_the_new_value_supersedes_it():
    w = make_window()
    say(w, "user", "hello")
    r1 = assemble(w, "regio", tools=TOOLS)
    say(w, "assistant", "ok")
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    say(w, "user", "next")
    _set_scratch(w, "status: busy")
    r3 = assemble(w, "regio", tools=TOOLS, state=r2.state)
    old = _frozen(r2)
    assert [b.prefix_hash for b in _frozen(r3)] == [b.prefix_hash for b in old]
    (new,) = r3.level("tail")
    assert new.block.text.startswith(
        "[context region 'scratch' \u2014 as of turn 2; supersedes every earlier copy of "
        "this region]\n## scratch\nstatus: busy"
    )
    body2 = [b.prefix_hash for b in r2.blocks if b.level != "tail"]
    assert [b.prefix_hash for b in r3.blocks[: len(body2)]] == body2


def test_a_region_that_changes_on_every_request_never_freezes():
    w = make_window()
    state = None
    for n in range(6):
        say(w, "user", f"q{n}")
        _set_scratch(w, f"step {n}")
        req = assemble(w, "regio", tools=TOOLS, state=state)
        state = req.state
        assert _frozen(req) == [] and len(req.level("tail")) == 1
        say(w, "assistant", f"a{n}")
    assert state.frozen == ()


def test_a_keyed_region_that_only_gains_keys_sends_just_the_new_entries():
    w = Window(
        regions=[
            Pinned(name="system", budget=20_000, volatility="stable"),
            Keyed(name="customer", budget=5_000, volatility="rewritten"),
            SlidingWindow(name="history", budget=100_000),
        ],
        max_tokens=200_000,
    )
    w.write("system", "S " * 3000, tokens=1500)
    w.write("customer", "name: Ada " * 40, key="user", tokens=100)
    say(w, "user", "hi")
    r1 = assemble(w, "regio")
    say(w, "assistant", "looking up")
    r2 = assemble(w, "regio", state=r1.state)
    w.write("customer", "booking ABC " * 20, key="reservation:ABC", tokens=60)
    say(w, "user", "and my booking?")
    r3 = assemble(w, "regio", state=r2.state)
    (delta,) = r3.level("tail")
    assert delta.block.text.splitlines()[0].endswith("adds to the earlier copies of this region]")
    assert "booking ABC" in delta.block.text and "name: Ada" not in delta.block.text
    assert r3.state.tail[0].delta
    assert delta.tokens < 100  # only the new entry (60) and the header


def test_stale_copies_past_the_settle_share_are_dropped_with_a_tail_settled_event():
    w = make_window(max_tokens=40_000)
    state, events = None, []
    for n in range(8):
        say(w, "user", f"q{n}")
        if n % 2 == 0:
            _set_scratch(w, f"report {n} " * 300)
        req = assemble(w, "regio", tools=TOOLS, state=state, settle_share=0.05)
        state = req.state
        events.extend(e for e in req.events if e.kind == "tail_settled")
        say(w, "assistant", f"a{n}")
    assert events and all(e.reason == "share" for e in events)
    assert all(e.stale_tokens > 0.05 * 40_000 for e in events)
    # after a collection the current value is the only copy again: no superseding header
    last = assemble(w, "regio", tools=TOOLS, state=state)
    copies = [c for c in (*last.state.frozen, *last.state.tail) if c.region == "scratch"]
    assert copies and not copies[-1].text.startswith("[context region")


ops_st = st.lists(
    st.tuples(st.sampled_from(["say", "tool", "scratch", "same"]), st.integers(0, 5)),
    min_size=2,
    max_size=14,
)


@PROP
@given(ops_st)
def test_every_request_extends_the_previous_one_unless_a_settle_event_says_why(ops):
    """The acceptance property with its one precise exception: bytes before the previous
    request's tail never change, except in a request that carries a ``tail_settled`` or
    ``notes_settled`` event (the prefix is rewritten anyway, or stale copies passed the
    share)."""
    w = make_window(max_tokens=40_000)
    say(w, "user", "start")
    prev = assemble(w, "regio", tools=TOOLS, min_cache_tokens=1)
    for n, (op, k) in enumerate(ops):
        if op == "say":
            say(w, "user" if n % 2 else "assistant", f"m{n} " * (k + 1))
        elif op == "tool":
            call(w, f"a{n}", f"c{n}")
            answer(w, f"c{n}")
        elif op == "scratch":
            _set_scratch(w, f"status {k} " * (40 * k + 1))
        cur = assemble(w, "regio", tools=TOOLS, state=prev.state, min_cache_tokens=1)
        settled = [e for e in cur.events if e.kind in ("tail_settled", "notes_settled")]
        if not settled:
            assert classify(prev, cur).kind in ("identical", "extension")
        a = render_anthropic(cur, model="m")
        assert count_cache_markers(a) <= 4
        render_openai_chat(cur, model="m")
        # the current value of scratch is shown exactly once as the newest copy
        copies = [c for c in (*cur.state.frozen, *cur.state.tail) if c.region == "scratch"]
        assert copies[-1].digest == content_hash(w.region("scratch").render_text())
        prev = cur
    assert LayoutState.from_json(prev.state.to_json()) == prev.state


def test_a_frozen_copy_renders_as_the_same_openai_user_message_it_was_as_the_tail():
    w = make_window()
    say(w, "user", "hello " * 40)
    r1 = assemble(w, "regio", tools=TOOLS)
    say(w, "assistant", "hi")
    say(w, "user", "more")
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    m1 = render_openai_chat(r1, model="m")["messages"]
    m2 = render_openai_chat(r2, model="m")["messages"]
    assert m2[: len(m1)] == m1  # the tail message is now frozen in place
    a1 = render_anthropic(r1, model="m")["messages"]
    a2 = render_anthropic(r2, model="m")["messages"]
    strip = [{**c, "cache_control": None} for c in a1[-1]["content"]]
    assert [{**c, "cache_control": None} for c in a2[0]["content"][: len(strip)]] == strip


def _run(strategy: str, turns: int = 24) -> CacheReport:
    """A tool loop where a 600-token rewritten region changes every 8 turns."""
    sim = cache_model_for(f"anthropic:{MODEL}")
    w = make_window()
    state, outs = None, []
    for n in range(turns):
        say(w, "user", f"q{n} " * 60)
        call(w, f"a{n}", f"c{n}")
        answer(w, f"c{n}")
        if n % 8 == 0:
            _set_scratch(w, f"customer record v{n} " * 200)
        req = assemble(
            w, strategy, tools=TOOLS, state=state, economics=economics_for("anthropic", MODEL)
        )
        state = req.state
        assert len(req.breakpoints) <= 4
        outs.append(sim.process(to_cache_request(req, t_start=n * 20.0, id=f"r{n:03d}")))
        say(w, "assistant", f"ok {n}")
    return CacheReport.from_outcomes(MODEL, outs)


def test_with_the_anthropic_cache_model_a_long_lived_rewritten_region_costs_less_than_kind():
    regio, kind = _run("regio"), _run("kind")
    assert regio.input_units < kind.input_units
    assert regio.hit_rate > 0.9
