"""A relief edit changes a tool result's text only: a result trimmed or routed on admission
keeps whether it is final and the images / documents it carried; a superseded one (the dedupe
stage) stays a progress report when it was one and drops its media with its text.

(They were rebuilt as ``ToolResult(id, text, is_error)``: an admission trim of a progress
report made it final, closing its call's group while the call ran, and a trimmed screenshot
result lost its image.)
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from media_support import png
from regio.content import Message, ToolResult, ToolUse
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import make_engine


def _engine():
    return make_engine(
        [Pinned(name="system", budget=2_000), SlidingWindow(name="conversation", budget=60_000)],
        max_tokens=80_000,
        relief=ReliefPolicy(
            tools={"cat": ToolRelief(max_result_tokens=30), "poll": ToolRelief(dedupe=True)}
        ),
    )


def _kept_result(engine, call_id: str) -> ToolResult:
    blocks = [b for e in engine.window.region("conversation").entries for b in e.blocks]
    return [b for b in blocks if isinstance(b, ToolResult) and b.tool_use_id == call_id][-1]


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=100, max_value=600))
def test_an_admission_trimmed_progress_report_stays_a_progress_report(words):
    engine = _engine()
    engine.add_user("build it")
    engine.add_assistant("", [ToolUse("c1", "cat", {"job": "build"})])
    report = " ".join(f"log{i}" for i in range(words))
    engine.add_message(Message.tool([ToolResult("c1", report, final=False)]))
    kept = _kept_result(engine, "c1")
    assert kept.content != report  # it was trimmed
    assert not kept.is_final


def test_an_admission_trimmed_result_keeps_its_image():
    engine = _engine()
    engine.add_user("look")
    engine.add_assistant("", [ToolUse("c1", "cat", {"page": "/login"})])
    shot = png(64, 48)
    engine.add_tool_result("c1", " ".join(f"dom{i}" for i in range(400)), media=(shot,))
    assert _kept_result(engine, "c1").media == (shot,)


def test_a_superseded_progress_report_stays_non_final_and_drops_its_media():
    from regio.policies import Compact
    from regio.regions import CompactHistory
    from runtime_stubs import StubSummarizer, words

    regions = [
        Pinned(name="system", budget=200, volatility="stable"),
        CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
        SlidingWindow(
            name="conversation",
            budget=4000,
            eviction=Compact(compact_count=500, trigger=1000, target=400),
        ),
    ]
    # dedupe runs under token pressure, as the chain's first stage
    relief = ReliefPolicy(
        dedupe_at_least=10, clear=False, trim=False, tools={"poll": ToolRelief(dedupe=True)}
    )
    summarizer = StubSummarizer(size=8, distinct=True)
    engine = make_engine(regions, max_tokens=6000, summarizer=summarizer, relief=relief)
    engine.add_user("poll the job")
    engine.add_assistant("", [ToolUse("c1", "poll", {"job": 7})])
    report = ToolResult("c1", words(300, "running"), final=False, media=(png(32, 32),))
    engine.add_message(Message.tool([report]))
    for i in range(2, 8):
        engine.add_assistant("", [ToolUse(f"c{i}", "poll", {"job": 7})])
        engine.add_tool_result(f"c{i}", words(200, f"done{i}-"))
        engine.request(provider="anthropic", model="stub-model")
    assert engine.book.relief.stages["dedupe"].runs > 0
    old = _kept_result(engine, "c1")
    assert old.content.startswith("[superseded by call c")
    assert not old.is_final and old.media == ()


def test_clearing_a_running_calls_progress_report_keeps_its_group_open():
    from regio.policies import Compact
    from regio.regions import CompactHistory
    from runtime_stubs import StubSummarizer, words

    regions = [
        Pinned(name="system", budget=200, volatility="stable"),
        CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
        SlidingWindow(
            name="conversation",
            budget=4000,
            eviction=Compact(compact_count=500, trigger=1000, target=400),
        ),
    ]
    relief = ReliefPolicy(keep_last=1, clear_at_least=10, clear_after_summary=False)
    summarizer = StubSummarizer(size=8, distinct=True)
    engine = make_engine(regions, max_tokens=6000, summarizer=summarizer, relief=relief)
    engine.add_user("go")
    engine.add_assistant("start the job", [ToolUse("job", "bg", {"n": 1})])
    engine.add_message(Message.tool([ToolResult("job", words(150, "prog"), final=False)]))
    for i in range(12):
        engine.add_assistant(f"s{i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(120, f"t{i}x"))
        engine.request(provider="anthropic", model="stub-model")
    assert not _kept_result(engine, "job").is_final
