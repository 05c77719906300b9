"""What the model answered, read from the upstream's response, and the errors the proxy sends.

:class:`Reply` is one upstream response, streamed or not: the assistant :class:`Message` the
engine records (read by :func:`regio.sdk._objects.response_message`, the same reader
``Engine.add_response`` uses), the usage the upstream reported, and the calls the model made to
regio's own tools (``context_restore``), which the proxy answers itself
(:mod:`regio.proxy.restore`). ``shown`` is what the client saw of it (text and tool call ids),
which the client sends back as its next history item.

:func:`error_body` is an error in the shape of the client's API, so its SDK raises its usual
exception with the proxy's message: Anthropic ``{"type": "error", "error": {"type", "message"}}``
(https://docs.anthropic.com/en/api/errors), OpenAI ``{"error": {"message", "type", "param",
"code"}}`` (https://platform.openai.com/docs/guides/error-codes).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import attrs

from regio.content import Message, Text, ToolUse
from regio.sdk._objects import response_message

__all__ = ["Reply", "Shown", "error_body", "read_reply"]


@attrs.frozen
class Shown:
    """What the client saw of a reply: its text (joined) and its tool call ids, in order."""

    text: str = ""
    call_ids: tuple[str, ...] = ()

    @classmethod
    def of(cls, message: Message) -> Shown:
        """The text and call ids of ``message``."""
        text = "".join(b.text for b in message.blocks if isinstance(b, Text))
        ids = tuple(b.id for b in message.blocks if isinstance(b, ToolUse))
        return cls(text, ids)

    def then(self, other: Shown) -> Shown:
        """``self`` followed by ``other`` (a continuation the client saw as one reply)."""
        return Shown(self.text + other.text, self.call_ids + other.call_ids)


@attrs.frozen
class Reply:
    """One upstream response (module doc). ``usage`` is the reported usage dict (``None`` when
    the upstream reported none), ``internal`` the calls to regio's tools, ``complete`` whether
    the response ended normally (a stream cut short, or an error event, is not complete), ``raw``
    the response as the API's non-streamed body (assembled from the events of a stream)."""

    message: Message
    usage: dict[str, Any] | None
    internal: tuple[ToolUse, ...] = ()
    shown: Shown = Shown()
    complete: bool = True
    raw: dict[str, Any] | None = None


def read_reply(data: dict[str, Any], regio_tools: Collection[str]) -> Reply:
    """The :class:`Reply` of a non-streamed response body of any of the three APIs. Raises
    :class:`regio.sdk._objects.SDKInputError` for a body that is no response."""
    message, usage = response_message(data)
    internal = tuple(b for b in message.blocks if isinstance(b, ToolUse) and b.name in regio_tools)
    usage = dict(usage) if isinstance(usage, dict) else None
    return Reply(message, usage, internal, Shown.of(message), raw=data)


def error_body(api: str, message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """An error body in the shape of ``api`` (module doc); ``kind`` is the error type."""
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
