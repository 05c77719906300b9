"""The async loop runs the same turn-boundary flush as the sync loop, awaiting an async
summarizer (whole-context trigger included)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from regio.agent import AgentLoop, ScriptedProvider, reply
from regio.engine._engine import Engine
from regio.summarizers._extractive import ExtractiveSummarizer
from test_agent_loop import BLUEPRINT, look_tool


class AsyncExtractive(ExtractiveSummarizer):
    """An async summarizer: a sync call would be refused by the engine (use aflush)."""

    async def __call__(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().__call__(*args, **kwargs)


def _engine(summarizer: Any) -> Engine:
    text = BLUEPRINT.replace("MAX_ITEMS", "200").replace("COMPACT_COUNT", "20")
    # whole-context trigger, calibrated tokens
    return Engine.from_blueprint(text, summarizer=summarizer, compact_trigger=1800)


def _script(turns: int) -> list[Any]:
    script = [reply("", [(f"c{i}", "look", {})], prompt_tokens=400) for i in range(turns)]
    script.append(reply("done", prompt_tokens=400))
    return script


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_whole_context_trigger_compacts_in_both_loops_with_their_summarizer(mode: str):
    engine = _engine(ExtractiveSummarizer() if mode == "sync" else AsyncExtractive())
    kinds: list[str] = []
    engine.subscribe(lambda e: kinds.append(e.kind))
    loop = AgentLoop(engine, ScriptedProvider(_script(12)), [look_tool(150)])
    result = loop.run("inspect") if mode == "sync" else asyncio.run(loop.arun("inspect"))

    assert result.stop_reason == "final_answer"
    assert "compaction_finished" in kinds
    assert "compaction_rejected" not in kinds  # the async summarizer was awaited, not refused
    assert engine.window.region("history").entries
