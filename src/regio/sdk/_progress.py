"""Progress reports of long-running tool calls as non-final tool results.

MCP reports the progress of a pending ``tools/call`` with ``notifications/progress`` messages
whose ``params`` hold ``progressToken``, ``progress``, an optional ``total`` and an optional
``message``; the final ``tools/call`` result ends the call
(https://modelcontextprotocol.io/specification/2025-06-18/basic/utilities/progress).
:func:`mcp_progress_result` turns one such notification into the
:class:`regio.content.ToolResult` with ``final=False`` that
``engine.add_message(Message.tool([...]))`` records for the call: the call's group stays open
and the report is what the model sees until the final result replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from regio.content import ToolResult

from ._objects import SDKInputError

__all__ = ["mcp_progress_result"]


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SDKInputError(f"MCP progress: progress and total must be numbers, got {value!r}")
    return f"{value:g}" if isinstance(value, float) else str(value)


def mcp_progress_result(tool_use_id: str, notification: Mapping[str, Any]) -> ToolResult:
    """The progress report of call ``tool_use_id`` from an MCP ``notifications/progress``
    message (the whole JSON-RPC message or its ``params``): ``ToolResult(tool_use_id,
    "progress 50/100: <message>", final=False)`` (``progress 50`` without a total, no
    ``: <message>`` without one). Raises :class:`regio.sdk._objects.SDKInputError` naming the
    field for a message that is not a progress notification or holds no numeric
    ``progress``."""
    if not isinstance(notification, Mapping):
        raise SDKInputError(
            f"MCP progress: expected a notifications/progress message (a mapping), got "
            f"{type(notification).__name__}"
        )
    method = notification.get("method")
    if method is not None and method != "notifications/progress":
        raise SDKInputError(f"MCP progress: method is {method!r}, not 'notifications/progress'")
    params = notification.get("params", notification)
    if not isinstance(params, Mapping) or "progress" not in params:
        raise SDKInputError("MCP progress: params.progress is missing")
    text = f"progress {_number(params['progress'])}"
    if params.get("total") is not None:
        text += f"/{_number(params['total'])}"
    message = params.get("message")
    if isinstance(message, str) and message:
        text += f": {message}"
    return ToolResult(tool_use_id, text, final=False)
