"""Summary placement (issue 13): ``compact_history`` opens the messages, after the system
content, never joined into it; a compaction leaves the system bytes identical; earlier
summaries stay byte-identical (appended) until they are merged themselves."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.policies import Compact
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words

LABEL = "[summary of earlier context -> region 'history']"


def _engine(history_budget: int) -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=300, volatility="stable"),
            CompactHistory(
                name="history", source="conversation", budget=history_budget, volatility="grows"
            ),
            SlidingWindow(
                name="conversation", budget=1500, eviction=Compact(trigger="80%", target="30%")
            ),
        ],
        max_tokens=1500 + history_budget + 600,
        summarizer=StubSummarizer(size=12, distinct=True),
    )


def _summaries(payload: dict[str, Any]) -> list[str]:
    """Texts of the summary blocks at the opening of the messages."""
    out = []
    for message in payload["messages"]:
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        summary = [t for t in texts if t.startswith(LABEL)]
        out.extend(summary)
        if len(summary) < len(blocks):
            break
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(min_value=20, max_value=300), min_size=10, max_size=50),
    history_budget=st.sampled_from([60, 120, 600]),
)
def test_compaction_leaves_the_system_bytes_and_earlier_summaries_unchanged(
    sizes: list[int], history_budget: int
) -> None:
    engine = _engine(history_budget)
    engine.write("system", words(120, "rule"))
    engine.add_user("start the task")
    merges: list[Any] = []
    engine.subscribe(
        lambda e: (
            merges.append(e) if e.kind == "compaction_completed" and e.region == "history" else None
        )
    )
    system: bytes | None = None
    before: list[str] = []
    for i, size in enumerate(sizes):
        n_merges = len(merges)
        _, payload = engine.request()
        now = json.dumps(payload["system"]).encode()
        assert system is None or now == system, "the system bytes changed"
        system = now
        assert LABEL.encode() not in now
        summaries = _summaries(payload)
        history = engine.window.region("history")
        assert len(summaries) == len(history.entries)
        if len(merges) == n_merges:
            assert summaries[: len(before)] == before, "an earlier summary changed"
        before = summaries
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        engine.add_tool_result(call.id, words(size, f"r{i}x"))


def test_summaries_never_appear_in_the_system_text() -> None:
    engine = _engine(600)
    engine.write("system", words(120, "rule"))
    engine.add_user("start")
    for i in range(30):
        engine.request()
        call = ToolUse(f"c{i}", "bash", {"cmd": "x"})
        engine.add_assistant("step", [call])
        engine.add_tool_result(call.id, words(200, f"r{i}x"))
    _, payload = engine.request()
    assert engine.window.region("history").entries
    assert LABEL not in json.dumps(payload["system"])
    assert _summaries(payload), "the summaries do not open the messages"
