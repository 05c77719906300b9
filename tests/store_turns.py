"""A tool-reading turn for store tests and benchmarks: an assistant message with ``results``
``read`` calls, their results (~600 tokens each) and one request."""

from __future__ import annotations

from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine


def read_turn(engine: Engine, turn: int, results: int) -> None:
    """Add turn ``turn`` to ``engine``: ``results`` parallel reads, their results, a request."""
    calls = [
        ToolUse(id=f"c{turn}-{i}", name="read", input={"path": f"src/f{turn}_{i}.py"})
        for i in range(results)
    ]
    engine.add_message(Message(role="assistant", blocks=(Text(f"turn {turn}"), *calls)))
    engine.add_message(
        Message(
            role="user",
            blocks=tuple(
                ToolResult(tool_use_id=c.id, content=f"def f_{c.id}():\n    return 1\n" * 40)
                for c in calls
            ),
        )
    )
    engine.request()
