"""A provider that answers with the assistant messages of a recorded run, in order.

Sources: a regio trace (:class:`regio.traces.format.Trace` or a path to its JSONL file), whose
``assistant`` events (with their recorded ``usage``) are replayed, or a plain list of
assistant :class:`regio.content.Message` / :class:`regio.agent.types.Completion` objects.
The payload is ignored except for being recorded in ``calls``; the replay does not check that
the conversation matches the recording.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from regio.content import Message

from ..errors import AgentConfigError, ReplayExhaustedError
from ..types import USAGE_COUNTS, Completion, ProviderUsage

if TYPE_CHECKING:
    from regio.traces.format import Trace, Usage

__all__ = ["ReplayProvider"]


@attrs.define
class ReplayProvider:
    """Replays ``completions`` in order; raises :class:`ReplayExhaustedError` past the end."""

    completions: list[Completion]
    model: str = "replay"
    api: str = "openai"
    calls: list[dict[str, Any]] = attrs.field(factory=list)

    @classmethod
    def from_messages(
        cls, messages: Iterable[Message | Completion], **kwargs: Any
    ) -> ReplayProvider:
        """A replay of assistant messages (or completions); other roles are refused with
        :class:`AgentConfigError` naming the index."""
        out: list[Completion] = []
        for index, item in enumerate(messages):
            if isinstance(item, Completion):
                out.append(item)
                continue
            if not isinstance(item, Message) or item.role != "assistant":
                raise AgentConfigError(
                    f"ReplayProvider item {index} is not an assistant message; pass only the "
                    "assistant turns of the recording"
                )
            stop = "tool_calls" if item.tool_calls else "stop"
            out.append(Completion(message=item, stop_reason=stop, model="replay"))
        return cls(out, **kwargs)

    @classmethod
    def from_trace(cls, trace: Trace | str | os.PathLike[str], **kwargs: Any) -> ReplayProvider:
        """A replay of a regio trace's assistant events (a ``Trace`` or a JSONL path), with
        their recorded usage."""
        from regio.traces.format import AssistantMessage, Trace
        from regio.traces.jsonl import read_trace

        if isinstance(trace, (str, os.PathLike)):
            trace = read_trace(trace)
        if not isinstance(trace, Trace):
            raise AgentConfigError(
                f"ReplayProvider.from_trace takes a Trace or a path, not {type(trace).__name__}"
            )
        out: list[Completion] = []
        for event in trace.events:
            if not isinstance(event, AssistantMessage):
                continue
            message = Message("assistant", tuple(event.blocks))
            usage = ProviderUsage(unreported=USAGE_COUNTS)  # the trace recorded none
            if event.usage is not None:
                usage = ProviderUsage(
                    prompt_tokens=event.usage.prompt_tokens,
                    cached_tokens=event.usage.cached_tokens,
                    cache_write_tokens=event.usage.cache_write_tokens,
                    output_tokens=event.usage.output_tokens,
                    unreported=recorded_unreported(event.usage),
                )
            stop = "tool_calls" if message.tool_calls else "stop"
            out.append(
                Completion(
                    message=message,
                    usage=usage,
                    stop_reason=stop,
                    model=trace.header.model or "replay",
                )
            )
        if not out:
            raise AgentConfigError(f"trace {trace.id!r} has no assistant events to replay")
        return cls(out, **kwargs)

    @property
    def remaining(self) -> int:
        """Recorded answers not yet replayed."""
        return len(self.completions) - len(self.calls)

    def complete(self, payload: dict[str, Any]) -> Completion:
        """Record ``payload`` and return the next recorded answer."""
        index = len(self.calls)
        if index >= len(self.completions):
            raise ReplayExhaustedError(
                f"the replay has {len(self.completions)} recorded answers and all were used; "
                "stop the loop earlier (max_steps) or record a longer run"
            )
        self.calls.append(copy.deepcopy(payload))
        return self.completions[index]

    async def acomplete(self, payload: dict[str, Any]) -> Completion:
        """Async twin of :meth:`complete`."""
        return self.complete(payload)


def recorded_unreported(usage: Usage) -> tuple[str, ...]:
    """The counts of a recorded :class:`regio.traces.format.Usage` its provider left out: those
    whose own name is missing from ``usage.reported`` (a usage of unknown provider, or with no
    ``reported`` names, counts as fully reported, as it was read). The names are
    :meth:`regio.traces.format.Usage.reported_names`."""
    from regio.traces.format import Usage

    names = Usage.reported_names(usage.provider)
    if not names or not usage.reported:
        return ()
    return tuple(n for n in USAGE_COUNTS if n in names and names[n] not in usage.reported)
