"""Reading and writing regio's trace format (:mod:`regio.traces.format`) as JSONL text.

:func:`dumps_trace` / :func:`write_trace` write a :class:`~regio.traces.format.Trace` (the
header line, then one line per event); :func:`parse_trace_lines`, :func:`loads_trace` and
:func:`read_trace` read one back, checking each line against the format, its nesting depth and
size against :class:`~regio.traces.safejson.TraceLimits`, and loading version 1 files in
today's form. Round trip: ``read_trace(write_trace(t, path)) == t``. Errors:
:class:`~regio.traces.errors.TraceFormatError` naming the file and line.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from regio.callargs import invalid_arguments
from regio.content import ToolUse
from regio.traces.errors import TraceFormatError
from regio.traces.format import FORMAT_VERSION, AssistantMessage, Header, Trace, TraceEvent
from regio.traces.safejson import DEFAULT_LIMITS, TraceLimits, check_depth
from regio.traces.source import iter_lines

__all__ = ["dumps_trace", "loads_trace", "parse_trace_lines", "read_trace", "write_trace"]


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


def _check_nesting(item: Header | TraceEvent, name: str, number: int, limits: TraceLimits) -> None:
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


def _version_1_input(raw: object) -> dict[str, Any]:
    """Version 1's ``{"_raw": raw}`` in today's form: no input at all (``None``) is ``{}``;
    anything else is :func:`regio.callargs.invalid_arguments` of its text (a string as is,
    another JSON value as JSON)."""
    if raw is None:
        return {}
    return invalid_arguments(raw if isinstance(raw, str) else json.dumps(raw, default=str))


def _version_1_event(item: TraceEvent) -> TraceEvent:
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
