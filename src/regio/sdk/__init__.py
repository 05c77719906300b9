"""Provider SDK objects in and out of the engine: responses, request-side messages
(with images and documents), tool definitions, usage and MCP progress reports.

Modules:

* ``_objects`` -- :func:`response_message`, :func:`tool_specs`, :func:`usage_of`;
  :func:`responses_message` (the Responses API reader) is :mod:`regio.providers.wire`'s;
* ``_media`` -- :func:`message_of`: one SDK message (with media) as a
  :class:`regio.content.Message`;
* ``_progress`` -- :func:`mcp_progress_result`: a progress report as a non-final tool result;
* ``_read`` -- readers the SDK-facing modules share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio._lazy import lazy_exports

if TYPE_CHECKING:
    from regio.providers.wire import responses_message

    from ._media import message_of
    from ._objects import response_message, tool_specs, usage_of
    from ._progress import mcp_progress_result

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "mcp_progress_result": "._progress",
    "message_of": "._media",
    "response_message": "._objects",
    "responses_message": "regio.providers.wire",
    "tool_specs": "._objects",
    "usage_of": "._objects",
}

__all__ = [
    "mcp_progress_result",
    "message_of",
    "response_message",
    "responses_message",
    "tool_specs",
    "usage_of",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
