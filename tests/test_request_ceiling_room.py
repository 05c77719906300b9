"""At the request ceiling a sliding window that compaction cannot shrink rolls its oldest closed
turns off (an engine whose context window is smaller than the window its blueprint was sized
for is not refused at its second turn), and a ceiling nothing can meet names the numbers it is
made of."""

from __future__ import annotations

from pathlib import Path

import pytest

from regio.content import Message, ToolUse
from regio.engine import Engine
from regio.errors import ContextOverflowError
from regio.regions.events import Evicted

SUPPORT = Path(__file__).resolve().parent.parent / "examples" / "blueprints" / "support-agent.yaml"


def _output(path: str) -> str:
    """About 700 tokens of tool output, unique per path."""
    return "\n".join(
        f"{path}:{i}: value_{i} = compute(items[{i}], seed={i * 13})" for i in range(60)
    )


@pytest.mark.parametrize("parallel", [1, 2])
def test_a_sliding_window_without_compaction_rolls_off_closed_turns_at_a_smaller_context_window(
    parallel: int,
) -> None:
    engine = Engine.from_blueprint(SUPPORT, context_window=9_000, output_reserve=0)
    evicted: list[Evicted] = []
    engine.subscribe(lambda e: evicted.append(e) if isinstance(e, Evicted) else None)
    n = 0
    for turn in range(4):
        engine.add_user(f"USER {turn}: please read the files")
        for _ in range(3):
            request, _ = engine.request("openai")
            assert request.total_tokens <= 9_000
            ids = [f"c{n + k}" for k in range(parallel)]
            n += parallel
            calls = tuple(ToolUse(i, "read_file", {"path": f"p/{i}.py"}) for i in ids)
            engine.add_message(Message("assistant", calls))
            for i in ids:
                engine.add_tool_result(i, _output(f"p/{i}.py"))
        engine.request("openai")
        engine.add_assistant(f"done {turn}")
    assert evicted and {e.reason for e in evicted} == {"ceiling"}
    gone = {i for e in evicted for i in e.entry_ids}
    kept = {r.entry.id for r in engine.transcript() if r.entry is not None}
    assert gone <= kept  # the transcript keeps what left the window
    first_user = engine.window.conversation.entries[0]
    assert "USER 0" not in first_user.text  # the oldest closed turn went first


def test_a_ceiling_the_output_reserve_leaves_no_room_for_names_its_numbers() -> None:
    engine = Engine.from_blueprint(SUPPORT, context_window=1_000, output_reserve=4_096)
    engine.add_user("hello")
    with pytest.raises(ContextOverflowError) as caught:
        engine.request("openai")
    message = str(caught.value)
    assert "context window 1000 minus the output reserve 4096" in message
    assert "the output reserve leaves no room" in message
    assert "123904" not in message  # the blueprint's window is not the ceiling's cause
