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

A summary request's reply (``--summarizer upstream``, :mod:`regio.proxy.summaries`) is read by
:func:`summary_reply` (its text and the whole prompt's and output's token counts) and
:func:`summary_usage` (the same usage by token class: uncached input, cache reads, cache writes
by TTL, output, as the usage ledger reads a call's usage, so a summary request is priced as any
call is: :func:`regio.proxy.accounting.summary_cost`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import attrs

from regio.content import Message, Text, ToolUse
from regio.errors import UsageError
from regio.providers.registry import usage_parsers
from regio.sdk._objects import response_message
from regio.session._usage import PROMPT_FIELDS

__all__ = ["Reply", "Shown", "error_body", "read_reply", "summary_reply", "summary_usage"]


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


def _number(value: object) -> int:
    """A reported token count: a non-negative int, else 0 (a counter never goes down)."""
    return max(value, 0) if isinstance(value, int) and not isinstance(value, bool) else 0


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def summary_usage(api: str, data: object) -> dict[str, int]:
    """The token counts of a summary reply's ``usage`` by class (``uncached_tokens``,
    ``cache_read_tokens``, ``cache_write_5m_tokens``, ``cache_write_1h_tokens``,
    ``cache_write_tokens``, ``output_tokens``), read by the registered usage parser of ``api``
    (:func:`regio.session.normalize_usage`'s reading: cached reads and Anthropic cache writes
    apart from the uncached input, so they are priced as the cache rule prices them). A usage
    that parser refuses (a count that is no count) gives :func:`summary_reply`'s lenient totals
    as uncached input and output; no usage gives zeros."""
    found = data.get("usage") if isinstance(data, dict) else None
    shape = "openai_chat" if api not in ("anthropic", "openai_responses") else api
    parser = next((p for p in usage_parsers() if p.api == shape), None)
    if isinstance(found, dict) and found and parser is not None:
        try:
            fields = parser.parse(found)
            return {k: int(fields.get(k, 0)) for k in (*PROMPT_FIELDS, "output_tokens")}
        except UsageError:
            pass
    try:
        _, used_in, used_out = summary_reply(api, data)
    except ValueError:
        used_in = used_out = 0
    return {"uncached_tokens": used_in, "output_tokens": used_out}


def summary_reply(api: str, data: object) -> tuple[str, int, int]:
    """``(text, input tokens, output tokens)`` of a summary reply of ``api`` (usage missing:
    0). Anthropic input counts cache reads and writes too. Raises ``ValueError`` when ``data``
    is no reply of that API."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    found = data.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    if api == "anthropic":
        content = data.get("content")
        if not isinstance(content, list):
            raise ValueError("no content")
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text = "".join(str(b.get("text", "")) for b in blocks)
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        used = sum(_number(usage.get(k)) for k in keys)
        return text, used, _number(usage.get("output_tokens"))
    if api == "openai_responses":
        output = data.get("output")
        if not isinstance(output, list):
            raise ValueError("no output")
        text = "".join(
            str(part.get("text", ""))
            for item in output
            if isinstance(item, dict) and item.get("type") == "message"
            for part in _list(item.get("content"))
            if isinstance(part, dict) and part.get("type") == "output_text"
        )
        return text, _number(usage.get("input_tokens")), _number(usage.get("output_tokens"))
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    text = content if isinstance(content, str) else ""
    return text, _number(usage.get("prompt_tokens")), _number(usage.get("completion_tokens"))
