"""The arguments of an OpenAI function call, read once for every reader in regio.

OpenAI sends a tool call's arguments as a JSON text (Chat Completions
``tool_calls[].function.arguments``, Responses ``function_call.arguments``;
https://platform.openai.com/docs/guides/function-calling): usually a JSON object, but a model
can produce text that is not JSON, JSON that is not an object, or JSON nested deeper than any
tool schema. :func:`function_arguments` never raises for any of them: the SDK readers
(:mod:`regio.sdk._objects`, :mod:`regio.sdk._media`, :mod:`regio.adapters.chat`), the
agent loop's providers (:mod:`regio.providers.wire`) and the transcript reader of the
token CLI (:mod:`regio.tokens.chatfile`) all keep what the model sent, so the agent loop can
answer such a call with an error tool result that quotes it.

This module imports nothing of regio, so every layer can use it without an import cycle.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["INVALID_ARGUMENTS_KEY", "MAX_ARGUMENT_DEPTH", "function_arguments", "invalid_arguments"]

#: Key under which a tool call's unreadable ``arguments`` are kept, as the text the model
#: sent: ``{INVALID_ARGUMENTS_KEY: "<text>"}`` (the agent loop answers such a call with an
#: error tool result instead of running the tool).
INVALID_ARGUMENTS_KEY = "_invalid_arguments"

#: Deepest nesting (objects and arrays, the arguments object itself is level 1) read as
#: arguments; deeper JSON gets the invalid-arguments form. No tool schema nests this deep, and
#: the bound keeps later recursive work (canonical JSON, hashing) far from Python's recursion
#: limit.
MAX_ARGUMENT_DEPTH = 64


def invalid_arguments(raw: object) -> dict[str, str]:
    """The invalid-arguments form of ``raw``: ``{INVALID_ARGUMENTS_KEY: text}`` where text is
    ``raw`` itself for a string, decoded UTF-8 (errors replaced) for bytes, else ``str(raw)``."""
    if isinstance(raw, bytes | bytearray):
        return {INVALID_ARGUMENTS_KEY: bytes(raw).decode("utf-8", "replace")}
    if isinstance(raw, str):
        return {INVALID_ARGUMENTS_KEY: raw}
    try:
        return {INVALID_ARGUMENTS_KEY: str(raw)}
    except Exception:  # a hostile or too deep __str__
        return {INVALID_ARGUMENTS_KEY: f"<{type(raw).__name__}>"}


def _depth_over(value: object, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` dicts / lists (iterative, never recurses)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def function_arguments(raw: object) -> dict[str, Any]:
    """A function call's arguments as a dict; never raises.

    * a ``Mapping`` (an SDK that parsed them already): a shallow copy as a dict;
    * ``None``, ``""`` or a text of only whitespace: ``{}`` (a call without arguments);
    * a JSON text (``str`` or ``bytes``) of an object nested at most
      :data:`MAX_ARGUMENT_DEPTH` levels: the parsed object;
    * anything else (text that is not JSON, JSON that is not an object, JSON nested deeper,
      another type): :func:`invalid_arguments` of ``raw``, ``{"_invalid_arguments": text}``.
    """
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None:
        return {}
    if not isinstance(raw, str | bytes | bytearray):
        return invalid_arguments(raw)
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # JSONDecodeError, bad UTF-8, nesting past the stack
        return invalid_arguments(raw)
    if not isinstance(value, dict) or _depth_over(value, MAX_ARGUMENT_DEPTH):
        return invalid_arguments(raw)
    return value
