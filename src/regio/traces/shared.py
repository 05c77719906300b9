"""What every importer shares: the header of a trace read from a source file, recorded
timestamps turned into ``t``, and a tool call's arguments read under the trace limits.

The importers (:mod:`regio.traces.importers`, :mod:`regio.traces.claudecode`,
:mod:`regio.traces.codex`, :mod:`regio.traces.openhands`) import these helpers from here and
never import one another.

**Tool arguments.** A tool call's arguments are an object (Anthropic ``tool_use.input``) or a
JSON text of one (OpenAI ``tool_calls[].function.arguments``, Responses
``function_call.arguments``; https://platform.openai.com/docs/guides/function-calling).
:func:`parse_arguments` keeps anything else in the form the rest of regio uses,
:func:`regio.callargs.invalid_arguments`: ``{"_invalid_arguments": "<the text sent>"}``, with a
warning issue, so a replayed call is answered with an error tool result as a live one is.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs

from regio.callargs import INVALID_ARGUMENTS_KEY, invalid_arguments
from regio.traces.builder import TraceBuilder
from regio.traces.errors import ImportIssue, TraceFormatError
from regio.traces.format import Header, Trace
from regio.traces.safejson import parse_json, replace_surrogates
from regio.traces.sidefiles import side_file_text

__all__ = [
    "RECORDED_TIMING",
    "RecordedClock",
    "parse_arguments",
    "parse_timestamp",
    "recorded_trace",
    "source_header",
    "source_notes",
    "trace_stem",
]

#: The ``timing`` note of a trace whose ``t`` come from the source's timestamps.
RECORDED_TIMING = "recorded: source timestamps, seconds from the first record"


def trace_stem(path: Path) -> str:
    """The file name without its trace suffixes (``.traj.json``, ``.traj``, ``.json``,
    ``.jsonl``)."""
    name = path.name
    for suffix in (".traj.json", ".jsonl", ".json", ".traj"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def source_notes(path: Path) -> tuple[str, str]:
    """(licence, provenance) notes for a source file.

    The licence is the first non-empty line of a ``LICENSE*`` file beside the source plus its
    first copyright line; the provenance is the line of a ``PROVENANCE.md`` (beside the file or
    one level up) that names the file. Empty strings when absent. A side file is read only
    when it is a small regular file inside the folder it is found in
    (:func:`regio.traces.sidefiles.side_file_text`); any other is skipped with a warning.
    """
    license_note = ""
    for candidate in sorted(path.parent.glob("LICENSE*")):
        text = side_file_text(candidate)
        lines = [ln.strip() for ln in (text or "").splitlines()]
        lines = [ln for ln in lines if ln]
        if lines:
            copyright_line = next((ln for ln in lines if ln.lower().startswith("copyright")), "")
            license_note = "; ".join(x for x in (lines[0], copyright_line) if x)
            break
    provenance = ""
    for directory in (path.parent, path.parent.parent):
        doc = directory / "PROVENANCE.md"
        if doc.exists() or doc.is_symlink():
            for line in (side_file_text(doc) or "").splitlines():
                if path.name in line:
                    provenance = " ".join(line.strip().strip("|").split())
                    break
        if provenance:
            break
    return license_note, provenance


def source_header(path: Path, trace_id: str, fmt: str, **fields: Any) -> Header:
    """A :class:`Header` for a trace imported from ``path`` (licence and provenance notes from
    :func:`source_notes`); ``fields`` are the other header fields."""
    license_note, provenance = source_notes(path)
    return Header(
        id=trace_id,
        source_format=fmt,
        source_file=str(path),
        license=license_note,
        provenance=provenance,
        **fields,
    )


def parse_timestamp(value: object) -> float | None:
    """An ISO 8601 timestamp (``Z`` or an offset; naive = UTC) as POSIX seconds, else None."""
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


@attrs.define
class RecordedClock:
    """Turns recorded timestamps into ``t`` on a builder (seconds from the first one)."""

    builder: TraceBuilder
    start: float | None = None

    def __call__(self, value: object) -> None:
        seconds = parse_timestamp(value)
        if seconds is None:
            return
        if self.start is None:
            self.start = seconds
        self.builder.at(seconds - self.start)


def recorded_trace(
    builder: TraceBuilder,
    path: Path,
    trace_id: str,
    fmt: str,
    agent: tuple[str, Any],
    model: str | None,
    meta: dict[str, Any],
) -> tuple[list[Trace], list[ImportIssue]]:
    """The one trace of a recorded session read into ``builder``, and its issues: the header
    of source format ``fmt`` names ``agent`` (a product name and the version the source gave;
    the version is added when it is a string), ``model`` and ``meta``, with recorded timing."""
    name, version = agent
    header = source_header(
        path,
        trace_id,
        fmt,
        agent=f"{name} {version}" if isinstance(version, str) else name,
        model=model,
        timing=RECORDED_TIMING,
        meta=meta,
    )
    return [builder.build(header)], builder.issues


def parse_arguments(
    raw: object, builder: TraceBuilder, record: int | None, field: str
) -> dict[str, Any]:
    """A tool call's arguments as an input dict (module doc).

    A dict is used as is; a JSON text holding an object (within the builder's trace limits:
    depth, integer digits) is parsed; ``None`` or a blank text is ``{}``. Anything else is
    :func:`regio.callargs.invalid_arguments` of the text sent (lone surrogates replaced by
    U+FFFD; a value of another type as its ASCII JSON text), with a warning issue at ``record`` /
    ``field``."""
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    kept = f"kept as {INVALID_ARGUMENTS_KEY}"
    if isinstance(raw, str):
        try:
            value, _ = parse_json(raw, builder.file, field)
        except TraceFormatError as exc:
            builder.issue(record, field, f"arguments refused ({exc.reason}); {kept}", "warning")
            return invalid_arguments(replace_surrogates(raw)[0])
        if isinstance(value, dict):
            return value
        builder.issue(record, field, f"arguments are JSON but not an object; {kept}", "warning")
        return invalid_arguments(raw)
    builder.issue(record, field, f"arguments of type {type(raw).__name__}; {kept}", "warning")
    return invalid_arguments(json.dumps(raw, default=str))
