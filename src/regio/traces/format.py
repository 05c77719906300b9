"""regio's own trace format: one JSON object per line (JSONL), a tagged union on ``"type"``.

A trace file is a **header** line followed by timed **events**::

    {"type":"header","id":"tau-bench/gpt-4o-airline.first40#0","source_format":"tau-bench",...}
    {"type":"system","t":0.0,"text":"# Airline Agent Policy ..."}
    {"type":"user","t":0.0,"blocks":[{"type":"text","text":"Hi! I'm looking to book ..."}],...}
    {"type":"assistant","t":1.95,"blocks":[{"type":"text","text":"To assist you ..."}],...}

Event types (``t`` is seconds from the start of the run, never decreasing):

=================  =============================================================================
``system``         the system prompt is set (first event) or replaced (later)
``user``           a user message (``observation`` marks an environment observation sent as a
                   user message by a plain-text agent, e.g. SWE-agent without function calling)
``assistant``      one model call's reply: thinking, text and tool_use blocks, optional ``usage``
``tool_results``   one message of tool results (``tool_use_id``, ``content``, ``is_error``)
``region_write``   write ``text`` into ``region`` (under ``key`` for keyed regions)
``region_append``  append ``text`` to ``region``
``region_release`` release entries of ``region``: by ``key``, or the oldest ``count``, or all
``compact``        a manual compaction request with optional ``instructions``
=================  =============================================================================

Blocks are the :mod:`regio.content` types (``text``, ``tool_use``, ``tool_result``,
``thinking``), so a trace's messages are :class:`regio.content.Message` objects.
Reading and writing are :mod:`regio.traces.jsonl`; they round-trip losslessly:
``read_trace(write_trace(t)) == t``.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import msgspec

from regio.content import Message, Text, Thinking, ToolResult, ToolUse
from regio.traces.callusage import Usage
from regio.turngroups import group_messages

__all__ = [
    "FORMAT_VERSION",
    "AssistantMessage",
    "Compaction",
    "Header",
    "RegionAppend",
    "RegionRelease",
    "RegionWrite",
    "Step",
    "SystemPrompt",
    "ToolResults",
    "Trace",
    "TraceEvent",
    "Usage",
    "UserMessage",
]

#: Version of the JSONL layout written into every header. Version 1 kept a tool call's
#: unreadable arguments as ``{"_raw": text}``; it loads with them in today's form,
#: :func:`regio.callargs.invalid_arguments` (``{"_invalid_arguments": text}``).
FORMAT_VERSION = 2


class Header(msgspec.Struct, frozen=True, tag="header", tag_field="type"):
    """First line of a trace file.

    ``id`` names the trace (unique within a corpus); ``source_format`` is the importer that made
    it (``claude-code``, ``codex``, ``openhands``, ``swe-agent``, ``mini-swe-agent``,
    ``tau-bench``, ``openai``, ``synth`` or ``regio``);
    ``source_file`` the file it came from and ``record`` the run's index in that file (tau-bench
    result lists hold many runs); ``agent`` / ``model`` when the source says; ``license`` and
    ``provenance`` say where the data comes from and under which terms; ``tools`` the tool
    schemas when the source recorded them; ``meta`` other small source facts (reward, exit
    status, ...); ``timing`` documents how ``t`` was obtained (``"recorded"`` or the synthetic
    rule, see :mod:`regio.traces.builder`).
    """

    id: str
    source_format: str
    source_file: str = ""
    record: int | None = None
    agent: str | None = None
    model: str | None = None
    license: str = ""
    provenance: str = ""
    timing: str = ""
    tools: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
    version: int = FORMAT_VERSION


class SystemPrompt(msgspec.Struct, frozen=True, tag="system", tag_field="type"):
    """The system prompt is set (or replaced) to ``text`` at time ``t`` (seconds)."""

    t: float
    text: str


class UserMessage(msgspec.Struct, frozen=True, tag="user", tag_field="type"):
    """A user message. ``observation`` is true for an environment observation sent as a user
    message (plain-text agents), false for the human / simulated user / task instance."""

    t: float
    blocks: tuple[Text, ...]
    observation: bool = False


class AssistantMessage(msgspec.Struct, frozen=True, tag="assistant", tag_field="type"):
    """One model call's reply, completed at time ``t``: thinking, text and tool_use blocks in
    their recorded order, and the provider ``usage`` when it was recorded."""

    t: float
    blocks: tuple[Thinking | Text | ToolUse, ...]
    usage: Usage | None = None


class ToolResults(msgspec.Struct, frozen=True, tag="tool_results", tag_field="type"):
    """One message of tool results, each answering a tool_use id of an earlier assistant
    message."""

    t: float
    results: tuple[ToolResult, ...]


class RegionWrite(msgspec.Struct, frozen=True, tag="region_write", tag_field="type"):
    """Write ``text`` to ``region`` (replacing the entry under ``key`` in keyed regions)."""

    t: float
    region: str
    text: str
    key: str | None = None


class RegionAppend(msgspec.Struct, frozen=True, tag="region_append", tag_field="type"):
    """Append ``text`` to ``region``."""

    t: float
    region: str
    text: str
    key: str | None = None


class RegionRelease(msgspec.Struct, frozen=True, tag="region_release", tag_field="type"):
    """Release entries of ``region``: the one under ``key``, else the oldest ``count``, else
    all of them."""

    t: float
    region: str
    key: str | None = None
    count: int | None = None


class Compaction(msgspec.Struct, frozen=True, tag="compact", tag_field="type"):
    """A manual compaction request; ``instructions`` are added to the standing summary
    requirements."""

    t: float
    instructions: str | None = None


TraceEvent = (
    SystemPrompt
    | UserMessage
    | AssistantMessage
    | ToolResults
    | RegionWrite
    | RegionAppend
    | RegionRelease
    | Compaction
)

_MESSAGE_EVENTS = (UserMessage, AssistantMessage, ToolResults)


def event_message(event: TraceEvent) -> Message | None:
    """The conversation message an event adds, or ``None`` for non-message events."""
    if isinstance(event, UserMessage):
        return Message("user", event.blocks)
    if isinstance(event, AssistantMessage):
        return Message("assistant", event.blocks)
    if isinstance(event, ToolResults):
        return Message("tool", event.results)
    return None


class Step(msgspec.Struct, frozen=True):
    """One model call of a trace.

    ``index`` counts model calls from 0; ``t`` is when the request was sent (the time of the
    last event before the reply, seconds); ``system`` the system prompt in effect;
    ``messages`` the conversation visible before the call (as recorded: compaction and region
    events are not applied here, the replay engine applies them); ``response`` the reply;
    ``usage`` the recorded usage, if any; ``event_index`` the index of the reply in
    ``Trace.events``.
    """

    index: int
    t: float
    system: str
    messages: tuple[Message, ...]
    response: Message
    usage: Usage | None
    event_index: int


class Trace(msgspec.Struct, frozen=True):
    """A recorded agent run: a :class:`Header` and its events in time order."""

    header: Header
    events: tuple[TraceEvent, ...] = ()

    @property
    def id(self) -> str:
        """The trace id from the header."""
        return self.header.id

    @property
    def system_prompt(self) -> str:
        """The system prompt in effect at the end of the trace ("" when none was set)."""
        text = ""
        for event in self.events:
            if isinstance(event, SystemPrompt):
                text = event.text
        return text

    @property
    def duration(self) -> float:
        """Time of the last event, in seconds (0.0 for an empty trace)."""
        return self.events[-1].t if self.events else 0.0

    def messages(self) -> list[Message]:
        """The conversation (user, assistant and tool messages) in order, without the system
        prompt."""
        out = []
        for event in self.events:
            message = event_message(event)
            if message is not None:
                out.append(message)
        return out

    def steps(self) -> list[Step]:
        """One :class:`Step` per assistant message (model call), in order."""
        steps: list[Step] = []
        visible: list[Message] = []
        system = ""
        last_t = 0.0
        for i, event in enumerate(self.events):
            if isinstance(event, SystemPrompt):
                system = event.text
            if isinstance(event, AssistantMessage):
                reply = Message("assistant", event.blocks)
                steps.append(
                    Step(len(steps), last_t, system, tuple(visible), reply, event.usage, i)
                )
            message = event_message(event)
            if message is not None:
                visible.append(message)
            last_t = event.t
        return steps

    def tool_calls(self) -> list[ToolUse]:
        """Every tool_use block of the trace in order."""
        return [
            b
            for e in self.events
            if isinstance(e, AssistantMessage)
            for b in e.blocks
            if isinstance(b, ToolUse)
        ]

    def counts(self) -> dict[str, int]:
        """Number of events per ``type`` tag, in first-seen order."""
        counter: Counter[str] = Counter()
        for event in self.events:
            counter[str(event.__struct_config__.tag)] += 1
        return dict(counter)

    def is_append_only(self) -> bool:
        """True when nothing recorded rewrites earlier context: the system prompt is set once
        (or re-set to the same text), and there is no compaction, no region release and no
        region write that replaces an earlier key."""
        system: str | None = None
        keys: set[tuple[str, str]] = set()
        for event in self.events:
            if isinstance(event, SystemPrompt):
                if system is not None and event.text != system:
                    return False
                system = event.text
            elif isinstance(event, (Compaction, RegionRelease)):
                return False
            elif isinstance(event, RegionWrite) and event.key is not None:
                if (event.region, event.key) in keys:
                    return False
                keys.add((event.region, event.key))
        return True

    def problems(self) -> list[str]:
        """Consistency problems, empty for a well-formed trace.

        Reported: a tool_result whose tool_use id does not appear in an earlier assistant
        message (an orphan); a tool_use id used twice; a tool_use not answered before the next
        assistant message (an open group is only allowed at the very end); time going
        backwards. Importers repair what they can, so imported traces report none.
        """
        out: list[str] = []
        messages = self.messages()
        grouping = group_messages(messages)
        for index, call_id in grouping.orphan_results:
            out.append(f"message {index}: tool_result for {call_id!r} has no earlier tool_use")
        seen: set[str] = set()
        pending: list[str] = []
        for index, message in enumerate(messages):
            if message.role == "assistant":
                if pending:
                    out.append(f"message {index}: calls {pending} were not answered before it")
                    pending = []
                for call in message.tool_calls:
                    if call.id in seen:
                        out.append(f"message {index}: tool_use id {call.id!r} is used twice")
                    seen.add(call.id)
                    pending.append(call.id)
            for result in message.tool_results:
                if result.tool_use_id in pending:
                    pending.remove(result.tool_use_id)
        last = 0.0
        for index, event in enumerate(self.events):
            if not math.isfinite(event.t) or event.t < last:
                out.append(f"event {index}: t={event.t} is before {last} or not finite")
            else:
                last = event.t
        return out
