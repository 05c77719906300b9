"""The request shape of a reading agent against the proxy (Anthropic Messages API): one
``read`` tool, a short system prompt, and per step the model's call and its tool result
appended to the history. Shared by the proxy benchmarks (``benchmarks/proxy_load.py``) and the
tests that count the proxy's work per request on the same shape."""

from __future__ import annotations

from typing import Any

from proxy_support import Step

__all__ = ["READ_CALL", "TOOLS", "add_read", "request_body"]

#: The agent's one tool.
TOOLS = [
    {
        "name": "read",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]

#: The scripted upstream's answer at every step: a text and a call of ``read``.
READ_CALL = Step("Reading the next file.", (("read", {"path": "f.py"}),))


def request_body(history: list[dict[str, Any]], *, stream: bool = False) -> dict[str, Any]:
    """The ``/v1/messages`` body sending ``history`` (streamed when ``stream``)."""
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1000,
        "system": "You read files.",
        "tools": TOOLS,
        "messages": history,
    }
    if stream:
        body["stream"] = True
    return body


def add_read(history: list[dict[str, Any]], call_id: str, result: str) -> None:
    """Append the model's ``read`` call ``call_id`` (the upstream's :data:`READ_CALL`) and its
    tool ``result`` to ``history``."""
    history += [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the next file."},
                {"type": "tool_use", "id": call_id, "name": "read", "input": {"path": "f.py"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
        },
    ]
