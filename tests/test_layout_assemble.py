"""assemble(): strategies, determinism, prefix stability, settling, warnings."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, answer, call, make_window, play, say, turn_st
from regio.layout import (
    LayoutError,
    LayoutState,
    ToolSpec,
    assemble,
    check_anthropic,
    check_openai_chat,
    classify,
    count_cache_markers,
    render_anthropic,
    render_openai_chat,
    render_openai_responses,
)

PROP = settings(max_examples=60, deadline=None)


def _bytes(req):
    return msgspec.json.encode(
        [render_anthropic(req, model="m"), render_openai_chat(req, model="m")]
    )


@PROP
@given(
    st.lists(turn_st, min_size=1, max_size=8),
    st.sampled_from(["naive", "kind", "volatility", "regio"]),
)
def test_the_same_window_renders_to_the_same_bytes(turns, strategy):
    w = make_window()
    play(w, turns)
    a = assemble(w, strategy, tools=TOOLS)
    b = assemble(w, strategy, tools=TOOLS)
    assert _bytes(a) == _bytes(b)
    assert a.state == b.state


@PROP
@given(st.lists(turn_st, min_size=1, max_size=6), st.lists(turn_st, min_size=1, max_size=6))
def test_regio_second_request_extends_the_first_when_only_the_conversation_grows(first, more):
    w = make_window()
    play(w, [(t, n, True, k) for t, n, _, k in first])
    r1 = assemble(w, "regio", tools=TOOLS)
    play(w, more, start=len(first))
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    s = classify(r1, r2)
    assert s.kind == "extension", s
    body = [b for b in r1.blocks if b.level != "tail"]
    assert [b.prefix_hash for b in r2.blocks[: len(body)]] == [b.prefix_hash for b in body]


@PROP
@given(st.lists(turn_st, min_size=1, max_size=6), st.text(min_size=1, max_size=40))
def test_a_rewritten_region_change_never_changes_bytes_before_the_tail(turns, status):
    w = make_window()
    play(w, turns)
    r1 = assemble(w, "regio", tools=TOOLS)
    w.clear("scratch")
    w.write("scratch", f"status: {status}!", tokens=5)
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    head1 = [b for b in r1.blocks if b.level != "tail"]
    head2 = [b for b in r2.blocks if b.level != "tail"]
    assert [b.prefix_hash for b in head1] == [b.prefix_hash for b in head2]
    assert r1.level("tail") != r2.level("tail")


@PROP
@given(
    st.lists(turn_st, min_size=0, max_size=10),
    st.sampled_from(["naive", "kind", "volatility", "regio"]),
    st.integers(min_value=0, max_value=3),
)
def test_no_rendered_request_has_more_than_four_markers_and_w_holds(turns, strategy, steps):
    w = make_window()
    state = None
    for k in range(steps + 1):
        play(w, turns, start=100 * k)
        req = assemble(w, strategy, tools=TOOLS, state=state, min_cache_tokens=1)
        state = req.state
        a = render_anthropic(req, model="m")
        assert count_cache_markers(a) <= 4
        assert len(req.breakpoints) <= 4
        assert check_anthropic(a) == []
        assert check_openai_chat(render_openai_chat(req, model="m")) == []
        render_openai_responses(req, model="m")


def test_regio_puts_stable_first_grows_chunked_and_rewritten_in_the_tail():
    w = make_window()
    w.write("notes", "fact one", tokens=3)
    say(w, "user", "hello")
    req = assemble(w, "regio", tools=TOOLS)
    levels = [b.level for b in req.blocks]
    assert levels == ["tools", "tools", "system", "system", "messages", "tail"]
    assert [b.source for b in req.level("system")] == ["stable:system", "grows:notes#0"]
    assert req.level("tail")[0].region == "scratch"
    payload = render_anthropic(req, model="m")
    last = payload["messages"][-1]
    assert last["content"][-1]["text"].startswith("## scratch")


def test_naive_puts_every_region_in_one_system_block_with_one_marker():
    w = make_window()
    say(w, "user", "hello")
    req = assemble(w, "naive", tools=TOOLS)
    system = req.level("system")
    assert len(system) == 1 and "## scratch" in system[0].block.text
    assert [m.slot for m in req.breakpoints] == ["system"]
    assert req.level("tail") == ()


def test_kind_orders_regions_by_kind_and_marks_system_and_last_message():
    w = make_window()
    w.write("notes", "fact", tokens=2)
    say(w, "user", "hello")
    req = assemble(w, "kind", tools=TOOLS, min_cache_tokens=1)
    assert [b.region for b in req.level("system")] == ["system", "notes", "scratch"]
    assert [m.slot for m in req.breakpoints] == ["system", "message"]


def test_volatility_marks_every_16th_message_block_and_none_after_a_system_change():
    w = make_window()
    for n in range(20):
        say(w, "user", f"q{n}")
        say(w, "assistant", f"a{n}")
    r1 = assemble(w, "volatility", tools=TOOLS, min_cache_tokens=1)
    slots = [m.slot for m in r1.breakpoints]
    assert slots.count("message") == 2
    msg = [k for k, b in enumerate(r1.blocks) if b.level == "messages"]
    assert {m.index for m in r1.breakpoints if m.slot == "message"} == {msg[15], msg[31]}
    w.clear("scratch")
    w.write("scratch", "status: busy", tokens=3)
    r2 = assemble(w, "volatility", tools=TOOLS, min_cache_tokens=1, state=r1.state)
    assert [m.slot for m in r2.breakpoints if m.slot == "message"] == []


def test_a_grows_write_travels_as_a_note_then_settles_when_the_first_message_changes():
    w = make_window()
    say(w, "user", "u0")
    say(w, "assistant", "a0")
    r1 = assemble(w, "regio", tools=TOOLS)
    w.write("notes", "the build uses make", tokens=6)
    say(w, "user", "u1")
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    assert classify(r1, r2).kind == "extension"
    shown = [
        b
        for b in r2.blocks
        if b.block is not None and "the build uses make" in getattr(b.block, "text", "")
    ]
    assert len(shown) == 1 and shown[0].level == "messages"
    assert r2.state.notes and r2.state.notes[0].region == "notes"
    w.release("history", oldest=2)  # eviction: the first message changes
    r3 = assemble(w, "regio", tools=TOOLS, state=r2.state)
    shown = [
        b
        for b in r3.blocks
        if b.block is not None and "the build uses make" in getattr(b.block, "text", "")
    ]
    assert len(shown) == 1 and shown[0].level == "system"
    assert [e.reason for e in r3.events if e.kind == "notes_settled"] == ["prefix_rewritten"]
    assert r3.state.notes == ()


def test_notes_settle_when_they_pass_the_declared_share_of_the_window():
    w = make_window(max_tokens=200_000)
    say(w, "user", "u0")
    r1 = assemble(w, "regio", settle_share=0.01)
    w.write("notes", "x" * 40, tokens=1500)
    r2 = assemble(w, "regio", state=r1.state, settle_share=0.01)
    assert r2.state.notes != ()
    w.write("notes", "y" * 40, tokens=1500)
    r3 = assemble(w, "regio", state=r2.state, settle_share=0.01)
    assert r3.state.notes == ()
    assert [e.reason for e in r3.events if e.kind == "notes_settled"] == ["share"]


def test_a_closed_chunk_is_never_repacked():
    w = make_window()
    for n in range(6):
        w.write("notes", f"fact {n}", tokens=400)
    r1 = assemble(w, "volatility", chunk_tokens=1000)
    chunks1 = [b for b in r1.level("system") if b.region == "notes"]
    assert len(chunks1) == 3 and "(continued)" in chunks1[1].block.text
    w.write("notes", "fact 6", tokens=400)
    r2 = assemble(w, "volatility", chunk_tokens=1000, state=r1.state)
    chunks2 = [b for b in r2.level("system") if b.region == "notes"]
    assert [b.digest for b in chunks2[:3]] == [b.digest for b in chunks1]
    assert len(chunks2) == 4


def test_a_stable_region_that_changes_is_reported_once():
    w = make_window(system="v1 " * 600)
    r1 = assemble(w, "regio")
    w.clear("system")
    w.write("system", "v2 " * 600, tokens=600)
    r2 = assemble(w, "regio", state=r1.state)
    w.clear("system")
    w.write("system", "v3 " * 600, tokens=600)
    r3 = assemble(w, "regio", state=r2.state)
    assert [e.region for e in r2.events if e.kind == "stable_region_changed"] == ["system"]
    assert [e for e in r3.events if e.kind == "stable_region_changed"] == []


def test_a_breakpoint_whose_prefix_changes_every_request_is_reported_as_never_read():
    w = make_window()
    state = None
    seen = []
    for n in range(4):
        w.clear("scratch")
        w.write("scratch", f"clock {n}", tokens=3)
        say(w, "user", f"q{n}")
        req = assemble(w, "naive", state=state)
        state = req.state
        seen.extend(e for e in req.events if e.kind == "breakpoint_never_read")
    assert [(e.slot, e.requests) for e in seen] == [("system", 3)]


def test_the_spare_marker_lands_on_the_previous_newest_marker_when_it_falls_out_of_lookback():
    w = make_window()
    say(w, "user", "start")
    r1 = assemble(w, "regio", tools=TOOLS)
    for n in range(12):
        call(w, f"a{n}", f"c{n}")
        answer(w, f"c{n}")
    r2 = assemble(w, "regio", tools=TOOLS, state=r1.state)
    spare = [m for m in r2.breakpoints if m.slot == "spare"]
    assert len(spare) == 1
    # r1's newest surviving marker is the one on its tail: the unchanged scratch copy is
    # frozen after "start", so the spare reads it back
    on = r2.blocks[spare[0].index]
    assert on.source.startswith("frozen:") and on.region == "scratch"
    assert (("tail", on.prefix_hash)) in r1.state.marks
    assert len(r2.breakpoints) <= 4


def test_no_marker_is_placed_below_the_minimum_prefix():
    w = make_window(system="short")
    say(w, "user", "hi")
    req = assemble(w, "regio", min_cache_tokens=1024)
    assert req.breakpoints == ()
    req = assemble(w, "regio", min_cache_tokens=1)
    assert req.breakpoints != ()


def test_one_hour_marks_precede_five_minute_marks():
    w = make_window()
    say(w, "user", "hi " * 2000)
    req = assemble(w, "regio", stable_ttl="1h", ttl="5m")
    ttls = [m.ttl for m in req.breakpoints]
    assert ttls == sorted(ttls, key=lambda t: t == "5m") and "1h" in ttls
    with pytest.raises(LayoutError, match="1h markers must precede"):
        assemble(w, "regio", stable_ttl="5m", ttl="1h")


def test_tools_keep_their_order_and_sorted_json_keys():
    w = make_window()
    a = ToolSpec("z", "", {"type": "object", "properties": {"b": {}, "a": {}}})
    b = ToolSpec("z", "", {"properties": {"a": {}, "b": {}}, "type": "object"})
    ra = assemble(w, "regio", tools=[a, TOOLS[0]])
    rb = assemble(w, "regio", tools=[b, TOOLS[0]])
    assert [x.tool.name for x in ra.level("tools")] == ["z", "read_file"]
    assert ra.level("tools")[0].digest == rb.level("tools")[0].digest
    with pytest.raises(LayoutError, match="given twice"):
        assemble(w, "regio", tools=[a, b])


def test_bad_input_gets_clear_errors():
    w = make_window()
    with pytest.raises(LayoutError, match="unknown layout strategy"):
        assemble(w, "fancy")
    r = assemble(w, "naive")
    with pytest.raises(LayoutError, match="keep one state per strategy"):
        assemble(w, "regio", state=r.state)


def test_the_state_round_trips_through_json():
    w = make_window()
    say(w, "user", "u0")
    r1 = assemble(w, "regio")
    w.write("notes", "n1", tokens=2)
    r2 = assemble(w, "regio", state=r1.state)
    loaded = LayoutState.from_json(r2.state.to_json())
    assert loaded == r2.state
    assert _bytes(assemble(w, "regio", state=loaded)) == _bytes(
        assemble(w, "regio", state=r2.state)
    )
