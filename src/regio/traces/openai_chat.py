"""OpenAI chat-format messages → trace events (used by the ``openai`` and ``tau-bench``
importers, and for SWE-agent's tool calls).

Accepted message shapes (OpenAI Chat Completions, plus the common variants seen in logs):

* ``{"role": "system" | "developer", "content": ...}`` → system prompt (set, or replaced later);
* ``{"role": "user", "content": str | [parts]}``; text parts (``text`` / ``input_text``) are
  kept, other parts (images, audio) are dropped with a warning; Anthropic-style
  ``tool_result`` parts become tool results;
* ``{"role": "assistant", "content": str | None | [parts], "tool_calls": [...]}``;
  ``reasoning_content`` / ``thinking`` and Anthropic ``thinking`` parts become thinking blocks,
  Anthropic ``tool_use`` parts become calls; legacy ``function_call`` is one call;
* ``{"role": "tool", "tool_call_id": ..., "content": ...}`` and legacy ``{"role": "function"}``.

``tool_calls[].function.arguments`` is a JSON string (OpenAI API reference, "Chat
Completions: tool_calls"): it is parsed into the call's ``input``; a string that is not a JSON
object is kept in regio's invalid-arguments form, ``{"_invalid_arguments": <string>}``, with a
warning (:func:`regio.traces.shared.parse_arguments`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

from regio.content import Thinking
from regio.traces.builder import CallSpec, ResultSpec, TraceBuilder
from regio.traces.errors import TraceFormatError
from regio.traces.safejson import clean_value, parse_json
from regio.traces.shared import parse_arguments

#: Python-literal strings longer than this are not evaluated (``ast.literal_eval`` builds the
#: whole syntax tree first).
_MAX_LITERAL_CHARS = 4 * 2**20

__all__ = [
    "content_text",
    "feed_openai_messages",
    "loose_literal",
    "parse_tool_calls",
]

#: Maps a message's position to (record index for issues, field path prefix).
Locate = Callable[[int], tuple[int | None, str]]

_TEXT_PARTS = ("text", "input_text", "output_text")


def loose_literal(value: object) -> Any:
    """A field that may be stored as a string: JSON first, then a Python literal."""
    if not isinstance(value, str):
        return value
    try:
        return parse_json(value, "")[0]
    except TraceFormatError:
        pass
    if len(value) > _MAX_LITERAL_CHARS:
        return value
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return value
    try:
        return clean_value(parsed)[0]
    except TraceFormatError:
        return value


def parse_tool_calls(
    value: object, builder: TraceBuilder, record: int | None, field: str
) -> list[CallSpec]:
    """OpenAI ``tool_calls`` (a list, or that list stored as a JSON / Python-literal string, as
    SWE-agent does) → :class:`CallSpec` list. Malformed calls are reported and skipped."""
    value = loose_literal(value)
    if value is None:
        return []
    if not isinstance(value, list):
        builder.issue(record, field, "tool_calls is not a list; calls dropped")
        return []
    calls: list[CallSpec] = []
    for k, call in enumerate(value):
        where = f"{field}[{k}]"
        if not isinstance(call, dict):
            builder.issue(record, where, "tool call is not an object; dropped")
            continue
        function = call.get("function", call)
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            builder.issue(record, f"{where}.function.name", "tool call without a name; dropped")
            continue
        raw_id = call.get("id")
        calls.append(
            CallSpec(
                str(raw_id) if raw_id not in (None, "") else None,
                function["name"],
                parse_arguments(
                    function.get("arguments", function.get("input")),
                    builder,
                    record,
                    f"{where}.function.arguments",
                ),
            )
        )
    return calls


def content_text(
    content: object, builder: TraceBuilder, record: int | None, field: str
) -> tuple[str, list[dict[str, Any]]]:
    """Message content → (joined text, non-text parts). ``None`` is ``""``; a string is itself;
    a list of parts joins its text parts with newlines and returns the other parts."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        builder.issue(
            record, field, f"content of type {type(content).__name__}; kept as text", "warning"
        )
        return str(content), []
    texts: list[str] = []
    others: list[dict[str, Any]] = []
    for k, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in _TEXT_PARTS:
            texts.append(str(part.get("text", "")))
        elif isinstance(part, dict):
            others.append(part)
        else:
            builder.issue(record, f"{field}[{k}]", "content part is not an object; dropped")
    return "\n".join(texts), others


def _result_text(content: object, builder: TraceBuilder, record: int | None, field: str) -> str:
    text, others = content_text(content, builder, record, field)
    if others:
        builder.issue(record, field, f"{len(others)} non-text result part(s) dropped", "warning")
    return text


def feed_openai_messages(builder: TraceBuilder, messages: Sequence[Any], locate: Locate) -> None:
    """Feed OpenAI chat messages into ``builder`` in order (shapes: module docstring).

    A message that is not an object, has no ``role`` or an unknown one is reported (field
    ``role``) and skipped; the others still import.
    """
    for j, message in enumerate(messages):
        record, prefix = locate(j)
        if not isinstance(message, dict):
            builder.issue(record, prefix.rstrip("."), "message is not an object; skipped")
            continue
        role = message.get("role")
        if not isinstance(role, str):
            builder.issue(record, f"{prefix}role", "message has no role; skipped")
            continue
        if role in ("system", "developer"):
            text, _ = content_text(message.get("content"), builder, record, f"{prefix}content")
            builder.system(text)
        elif role == "user":
            _feed_user(builder, message, record, prefix)
        elif role == "assistant":
            _feed_assistant(builder, message, record, prefix)
        elif role in ("tool", "function"):
            raw_id = message.get("tool_call_id")
            content = _result_text(message.get("content"), builder, record, f"{prefix}content")
            builder.tool_results(
                [
                    ResultSpec(
                        str(raw_id) if raw_id else None,
                        content,
                        bool(message.get("is_error", False)),
                    )
                ],
                record=record,
                field=f"{prefix}tool_call_id",
            )
        else:
            builder.issue(record, f"{prefix}role", f"unknown role {role!r}; skipped")


def _feed_user(
    builder: TraceBuilder, message: dict[str, Any], record: int | None, prefix: str
) -> None:
    text, others = content_text(message.get("content"), builder, record, f"{prefix}content")
    results = [p for p in others if p.get("type") == "tool_result"]
    dropped = len(others) - len(results)
    if dropped:
        builder.issue(record, f"{prefix}content", f"{dropped} non-text part(s) dropped", "warning")
    if results:
        builder.tool_results(
            [
                ResultSpec(
                    str(p.get("tool_use_id")) if p.get("tool_use_id") else None,
                    _result_text(p.get("content"), builder, record, f"{prefix}content"),
                    bool(p.get("is_error", False)),
                )
                for p in results
            ],
            record=record,
            field=f"{prefix}content",
        )
    if text or not results:
        builder.user(text, record=record, field=prefix.rstrip("."))


def _feed_assistant(
    builder: TraceBuilder, message: dict[str, Any], record: int | None, prefix: str
) -> None:
    text, others = content_text(message.get("content"), builder, record, f"{prefix}content")
    thinking: list[Thinking] = []
    for key in ("reasoning_content", "thinking"):
        value = message.get(key)
        if isinstance(value, str) and value:
            thinking.append(Thinking(value))
    calls = parse_tool_calls(message.get("tool_calls"), builder, record, f"{prefix}tool_calls")
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        calls += parse_tool_calls([{"function": legacy}], builder, record, f"{prefix}function_call")
    for k, part in enumerate(others):
        kind = part.get("type")
        if kind == "thinking":
            thinking.append(Thinking(str(part.get("thinking", "")), str(part.get("signature", ""))))
        elif kind == "tool_use":
            calls += parse_tool_calls(
                [
                    {
                        "id": part.get("id"),
                        "function": {"name": part.get("name"), "arguments": part.get("input")},
                    }
                ],
                builder,
                record,
                f"{prefix}content[{k}]",
            )
        else:
            builder.issue(record, f"{prefix}content[{k}]", f"part type {kind!r} dropped", "warning")
    builder.assistant(text, calls, thinking=thinking, record=record, field=prefix)
