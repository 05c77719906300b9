"""Responses tool-call items that are not function calls: custom tool calls and local shell calls.

The OpenAI Responses API (https://platform.openai.com/docs/api-reference/responses/create) has,
beside ``function_call`` / ``function_call_output``, two more pairs of a call and its output,
both used by Codex CLI (``apply_patch`` is a custom tool, its shell a local shell call):

* ``{"type": "custom_tool_call", "call_id", "name", "input"}`` -- a call to a custom (freeform)
  tool, defined in ``tools`` as ``{"type": "custom", "name", "description", "format"}``; its
  ``input`` is free text, not JSON arguments. Answered by ``{"type": "custom_tool_call_output",
  "call_id", "output"}`` (``output``: text, or a list of input content parts).
* ``{"type": "local_shell_call", "call_id", "status", "action": {"type": "exec", "command":
  [...], "timeout_ms", "working_directory", "env", "user"}}`` (and an ``id``). Answered by
  ``{"type": "local_shell_call_output", "id": <the call's call_id>, "output", "status"}``, or,
  as Codex CLI does, by a ``function_call_output`` with the ``call_id``
  (https://platform.openai.com/docs/guides/tools-local-shell).

Both items may carry more fields (``id``, ``status``, ``namespace``, ...). regio holds such a
call as a :class:`regio.content.ToolUse` (``id``: the ``call_id``, else the ``id``; ``name``:
the tool's name, ``"local_shell"`` for a local shell call; ``input``: ``{"input": text}`` for a
custom call, the ``action`` object for a local shell call, so it is counted and shown like any
call's arguments) and its output as a :class:`regio.content.ToolResult` (the output's text and
media), each with ``item``: the item as sent, with its payload (``input``, ``action``,
``output``) set to ``null``. :func:`call_item` and :func:`output_item` give the item back with
the block's payload, the same fields in the same order: an item that is not compacted is sent
upstream as the client sent it. An output regio made itself (a repair's synthesized result, a
placeholder) has no ``item``: it takes the output type of its call (a custom call's is a
``custom_tool_call_output``, a local shell call's a ``function_call_output``).

This module imports only :mod:`regio.content` and :mod:`regio.errors`, so every layer can use
it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from regio.content import ToolResult, ToolUse
from regio.errors import RegioError

__all__ = [
    "CALL_TYPES",
    "LOCAL_SHELL_NAME",
    "OUTPUT_TYPES",
    "ToolItemError",
    "call_block",
    "call_item",
    "is_call",
    "is_output",
    "output_call_id",
    "output_item",
    "output_shell",
]

#: The call item types regio reads here -> the key of their payload.
CALL_TYPES: dict[str, str] = {"custom_tool_call": "input", "local_shell_call": "action"}
#: The output item types regio reads here -> the key naming the call they answer.
OUTPUT_TYPES: dict[str, str] = {
    "custom_tool_call_output": "call_id",
    "local_shell_call_output": "id",
}
#: The output type of a result regio made itself for a call of each type (a local shell call's
#: is a ``function_call_output``, as Codex CLI answers them and the API accepts).
_ANSWER: dict[str, str] = {"custom_tool_call": "custom_tool_call_output"}
#: The tool name of a local shell call (the item names none).
LOCAL_SHELL_NAME = "local_shell"


class ToolItemError(RegioError, ValueError):
    """A custom tool call, local shell call or one of their outputs of the wrong shape (the
    message names the place and the field)."""


def is_call(kind: Any) -> bool:
    """Whether ``kind`` (an item's ``type``, any JSON value) is a call item of this module."""
    return isinstance(kind, str) and kind in CALL_TYPES


def is_output(kind: Any) -> bool:
    """Whether ``kind`` (an item's ``type``, any JSON value) is an output item of this module."""
    return isinstance(kind, str) and kind in OUTPUT_TYPES


def _text(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise ToolItemError(f"{where}: {key!r} is missing or not text")
    return str(value)


def call_block(item: Mapping[str, Any], where: str) -> ToolUse:
    """The :class:`ToolUse` of a ``custom_tool_call`` or ``local_shell_call`` item (module doc).
    Raises :class:`ToolItemError` naming ``where`` for a call without an id, a custom call
    without a name or a text ``input``, a local shell call whose ``action`` is no object."""
    kind = item.get("type")
    key = CALL_TYPES.get(str(kind))
    if key is None:
        raise ToolItemError(f"{where}: a {kind!r} item is no custom tool or local shell call")
    id_key = "call_id" if item.get("call_id") not in (None, "") else "id"
    call_id = _text(item, id_key, where)
    shell = {k: (None if k == key else v) for k, v in item.items()}
    if kind == "custom_tool_call":
        text = item.get("input")
        if not isinstance(text, str):
            raise ToolItemError(f"{where}: 'input' of a custom tool call must be text")
        return ToolUse(call_id, _text(item, "name", where), {"input": text}, item=shell)
    action = item.get("action")
    if not isinstance(action, Mapping):
        raise ToolItemError(f"{where}: 'action' of a local shell call must be an object")
    return ToolUse(call_id, LOCAL_SHELL_NAME, dict(action), item=shell)


def output_call_id(item: Mapping[str, Any], where: str) -> str:
    """The call id a ``custom_tool_call_output`` (``call_id``) or ``local_shell_call_output``
    (``id``) answers. Raises :class:`ToolItemError` when it is missing."""
    key = OUTPUT_TYPES.get(str(item.get("type")), "call_id")
    return _text(item, key, where)


def output_shell(item: Mapping[str, Any]) -> dict[str, Any]:
    """The ``item`` a :class:`ToolResult` of the output ``item`` keeps: every field as sent,
    ``output`` set to ``null``."""
    return {k: (None if k == "output" else v) for k, v in item.items()}


def _call_id_key(item: Mapping[str, Any]) -> str:
    if item.get("type") in OUTPUT_TYPES:
        return OUTPUT_TYPES[str(item["type"])]
    return "call_id" if item.get("call_id") not in (None, "") or "call_id" in item else "id"


def call_item(call: ToolUse) -> dict[str, Any] | None:
    """The item of a call read by :func:`call_block`, with the call's current id and payload in
    the fields it came in (``None`` for any other call: a function call). A local shell call
    whose ``call_id`` was ``null`` keeps it and its ``id`` carries the call id."""
    shell = call.item
    if shell is msgspec.UNSET or not isinstance(shell, Mapping):
        return None
    kind = str(shell.get("type"))
    key = CALL_TYPES.get(kind)
    if key is None:
        return None
    out = dict(shell)
    out[key] = call.input.get("input", "") if kind == "custom_tool_call" else dict(call.input)
    id_key = "call_id" if shell.get("call_id") not in (None, "") else "id"
    out[id_key] = call.id
    if "name" in out:
        out["name"] = call.name
    return out


def output_item(result: ToolResult, call: ToolUse | None, output: Any) -> dict[str, Any] | None:
    """The output item of ``result`` with ``output`` as its payload (``None``: a
    ``function_call_output``). A result read from an output item keeps that item's fields and
    order (:func:`output_shell`); one regio made (a repair's synthesized result, regio's own
    answer) to a custom ``call`` is a ``custom_tool_call_output`` (``call_id``, ``output``);
    any other stays a ``function_call_output`` (module doc)."""
    shell = result.item
    if isinstance(shell, Mapping) and shell.get("type") in OUTPUT_TYPES:
        out = dict(shell)
        out[_call_id_key(shell)] = result.tool_use_id
        out["output"] = output
        return out
    kind = None
    if call is not None and isinstance(call.item, Mapping):
        kind = _ANSWER.get(str(call.item.get("type")))
    if kind is None:
        return None
    return {"type": kind, OUTPUT_TYPES[kind]: result.tool_use_id, "output": output}
