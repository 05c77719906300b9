"""Field cases about prompt-cache invalidation, rendered with BOTH renderers
(field-cases.md FC-27, FC-28 item 2, FC-29, FC-30)."""

from __future__ import annotations

import json

import attrs

from layout_support import TOOLS, history_window, make_window, raw_entry, say
from regio.content import Text, ToolResult, ToolUse
from regio.layout import (
    assemble,
    check_anthropic,
    check_openai_chat,
    classify,
    count_cache_markers,
    fork_for_summary,
    render_anthropic,
    render_openai_chat,
)
from regio.regions import Pinned, SlidingWindow, Temporary, Window


@attrs.define(eq=False, kw_only=True)
class ClockTemplate(Pinned):
    """A stable template that (wrongly) reads the clock directly."""

    clock: list = attrs.field(factory=lambda: [0.0])

    def render_text(self) -> str:
        return f"## system\nYou are an agent. Now: {self.clock[0]:.0f}s"


def _canon(x):
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def _unmarked(messages):
    """Messages without cache_control (the marker moves; the cache key is the content)."""
    return [
        {
            **m,
            "content": [{k: v for k, v in c.items() if k != "cache_control"} for c in m["content"]],
        }
        for m in messages
    ]


def test_fc_27_a_clock_in_a_rewritten_region_leaves_the_stable_prefix_byte_identical():
    w = Window(
        regions=[
            Pinned(name="system", budget=9000, volatility="stable"),
            Temporary(name="clock", budget=100, volatility="rewritten"),
            SlidingWindow(name="history", budget=9000),
        ],
        max_tokens=20000,
    )
    w.write("system", "You are an agent. " * 300, tokens=1200)
    reqs = []
    state = None
    for now in (1000, 1002):
        w.clear("clock")
        w.write("clock", f"time: {now}", tokens=3)
        say(w, "user", f"turn at {now}")
        r = assemble(w, "regio", tools=TOOLS, state=state)
        state = r.state
        reqs.append(r)
    an = [render_anthropic(r, model="m") for r in reqs]
    oa = [render_openai_chat(r, model="m") for r in reqs]
    assert _canon(an[0]["system"]) == _canon(an[1]["system"])
    assert _canon(an[0]["tools"]) == _canon(an[1]["tools"])
    assert oa[0]["messages"][0] == oa[1]["messages"][0]
    assert "time: 1000" not in _canon(an[0]["system"])
    assert classify(reqs[0], reqs[1]).kind == "extension"
    assert not [e for r in reqs for e in r.events if e.kind == "stable_region_changed"]


def test_fc_27_a_stable_template_that_reads_the_clock_is_reported_once():
    tpl = ClockTemplate(name="system", budget=9000, volatility="stable")
    w = Window(regions=[tpl, SlidingWindow(name="history", budget=9000)], max_tokens=20000)
    w.write("system", "x", tokens=1)
    say(w, "user", "hi")
    state, found = None, []
    for now in (0.0, 2.0, 4.0):
        tpl.clock[0] = now
        r = assemble(w, "regio", state=state)
        state = r.state
        for renderer in (render_anthropic, render_openai_chat):
            renderer(r, model="m")
        found.extend(e for e in r.events if e.kind == "stable_region_changed")
    assert [(e.region, e.explicit_edit) for e in found] == [("system", False)]


def test_fc_28_between_flushes_each_request_extends_the_previous_one_in_both_renderers():
    w = make_window()
    state, prev = None, None
    for n in range(12):
        say(w, "user", f"u{n} " * 50)
        say(w, "assistant", f"a{n} " * 50)
        r = assemble(w, "regio", tools=TOOLS, state=state)
        state = r.state
        if prev is not None:
            assert classify(prev[0], r).kind == "extension"
            an_prev, an = prev[1], render_anthropic(r, model="m")
            assert an["system"] == an_prev["system"] and an["tools"] == an_prev["tools"]
            # every earlier message except the last one (which carried the tail) is unchanged
            k = len(an_prev["messages"]) - 1
            assert _unmarked(an["messages"][:k]) == _unmarked(an_prev["messages"][:k])
            oa_prev, oa = prev[2], render_openai_chat(r, model="m")
            k = len(oa_prev["messages"]) - 1  # the tail is the last user message
            assert oa["messages"][:k] == oa_prev["messages"][:k]
        prev = (r, render_anthropic(r, model="m"), render_openai_chat(r, model="m"))


def _main_request():
    w = make_window()
    for n in range(1, 13):
        say(w, "user" if n % 2 else "assistant", f"m{n} " * 120)
    return assemble(w, "regio", tools=TOOLS, session_id="s-1")


def test_fc_29_the_summarizer_request_forks_the_main_request_prefix():
    main = _main_request()
    fork = fork_for_summary(main, "Summarize messages m1..m8; keep paths and numbers verbatim.")
    a_main, a_fork = render_anthropic(main, model="m"), render_anthropic(fork, model="m")
    assert _canon(a_fork["tools"]) == _canon(a_main["tools"])
    assert _canon(a_fork["system"]) == _canon(a_main["system"])
    n = len(a_main["messages"])
    assert _canon(a_fork["messages"][:n]) == _canon(a_main["messages"])
    assert a_fork["messages"][n]["role"] == "user" and len(a_fork["messages"]) == n + 1
    assert "m1..m8" in a_fork["messages"][n]["content"][0]["text"]
    assert count_cache_markers(a_fork) == count_cache_markers(a_main) <= 4
    o_main, o_fork = render_openai_chat(main, model="m"), render_openai_chat(fork, model="m")
    assert o_fork["messages"][: len(o_main["messages"])] == o_main["messages"]
    assert o_fork["prompt_cache_key"] == o_main["prompt_cache_key"]
    assert check_anthropic(a_fork) == [] and check_openai_chat(o_fork) == []


def test_fc_30_main_and_summarizer_requests_get_the_same_repair():
    entries = [
        raw_entry("t9", "tool", ToolResult("c9", "stale"), tokens=5),
        raw_entry("u1", "user", Text("u1 " * 500), tokens=500),
        raw_entry("a1", "assistant", Text("a1"), ToolUse("c7", "run", {"x": 1}), tokens=10),
        raw_entry("u2", "user", Text("u2"), tokens=5),
    ]
    main = assemble(history_window(entries), "regio", min_cache_tokens=1)
    f1 = fork_for_summary(main, "Summarize the first compaction range.")
    f2 = fork_for_summary(main, "Summarize the second compaction range.")
    for render in (render_anthropic, render_openai_chat):
        m, s1, s2 = (render(x, model="m") for x in (main, f1, f2))
        assert s1["messages"][: len(m["messages"])] == m["messages"]
        assert s1["messages"][:-1] == s2["messages"][:-1]
        text = _canon(s1)
        assert "stale" not in text and "c7" in text
    for clean in ([*entries[1:3], raw_entry("t7", "tool", ToolResult("c7", "ok"), tokens=2)],):
        main = assemble(history_window(clean), "regio", min_cache_tokens=1)
        fork = fork_for_summary(main, "Summarize.")
        for render in (render_anthropic, render_openai_chat):
            m, s = render(main, model="m"), render(fork, model="m")
            assert s["messages"][: len(m["messages"])] == m["messages"]
