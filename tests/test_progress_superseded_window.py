"""A newer result of a call takes the call's earlier progress reports out of the window.

Only the latest result of a call is rendered, so the earlier ``final=False`` reports of that
call leave the conversation region (and its budget) when a newer one is admitted; results of
other calls in the same entry (parallel calls) stay, an entry left empty goes, and the
canonical transcript keeps every report.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.regions import SlidingWindow, Window
from regio.turngroups import group_entries
from regions_support import StubCounter
from runtime_stubs import make_engine


def _window() -> Window:
    return Window(
        regions=[SlidingWindow(name="conv", budget=5_000)],
        max_tokens=6_000,
        counter=StubCounter(),
    )


def _results(w: Window) -> list[tuple[str, str]]:
    return [
        (b.tool_use_id, b.content)
        for e in w.region("conv").entries
        for b in e.blocks
        if isinstance(b, ToolResult)
    ]


def test_newer_report_replaces_the_earlier_one_in_the_window():
    w = _window()
    w.add_message(Message.user("go [2]"))
    w.add_message(Message.assistant("a [2]", [ToolUse("c1", "job")]))
    w.add_message(Message.tool([ToolResult("c1", "p0 [40]", final=False)]))
    w.add_message(Message.tool([ToolResult("c1", "p1 [40]", final=False)]))
    conv = w.region("conv")
    assert [e.id for e in conv.entries] == ["e1", "e2", "e4"]
    assert conv.used_tokens == 2 + 2 + 40
    (event,) = w.events.of_kind("evicted")
    assert (event.entry_ids, event.tokens, event.reason) == (("e3",), 40, "superseded_progress")


def test_final_result_drops_the_reports_and_closes_the_group():
    w = _window()
    w.add_message(Message.assistant("a [2]", [ToolUse("c1", "job")]))
    for i in range(5):
        w.add_message(Message.tool([ToolResult("c1", f"p{i} [30]", final=False)]))
    w.add_message(Message.tool([ToolResult("c1", "done [7]")]))
    conv = w.region("conv")
    assert conv.used_tokens == 2 + 7
    grouping = group_entries(conv.entries)
    assert not grouping.open_groups and len(grouping.groups) == 1


def test_only_the_superseded_block_of_a_parallel_entry_leaves():
    w = _window()
    w.add_message(Message.assistant("a [2]", [ToolUse("c1", "job"), ToolUse("c2", "job")]))
    w.add_message(
        Message.tool(
            [ToolResult("c1", "p1 [30]", final=False), ToolResult("c2", "p2 [20]", final=False)]
        )
    )
    w.add_message(Message.tool([ToolResult("c1", "c1 done [5]")]))
    conv = w.region("conv")
    ids = [e.id for e in conv.entries]
    assert ids == ["e1", "e2", "e3"]  # e2 keeps its id, role and group with c2's report
    kept = conv.entries[1]
    assert [b.tool_use_id for b in kept.blocks] == ["c2"]
    assert kept.role == "tool" and kept.group == conv.entries[0].group
    assert kept.tokens == 20
    assert conv.used_tokens == 2 + 20 + 5
    assert group_entries(conv.entries).open_groups == (conv.entries[0].group,)


def test_transcript_keeps_every_report():
    engine = make_engine([SlidingWindow(name="conversation", budget=60_000)], max_tokens=80_000)
    engine.add_user("run the job")
    engine.add_assistant("", [ToolUse("c1", "job", {"name": "index"})])
    for i in range(4):
        engine.add_message(Message.tool([ToolResult("c1", f"progress {i}", final=False)]))
    logged = [
        b.content
        for r in engine.transcript()
        if r.kind == "message" and r.entry is not None
        for b in r.entry.blocks
        if isinstance(b, ToolResult)
    ]
    assert logged == [f"progress {i}" for i in range(4)]
    in_window = [b for e in engine.window.conversation.entries for b in e.blocks]
    assert [b.content for b in in_window if isinstance(b, ToolResult)] == ["progress 3"]


@settings(max_examples=200, deadline=None)
@given(
    calls=st.integers(1, 3),
    steps=st.lists(
        st.tuples(st.sets(st.integers(0, 2), min_size=1), st.booleans(), st.integers(1, 30)),
        max_size=25,
    ),
)
def test_window_holds_only_the_latest_result_of_each_call(calls, steps):
    w = _window()
    ids = [f"c{i}" for i in range(calls)]
    w.add_message(Message.assistant("a [2]", [ToolUse(c, "job") for c in ids]))
    finished: set[str] = set()
    latest: dict[str, str] = {}
    n = 0
    for which, final, size in steps:
        targets = [ids[i] for i in sorted(which) if i < calls and ids[i] not in finished]
        if not targets:
            continue
        blocks = []
        for c in targets:
            n += 1
            blocks.append(ToolResult(c, f"r{n} [{size}]", final=final))
            latest[c] = f"r{n} [{size}]"
            if final:
                finished.add(c)
        w.add_message(Message.tool(blocks))
        conv = w.region("conv")
        held = _results(w)
        # one result per call, and it is the latest one admitted
        assert sorted(c for c, _ in held) == sorted(latest)
        assert dict(held) == latest
        assert all(e.blocks for e in conv.entries)
        assert conv.used_tokens == sum(e.tokens for e in conv.entries)
        grouping = group_entries(conv.entries)
        assert len(grouping.groups) == 1  # the call's group is never split
        assert bool(grouping.open_groups) == (len(finished) < calls)
