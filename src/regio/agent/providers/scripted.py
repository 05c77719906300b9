"""A provider that answers from a script, for tests and offline examples.

Each call consumes the next script item:

* a :class:`regio.agent.types.Completion`: returned as is (its usage numbers included);
* a :class:`regio.content.Message` (role ``assistant``) or a ``str`` (final answer text):
  wrapped in a completion with zero usage;
* an exception instance: raised (e.g. :class:`regio.agent.errors.ProviderHTTPError` with a
  context-length body, to drive overflow recovery);
* a callable ``item(payload) -> any of the above``: called with the payload, so a script can
  answer from what it was sent.

Every payload received is kept in ``calls`` (a deep copy), in order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from regio.content import Message, Text, ToolUse

from ..errors import AgentConfigError, ScriptExhaustedError
from ..types import Completion, ProviderUsage

__all__ = ["ScriptItem", "ScriptedProvider", "reply"]

ScriptItem = Completion | Message | str | BaseException | Callable[[dict[str, Any]], Any]


def reply(
    text: str = "",
    tool_calls: Sequence[ToolUse | tuple[str, str, dict[str, Any]]] = (),
    *,
    prompt_tokens: int = 0,
    cached_tokens: int = 0,
    cache_write_tokens: int = 0,
    output_tokens: int = 0,
    stop_reason: str | None = None,
) -> Completion:
    """A scripted completion: assistant ``text`` and ``tool_calls`` (``ToolUse`` blocks or
    ``(id, name, input)`` tuples) with the given usage numbers (tokens)."""
    calls = [c if isinstance(c, ToolUse) else ToolUse(c[0], c[1], dict(c[2])) for c in tool_calls]
    message = Message.assistant(text, calls)
    usage = ProviderUsage(
        prompt_tokens=prompt_tokens,
        cached_tokens=cached_tokens,
        cache_write_tokens=cache_write_tokens,
        output_tokens=output_tokens,
    )
    reason = stop_reason if stop_reason is not None else ("tool_calls" if calls else "stop")
    return Completion(message=message, usage=usage, stop_reason=reason, model="scripted")


def _as_completion(item: object, index: int) -> Completion:
    if isinstance(item, Completion):
        return item
    if isinstance(item, Message):
        if item.role != "assistant":
            raise AgentConfigError(
                f"script item {index} is a {item.role!r} message; script assistant messages"
            )
        stop = "tool_calls" if item.tool_calls else "stop"
        return Completion(message=item, stop_reason=stop, model="scripted")
    if isinstance(item, str):
        return Completion(
            message=Message("assistant", (Text(item),)), stop_reason="stop", model="scripted"
        )
    raise AgentConfigError(
        f"script item {index} is a {type(item).__name__}; use a Completion, an assistant "
        "Message, a str, an exception or a callable returning one of these"
    )


@attrs.define
class ScriptedProvider:
    """Answers from ``script`` in order (see module docstring).

    ``api`` selects the payload format the engine renders (``"openai"`` or ``"anthropic"``);
    ``model`` is reported back. Raises :class:`ScriptExhaustedError` when called once more
    than the script has items.
    """

    script: list[Any] = attrs.field(converter=list)
    model: str = "scripted"
    api: str = "openai"
    calls: list[dict[str, Any]] = attrs.field(factory=list)

    @classmethod
    def of(cls, items: Iterable[Any], **kwargs: Any) -> ScriptedProvider:
        """A provider over ``items``."""
        return cls(list(items), **kwargs)

    @property
    def remaining(self) -> int:
        """Script items not yet used."""
        return len(self.script) - len(self.calls)

    def complete(self, payload: dict[str, Any]) -> Completion:
        """Record ``payload``, then return (or raise) the next script item."""
        index = len(self.calls)
        if index >= len(self.script):
            raise ScriptExhaustedError(
                f"ScriptedProvider was called {index + 1} times but has {len(self.script)} "
                "script items; add items or lower the loop's max_steps"
            )
        self.calls.append(copy.deepcopy(payload))
        item = self.script[index]
        if callable(item) and not isinstance(item, (Completion, Message, BaseException)):
            item = item(payload)
        if isinstance(item, BaseException):
            raise item
        return _as_completion(item, index)

    async def acomplete(self, payload: dict[str, Any]) -> Completion:
        """Async twin of :meth:`complete`."""
        return self.complete(payload)
