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
Reading and writing round-trip losslessly: ``read_trace(write_trace(t)) == t``.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from regio.callargs import invalid_arguments
from regio.content import Message, Text, Thinking, ToolResult, ToolUse, group_messages
from regio.traces.callusage import Usage
from regio.traces.errors import TraceFormatError
from regio.traces.safejson import DEFAULT_LIMITS, TraceLimits, check_depth
from regio.traces.source import iter_lines

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
    "dumps_trace",
    "loads_trace",
    "parse_trace_lines",
    "read_trace",
    "write_trace",
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


_line_decoder = msgspec.json.Decoder(Header | TraceEvent)
_encoder = msgspec.json.Encoder()
_SURROGATE_PAIR = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _has_lone_surrogate(line: bytes) -> bool:
    return _SURROGATE_ESCAPE.search(_SURROGATE_PAIR.sub(b"", line)) is not None


def dumps_trace(trace: Trace) -> str:
    """The trace as JSONL text: the header line, then one line per event, newline-terminated.

    Raises :class:`TraceFormatError` when a string holds a lone UTF-16 surrogate (no UTF-8
    encoding exists; importers replace them, see :mod:`regio.traces.safejson`)."""
    lines = []
    for index, item in enumerate((trace.header, *trace.events)):
        try:
            lines.append(_encoder.encode(item))
        except UnicodeEncodeError as exc:
            where = "the header" if index == 0 else f"event {index - 1}"
            raise TraceFormatError(
                trace.header.id,
                f"{where} holds a lone UTF-16 surrogate ({exc.reason}); replace it (e.g. with "
                "U+FFFD) before writing",
            ) from None
    return b"\n".join(lines).decode() + "\n"


def _decode_line(line: bytes, name: str, number: int, limits: TraceLimits) -> Any:
    try:
        item = _line_decoder.decode(line)
    except RecursionError:
        raise TraceFormatError(
            name, f"line {number}: JSON nested deeper than {limits.max_depth} levels; refused"
        ) from None
    except msgspec.DecodeError as exc:
        if _has_lone_surrogate(line):
            raise TraceFormatError(
                name,
                f"line {number}: a lone UTF-16 surrogate escape (no UTF-8 encoding exists); "
                "regio traces refuse them, re-import the source (importers replace them)",
            ) from None
        raise TraceFormatError(name, f"line {number}: {exc}") from None
    _check_nesting(item, name, number, limits)
    return item


def _check_nesting(item: Any, name: str, number: int, limits: TraceLimits) -> None:
    values: list[Any] = []
    if isinstance(item, Header):
        values = [item.meta, list(item.tools)]
    elif isinstance(item, AssistantMessage):
        values = [b.input for b in item.blocks if isinstance(b, ToolUse)]
    for value in values:
        depth = check_depth(value, limits.max_depth)
        if depth is not None:
            raise TraceFormatError(
                name,
                f"line {number}: JSON nested {depth}+ levels deep (the limit is "
                f"{limits.max_depth}); refused",
            )


def _version_1_input(raw: Any) -> dict[str, Any]:
    """Version 1's ``{"_raw": raw}`` in today's form: no input at all (``None``) is ``{}``;
    anything else is :func:`regio.callargs.invalid_arguments` of its text (a string as is,
    another JSON value as JSON)."""
    if raw is None:
        return {}
    return invalid_arguments(raw if isinstance(raw, str) else json.dumps(raw, default=str))


def _version_1_event(item: Any) -> Any:
    """``item`` of a version-1 trace in today's form: a tool_use input that is exactly
    ``{"_raw": <value>}`` (version 1's unreadable or non-object arguments) becomes
    :func:`_version_1_input` of the value."""
    if not isinstance(item, AssistantMessage):
        return item
    blocks = tuple(
        ToolUse(b.id, b.name, _version_1_input(b.input["_raw"]))
        if isinstance(b, ToolUse) and len(b.input) == 1 and "_raw" in b.input
        else b
        for b in item.blocks
    )
    return item if blocks == item.blocks else msgspec.structs.replace(item, blocks=blocks)


def parse_trace_lines(
    lines: Iterable[tuple[int, bytes]], name: str = "<string>", limits: TraceLimits = DEFAULT_LIMITS
) -> Trace:
    """Build a :class:`Trace` from numbered JSONL lines (see :func:`loads_trace`)."""
    header: Header | None = None
    events: list[Any] = []
    last_t = 0.0
    for number, line in lines:
        if not line.strip():
            continue
        item = _decode_line(line, name, number, limits)
        if isinstance(item, Header):
            if header is not None:
                raise TraceFormatError(name, f"line {number}: a second header line")
            if item.version > FORMAT_VERSION:
                raise TraceFormatError(
                    name,
                    f"line {number}: trace format version {item.version} is newer than this "
                    f"regio reads ({FORMAT_VERSION}); upgrade regio",
                )
            header = item
            continue
        if header is None:
            raise TraceFormatError(
                name, f'line {number}: the first line must be a header ({{"type":"header"}})'
            )
        if not math.isfinite(item.t) or item.t < last_t:
            raise TraceFormatError(
                name, f"line {number}: t={item.t} must be finite and not before {last_t}"
            )
        last_t = item.t
        events.append(_version_1_event(item) if header.version < 2 else item)
    if header is None:
        raise TraceFormatError(name, "no header line: the file is empty")
    return Trace(header, tuple(events))


def loads_trace(
    text: str | bytes, name: str = "<string>", limits: TraceLimits = DEFAULT_LIMITS
) -> Trace:
    """Parse JSONL text into a :class:`Trace`.

    Blank lines are skipped. Raises :class:`TraceFormatError` naming ``name`` and the line when
    a line is not valid JSON or not a known event, when the first line is not a header, when a
    header appears twice or is of a newer format version, when ``t`` is not finite or goes
    backwards, when a value nests deeper than ``limits.max_depth``, or when a string holds a
    lone UTF-16 surrogate escape.
    """
    try:
        raw = text.encode() if isinstance(text, str) else text
    except UnicodeEncodeError as exc:
        raise TraceFormatError(name, f"the text holds a lone surrogate: {exc.reason}") from None
    return parse_trace_lines(enumerate(raw.splitlines(), start=1), name, limits)


def read_trace(path: str | os.PathLike[str], limits: TraceLimits = DEFAULT_LIMITS) -> Trace:
    """Read a regio trace file (JSONL), streamed line by line (a line read in pieces of
    ``limits.max_line_bytes``, at most ``limits.max_document_bytes``; the file at most
    ``limits.max_file_bytes``). Raises
    :class:`TraceFormatError` (see :func:`loads_trace`) or ``OSError`` when the file cannot be
    opened."""
    p = Path(path)
    size = p.stat().st_size
    if size > limits.max_file_bytes:
        raise TraceFormatError(
            str(p), f"{size} bytes is over the {limits.max_file_bytes}-byte max_file_bytes"
        )
    with open(p, "rb") as handle:
        return parse_trace_lines(iter_lines(handle, str(p), limits), str(p), limits)


def write_trace(trace: Trace, path: str | os.PathLike[str]) -> Path:
    """Write ``trace`` as JSONL to ``path`` atomically (temp file + rename); returns the path.
    Parent directories are created."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(dumps_trace(trace))
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p
