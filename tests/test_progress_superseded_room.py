"""A newer progress report replacing one that fills the room is admitted.

The earlier report of a running job is dropped when a newer result of the call is admitted;
the admission counts its tokens as freed (it cannot be evicted, its open group is protected).
A write that does not fit even so is refused and changes nothing.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from progress_support import conversation_blueprint
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout.repair import RUNNING_RESULT
from regio.regions import Refusal, SlidingWindow, Window, WriteResult
from regions_support import StubCounter


def _job_window(first: int) -> Window:
    """A 1,000-token window whose running job c1 has a ``first``-token report (StubCounter:
    ``"x " * n`` is n tokens; the user and assistant messages are 1 token each)."""
    w = Window(
        regions=[SlidingWindow(name="conv", budget=1000)], max_tokens=1000, counter=StubCounter()
    )
    w.add_message(Message.user("go"))
    w.add_message(Message.assistant("", (ToolUse("c1", "job", {}),)))
    assert isinstance(
        w.add_message(Message.tool((ToolResult("c1", "x " * first, final=False),))), WriteResult
    )
    return w


def _reports(w: Window) -> list[str]:
    return [
        b.content for e in w.region("conv").entries for b in e.blocks if isinstance(b, ToolResult)
    ]


def test_a_report_replacing_one_that_fills_the_room_is_admitted() -> None:
    w = _job_window(600)
    result = w.add_message(Message.tool((ToolResult("c1", "y " * 600, final=False),)))
    assert isinstance(result, WriteResult)
    assert _reports(w) == ["y " * 600]
    assert w.region("conv").used_tokens == 602
    final = w.add_message(Message.tool((ToolResult("c1", "done " * 120),)))
    assert isinstance(final, WriteResult)
    assert _reports(w) == ["done " * 120]


def test_refused_report_leaves_the_window_untouched() -> None:
    w = _job_window(600)
    before = (list(w.region("conv").entries), w.used_tokens, list(w.events.history))
    result = w.add_message(Message.tool((ToolResult("c1", "y " * 999, final=False),)))
    assert isinstance(result, Refusal)
    after = (
        list(w.region("conv").entries),
        w.used_tokens,
        list(w.events.history)[: len(before[2])],
    )
    assert after == before
    assert [type(e).__name__ for e in w.events.history[len(before[2]) :]] == ["Refused"]
    assert _reports(w) == ["x " * 600]


def test_the_payload_shows_the_report_that_replaced_a_room_filling_one() -> None:
    engine = Engine.from_blueprint(conversation_blueprint("p", 1500))
    engine.add_user("start job")
    engine.add_assistant("ok", [ToolUse("job", "build", {})])
    engine.add_tool_result("job", "running " + "x " * 1700, final=False)
    engine.add_tool_result("job", "running later " + "y " * 1700, final=False)
    _, payload = engine.request()
    sent = [
        b["content"] if isinstance(b["content"], str) else b["content"][0]["text"]
        for m in payload["messages"]
        if not isinstance(m["content"], str)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert sent == [RUNNING_RESULT]  # the call's bytes stay while the job runs
    texts = [
        b["text"]
        for m in payload["messages"]
        if not isinstance(m["content"], str)
        for b in m["content"]
        if b.get("type") == "text"
    ]
    shown = [t.partition("\n")[2][:13] for t in texts if t.startswith("[progress report")]
    assert shown == ["running later"]  # the newer report, once


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(1, 1200), min_size=1, max_size=8))
def test_a_report_is_admitted_exactly_when_it_fits_in_place_of_the_one_it_replaces(
    sizes: list[int],
) -> None:
    w = _job_window(300)
    latest = "x " * 300
    for size in sizes:
        entries, history = list(w.region("conv").entries), len(w.events.history)
        text = "z " * size
        result = w.add_message(Message.tool((ToolResult("c1", text, final=False),)))
        if 2 + size <= 1000:
            assert isinstance(result, WriteResult), size
            latest = text
        else:
            assert isinstance(result, Refusal), size
            assert list(w.region("conv").entries) == entries
            assert len(w.events.history) == history + 1  # only the refusal
        assert _reports(w) == [latest]
        assert w.used_tokens <= 1000
