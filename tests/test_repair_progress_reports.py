"""The repair renders a running call's latest progress report where it was added.

While a call's latest result is a progress report (``ToolResult(final=False)``), its
``tool_result`` right after the call is the fixed :data:`RUNNING_RESULT` and the report is a
``user`` message of its own at the report's position (never merged with a neighbour); earlier
reports are not rendered. The pass stays idempotent.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Text, ToolResult, ToolUse
from regio.layout.repair import RUNNING_RESULT, PMessage, repair, report_message

IDS = ["c1", "c2", "c3"]


@st.composite
def pmessages(draw: st.DrawFn) -> PMessage:
    role = draw(st.sampled_from(["user", "assistant", "tool"]))
    blocks = draw(
        st.lists(
            st.one_of(
                st.builds(Text, st.sampled_from(["a", "bb"])),
                st.builds(ToolUse, st.sampled_from(IDS), st.just("t")),
                st.builds(
                    ToolResult,
                    st.sampled_from(IDS),
                    st.sampled_from(["r", "s"]),
                    final=st.booleans(),
                ),
            ),
            min_size=1,
            max_size=3,
        )
    )
    return PMessage(role, tuple(blocks), "e")


@settings(max_examples=300, deadline=None)
@given(st.lists(pmessages(), max_size=14))
def test_a_repair_with_progress_reports_is_idempotent_and_shows_each_latest_report_once(
    messages: list[PMessage],
) -> None:
    once, _ = repair(messages)
    twice, events = repair(once)
    assert twice == once and events == []
    shown = [m.source for m in once if m.origin == "progress"]
    assert len(shown) == len(set(shown))  # one report per call at most
    for m in once:
        for b in m.blocks:
            if isinstance(b, ToolResult) and b.content == RUNNING_RESULT:
                assert f"progress:{b.tool_use_id}" in shown  # the marker's report is there


def test_the_call_keeps_a_marker_and_the_report_follows_where_it_was_added() -> None:
    report = ToolResult("bg", "50% done", final=False)
    messages = [
        PMessage("user", (Text("go"),), "e1"),
        PMessage("assistant", (ToolUse("bg", "build"),), "e2"),
        PMessage("tool", (ToolResult("bg", "started", final=False),), "e3"),
        PMessage("user", (Text("meanwhile"),), "e4"),
        PMessage("assistant", (ToolUse("c1", "ls"),), "e5"),
        PMessage("tool", (ToolResult("c1", "files"), report), "e6"),
    ]
    out, _ = repair(messages)
    assert [m.role for m in out] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "tool",
        "user",
    ]
    assert out[2].blocks == (ToolResult("bg", RUNNING_RESULT),)
    assert out[5].blocks == (ToolResult("c1", "files"),)
    assert out[6] == report_message(report)  # the latest report only, after c1's result
    assert out[6].blocks[0] == Text(
        "[progress report of tool call bg; not its final result]\n50% done"
    )
