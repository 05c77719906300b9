"""User tools for the agent loop: a name, a description, a JSON Schema and a Python callable.

A :class:`Tool` is what the agent may call besides the engine's own context tools
(``context_write``, ``todo_add``, ... from :meth:`regio.engine.Engine.tools`). The callable
receives the call's arguments as keyword arguments and returns the tool result: a ``str`` (used
as is) or any JSON-able value (serialized as JSON). It may be a coroutine function; the sync
loop then runs it to completion with :func:`asyncio.run`.

Errors never escape into the loop: an exception raised by the callable, arguments that are not a
JSON object, or missing required arguments come back to the agent as an error tool result
(``is_error=True``) whose text says what went wrong and what to do.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from regio.content import ToolResult, canonical_json

from .errors import AgentConfigError

__all__ = ["Tool", "UserToolOutcome"]


@attrs.frozen
class UserToolOutcome:
    """The text a tool call produced, whether it is an error, and whether it is final.

    A tool of a long-running or background job returns ``UserToolOutcome("status: running,
    job 42", final=False)``: a progress report that keeps the call's turn group open (never
    evicted or compacted) until the application adds the final result with
    ``engine.add_tool_result(call_id, text)``; the latest result of a call is the one
    rendered (:class:`regio.content.ToolResult`)."""

    content: str
    is_error: bool = False
    final: bool = True

    def result(self, tool_use_id: str) -> ToolResult:
        """This outcome as the :class:`ToolResult` answering ``tool_use_id``."""
        return ToolResult(
            tool_use_id=tool_use_id, content=self.content, is_error=self.is_error, final=self.final
        )


def _check_schema(instance: Tool, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, dict) or value.get("type") != "object":
        raise AgentConfigError(
            f"Tool {instance.name!r}: input_schema must be a JSON Schema object "
            '(a dict with "type": "object"); got ' + repr(value)[:80]
        )


def _check_name(instance: Tool, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value or len(value) > 64:
        raise AgentConfigError(
            f"Tool name {value!r} is invalid: give a non-empty name of at most 64 characters"
        )
    if not all(c.isalnum() or c in "_-" for c in value):
        raise AgentConfigError(
            f"Tool name {value!r} is invalid: use only letters, digits, '_' and '-' "
            "(the providers' tool-name pattern)"
        )


@attrs.define(frozen=True)
class Tool:
    """A user tool.

    * ``name``: letters, digits, ``_`` and ``-`` (at most 64; the providers' pattern);
    * ``description``: what it does, shown to the model;
    * ``input_schema``: a JSON Schema object (``{"type": "object", "properties": ...}``);
    * ``fn``: ``fn(**arguments) -> str | JSON-able`` (sync or async).

    Raises :class:`regio.agent.errors.AgentConfigError` for an invalid name or schema.
    """

    name: str = attrs.field(validator=_check_name)
    description: str
    input_schema: dict[str, Any] = attrs.field(validator=_check_schema)
    fn: Callable[..., Any]

    def spec(self) -> dict[str, Any]:
        """The tool definition: ``{"name", "description", "input_schema"}``."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def _not_an_object(self, arguments: object) -> str:
        return (
            f"Error: the arguments of {self.name} must be a JSON object; got "
            f"{type(arguments).__name__}. Call {self.name} again with an object."
        )

    def _missing_arguments(self, arguments: Mapping[str, object]) -> str | None:
        required = self.input_schema.get("required", ())
        missing = [k for k in required if k not in arguments]
        if missing:
            return (
                f"Error: {self.name} is missing required argument(s) {', '.join(missing)}. "
                f"Call {self.name} again with them."
            )
        return None

    def _format(self, value: object) -> UserToolOutcome:
        if isinstance(value, UserToolOutcome):
            return value
        if isinstance(value, str):
            return UserToolOutcome(value)
        try:
            return UserToolOutcome(canonical_json(value).decode())
        except (TypeError, ValueError):
            return UserToolOutcome(json.dumps(value, default=str, sort_keys=True))

    def _error(self, exc: BaseException) -> UserToolOutcome:
        return UserToolOutcome(
            f"Error: {self.name} failed with {type(exc).__name__}: {exc}. "
            "Check the arguments and try again, or continue without this result.",
            is_error=True,
        )

    def _start(self, arguments: object) -> tuple[UserToolOutcome | None, Any]:
        """``(outcome, None)`` when the arguments are refused or the call raised, else
        ``(None, value)`` with the tool's value (an awaitable for an async tool)."""
        if not isinstance(arguments, dict):
            return UserToolOutcome(self._not_an_object(arguments), is_error=True), None
        problem = self._missing_arguments(arguments)
        if problem is not None:
            return UserToolOutcome(problem, is_error=True), None
        try:
            return None, self.fn(**arguments)
        except Exception as exc:
            return self._error(exc), None

    def call(self, arguments: object) -> UserToolOutcome:
        """Run the tool synchronously; errors come back as an error :class:`UserToolOutcome`."""
        done, value = self._start(arguments)
        if done is not None:
            return done
        if inspect.isawaitable(value):
            try:
                value = asyncio.run(_await(value))
            except Exception as exc:
                return self._error(exc)
        return self._format(value)

    async def acall(self, arguments: object) -> UserToolOutcome:
        """Run the tool, awaiting it when it is async; errors come back as text."""
        done, value = self._start(arguments)
        if done is not None:
            return done
        if inspect.isawaitable(value):
            try:
                value = await value
            except Exception as exc:
                return self._error(exc)
        return self._format(value)


async def _await(value: Awaitable[object]) -> object:
    return await value
