"""Reading chat transcripts in public formats as messages to count (``regio count``).

Accepted shapes (JSON unless noted):

* a list of messages (mini-swe-agent test data, OpenAI ``messages``);
* an object with a ``history``, ``messages`` or ``trajectory`` list of messages (SWE-agent
  ``.traj``, mini-swe-agent ``.traj.json``), looked up in that order;
* a list of runs each with a ``traj`` list of messages (tau-bench ``historical_trajectories``);
* JSONL: one message per line.

A message is an object with a string ``role`` and ``content`` that is a string, ``null`` or a
list of parts (OpenAI ``{"type": "text"}`` parts, Anthropic ``text`` / ``tool_use`` /
``tool_result`` / ``thinking`` blocks); OpenAI ``tool_calls`` (a list, or SWE-agent's list
serialized as a string) and a legacy ``function_call`` become ``tool_use`` blocks; ``role: tool``
messages become ``tool_result`` blocks answering ``tool_call_id`` (SWE-agent: ``tool_call_ids``).
Parts of other types (images, audio) are counted as their canonical JSON, an over-estimate.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from regio.callargs import function_arguments
from regio.content import Block, Message, Role, Text, Thinking, ToolResult, ToolUse, canonical_json

__all__ = ["ChatItem", "TranscriptError", "parse_transcript", "read_transcript"]

_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
}
_CONTAINER_KEYS = ("history", "messages", "trajectory")


class TranscriptError(ValueError):
    """A file that is not a transcript regio can read; the message names the place."""


class ChatItem(msgspec.Struct, frozen=True):
    """One message read from a transcript.

    ``index`` is its position (``"12"``, or ``"3.12"`` for message 12 of run 3), ``role`` the role
    as written in the file, ``message`` the converted message, ``name`` the message's ``name``
    field (counted by the OpenAI chat format) or ``None``.
    """

    index: str
    role: str
    message: Message
    name: str | None = None


def _is_message(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str)


def _is_message_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_message(m) for m in value)


def _tool_calls(raw: object, where: str) -> list[Block]:
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return []
        try:
            raw = json.loads(text)
        except json.JSONDecodeError:
            try:
                raw = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return [Text(text)]  # unreadable: count the characters as written
    if not isinstance(raw, list):
        raise TranscriptError(f"{where}: tool_calls must be a list, got {type(raw).__name__}")
    blocks: list[Block] = []
    for number, call in enumerate(raw):
        if not isinstance(call, dict):
            raise TranscriptError(f"{where}: tool_calls[{number}] is not an object")
        function = call.get("function", call)
        if not isinstance(function, dict):
            raise TranscriptError(f"{where}: tool_calls[{number}].function is not an object")
        blocks.append(
            ToolUse(
                id=str(call.get("id", "")),
                name=str(function.get("name", "")),
                input=function_arguments(function.get("arguments", function.get("input"))),
            )
        )
    return blocks


def _part_text(part: object) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return str(part["text"])
    return canonical_json(part).decode()


def _flat_text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(p) for p in content)
    return canonical_json(content).decode()


def _content_blocks(content: object, where: str) -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content else []
    if not isinstance(content, list):
        raise TranscriptError(
            f"{where}: content must be a string, null or a list of parts, "
            f"got {type(content).__name__}"
        )
    blocks: list[Block] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, dict) and kind == "tool_use":
            blocks.append(
                ToolUse(
                    id=str(part.get("id", "")),
                    name=str(part.get("name", "")),
                    input=function_arguments(part.get("input")),
                )
            )
        elif isinstance(part, dict) and kind == "tool_result":
            blocks.append(
                ToolResult(
                    tool_use_id=str(part.get("tool_use_id", "")),
                    content=_flat_text(part.get("content")),
                    is_error=bool(part.get("is_error", False)),
                )
            )
        elif isinstance(part, dict) and kind == "thinking":
            blocks.append(Thinking(str(part.get("thinking", ""))))
        else:
            text = _part_text(part)
            if text:
                blocks.append(Text(text))
    return blocks


def _convert(raw: dict[str, Any], index: str, source: str) -> ChatItem:
    where = f"{source}: message {index}"
    written = str(raw["role"])
    role = _ROLES.get(written.lower(), "user")
    name = raw.get("name") if isinstance(raw.get("name"), str) and raw.get("name") else None
    blocks: list[Block]
    if role == "tool":
        call_id = raw.get("tool_call_id")
        ids = raw.get("tool_call_ids")
        if call_id is None and isinstance(ids, list) and ids:
            call_id = ids[0]
        blocks = [
            ToolResult(tool_use_id=str(call_id or ""), content=_flat_text(raw.get("content")))
        ]
    else:
        blocks = _content_blocks(raw.get("content"), where)
    if raw.get("tool_calls"):
        blocks.extend(_tool_calls(raw["tool_calls"], where))
    if isinstance(raw.get("function_call"), dict):
        blocks.extend(_tool_calls([{"function": raw["function_call"]}], where))
    return ChatItem(index=index, role=written, message=Message(role, tuple(blocks)), name=name)


def _messages(items: Sequence[Any], source: str, prefix: str = "") -> list[ChatItem]:
    out: list[ChatItem] = []
    for number, raw in enumerate(items):
        label = f"{prefix}{number}"
        if not _is_message(raw):
            raise TranscriptError(
                f"{source}: message {label} is not an object with a string 'role'"
            )
        out.append(_convert(raw, label, source))
    return out


def parse_transcript(data: object, source: str = "<data>") -> list[ChatItem]:
    """Messages of a decoded JSON transcript (shapes in the module docstring).

    Raises :class:`TranscriptError` naming ``source`` and the expected shapes.
    """
    if isinstance(data, dict):
        for key in _CONTAINER_KEYS:
            if _is_message_list(data.get(key)):
                return _messages(data[key], source)
    elif isinstance(data, list) and data:
        if all(_is_message(m) for m in data):
            return _messages(data, source)
        if all(isinstance(r, dict) and isinstance(r.get("traj"), list) for r in data):
            out: list[ChatItem] = []
            for run, record in enumerate(data):
                out.extend(_messages(record["traj"], source, prefix=f"{run}."))
            return out
    raise TranscriptError(
        f"{source}: no messages found; expected a JSON list of messages, an object with a "
        "'history', 'messages' or 'trajectory' list of messages, a list of runs each with "
        "'traj', or JSONL with one message per line (use --text to count the raw file)"
    )


def read_transcript(path: Path) -> list[ChatItem]:
    """Messages of a JSON or JSONL transcript file (``.jsonl`` is read line by line).

    Raises ``OSError`` for an unreadable file, ``UnicodeDecodeError`` for non-UTF-8 content and
    :class:`TranscriptError` for invalid JSON (with line and column) or an unknown shape.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".jsonl":
        items: list[Any] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TranscriptError(
                    f"{path}: invalid JSON on line {number}, column {exc.colno}: {exc.msg}"
                ) from None
        return parse_transcript(items, str(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    return parse_transcript(data, str(path))
