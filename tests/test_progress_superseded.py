"""Superseded progress reports take no window room the request never sends.

The render sends only the latest result of a call, and the call's group is open (none of its
reports can be evicted), so every earlier ``final=False`` report kept in the conversation would
count against the window. A newer report or the final result replaces the call's earlier
reports in the region: a long job's progress stream (one notification per percent) costs one
report's worth of window, not one per notification.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import make_engine


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=5, max_value=60))
def test_window_use_follows_the_latest_progress_report_not_their_number(reports):
    def job(reports: int) -> Any:
        engine = make_engine(
            [
                Pinned(name="system", budget=2_000),
                SlidingWindow(name="conversation", budget=60_000),
            ],
            max_tokens=80_000,
        )
        engine.add_user("run the job")
        engine.add_assistant("", [ToolUse("c1", "job", {"name": "index"})])
        for i in range(reports):
            engine.add_message(
                Message.tool([ToolResult("c1", f"progress {i} " + "x " * 50, final=False)])
            )
        return engine

    one = job(1)
    engine = job(reports)
    request, _ = engine.request(provider="anthropic", model="stub-model")
    # one report's worth, not `reports` of them (the report's number may take a token more)
    assert engine.window.used_tokens <= one.window.used_tokens + 5
    assert request.total_tokens <= one.request(provider="anthropic")[0].total_tokens + 5
