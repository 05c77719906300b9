"""Reading a source file, detecting its format, and importing it.

:func:`import_file` is the entry point: it parses the file (one JSON document, or JSONL with one
object per line), picks the importer (``format="auto"`` uses :func:`detect_format`), and returns
an :class:`ImportResult` with the traces and the issues found. Detection rules, in order:

1. JSONL whose first object is ``{"type": "header", ...}`` → ``regio`` (already a regio trace);
2. JSONL whose first lines have a Codex ``RolloutItem`` tag (``session_meta``,
   ``response_item``, ``event_msg``, ``turn_context``, ``compacted``) with a ``payload`` →
   ``codex``; JSONL lines of ``type`` ``user`` / ``assistant`` with a ``message`` object and a
   ``sessionId`` or ``parentUuid`` (or ``summary`` lines with a ``leafUuid``) →
   ``claude-code``;
3. a JSON list of events with ``source`` and ``action`` / ``observation``, an object whose
   ``history`` is such a list, or JSONL of such objects → ``openhands``;
4. an object with a ``history`` list → ``swe-agent``;
5. an object with ``trajectory_format`` starting ``mini-swe-agent``, or with ``messages`` and an
   ``info`` holding ``mini_version`` → ``mini-swe-agent``;
6. a list (or JSONL) of objects with ``traj`` → ``tau-bench``;
7. a list of ``{role, content}`` messages (or an object with ``messages``) whose file name ends
   ``.traj.json`` or whose text holds mini-swe-agent's markers (``mswea_bash_command``,
   ``<returncode>``) → ``mini-swe-agent``; otherwise → ``openai``.

Anything else raises :class:`TraceFormatError` suggesting ``--format``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, get_args

import msgspec

from regio.traces.builder import Timing
from regio.traces.claudecode import import_claude_code, is_subagent_transcript
from regio.traces.codex import ROLLOUT_TYPES, import_codex
from regio.traces.errors import ImportIssue, TraceFormatError
from regio.traces.format import Trace
from regio.traces.importers import (
    import_mini_swe_agent,
    import_openai,
    import_swe_agent,
    import_tau_bench,
)
from regio.traces.jsonl import parse_trace_lines
from regio.traces.openhands import import_openhands, import_openhands_runs, looks_openhands
from regio.traces.safejson import DEFAULT_LIMITS, TraceLimits
from regio.traces.source import SourceFile, iter_lines, load_source

__all__ = [
    "FORMATS",
    "SOURCE_SUFFIXES",
    "ImportResult",
    "SourceFile",
    "detect_format",
    "expand_sources",
    "import_file",
    "load_source",
]

Format = Literal[
    "regio",
    "swe-agent",
    "mini-swe-agent",
    "tau-bench",
    "openai",
    "claude-code",
    "codex",
    "openhands",
]

#: Format names accepted by :func:`import_file` (besides ``"auto"``).
FORMATS: tuple[str, ...] = (*get_args(Format)[1:], "regio")

#: JSONL formats imported while streaming the file (memory bounded by the trace built).
STREAMED = ("regio", "claude-code", "codex")

#: File name endings taken when a directory is given to :func:`expand_sources`.
SOURCE_SUFFIXES = (".traj", ".json", ".jsonl")

_MINI_MARKERS = ("mswea_bash_command", "<returncode>")


class ImportResult(msgspec.Struct, frozen=True):
    """What :func:`import_file` produced for one file: the ``format`` used, the ``traces`` and
    every ``issue`` found (the file's traces imported despite them)."""

    file: str
    format: str
    traces: tuple[Trace, ...]
    issues: tuple[ImportIssue, ...]


def _looks_mini(path: Path, messages: object) -> bool:
    if path.name.endswith(".traj.json"):
        return True
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and any(marker in content for marker in _MINI_MARKERS):
            return True
    return False


def _jsonl_format(source: SourceFile) -> Format:
    head = [obj for _, obj in source.head or ()]
    first = head[0] if head else None
    if isinstance(first, dict) and first.get("type") == "header":
        return "regio"
    dicts = [obj for obj in head if isinstance(obj, dict)]
    if any(d.get("type") in ROLLOUT_TYPES and isinstance(d.get("payload"), dict) for d in dicts):
        return "codex"
    if any(
        (d.get("type") in ("user", "assistant") and isinstance(d.get("message"), dict))
        and ("sessionId" in d or "parentUuid" in d)
        for d in dicts
    ) or any(d.get("type") == "summary" and "leafUuid" in d for d in dicts):
        return "claude-code"
    if dicts and all("traj" in d for d in dicts):
        return "tau-bench"
    if any(looks_openhands(d.get("history")) for d in dicts):
        return "openhands"
    if isinstance(first, dict) and ("role" in first or "messages" in first):
        return "openai"
    raise TraceFormatError(
        source.path,
        "line 1: JSONL lines are not a regio trace, Claude Code session, Codex rollout, "
        "OpenAI messages or tau-bench runs; pass --format",
    )


def detect_format(source: SourceFile) -> Format:
    """The format of a parsed source (rules: module docstring). Raises
    :class:`TraceFormatError` when no rule matches."""
    path = Path(source.path)
    if source.is_jsonl:
        return _jsonl_format(source)
    data = source.data
    if looks_openhands(data) or (isinstance(data, dict) and looks_openhands(data.get("history"))):
        return "openhands"
    if isinstance(data, dict):
        if isinstance(data.get("history"), list):
            return "swe-agent"
        fmt = data.get("trajectory_format")
        if isinstance(fmt, str) and fmt.startswith("mini-swe-agent"):
            return "mini-swe-agent"
        info = data.get("info")
        if isinstance(data.get("messages"), list):
            if isinstance(info, dict) and "mini_version" in info:
                return "mini-swe-agent"
            return "mini-swe-agent" if _looks_mini(path, data["messages"]) else "openai"
        if isinstance(data.get("traj"), list):
            return "tau-bench"
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        if all("traj" in x for x in data):
            return "tau-bench"
        if any("role" in x for x in data):
            return "mini-swe-agent" if _looks_mini(path, data) else "openai"
    raise TraceFormatError(
        source.path,
        "cannot tell the trace format (expected a SWE-agent .traj, a mini-swe-agent "
        ".traj.json, a tau-bench result list, an OpenHands event list or OpenAI messages); "
        "pass --format",
    )


def _import_jsonl(
    source: SourceFile, chosen: str, timing: Timing
) -> tuple[list[Trace], list[ImportIssue]]:
    p = Path(source.path)
    if chosen == "claude-code":
        subagent = is_subagent_transcript(source.head or ())
        return import_claude_code(source.records(), p, sidechain=subagent)
    if chosen == "codex":
        return import_codex(source.records(), p)
    if chosen == "openhands":
        return import_openhands_runs(source.records(), p)
    lines = source.materialize()
    if chosen == "tau-bench":
        return import_tau_bench([obj for _, obj in lines], p, timing)
    if chosen == "openai":
        return import_openai(None, p, timing, lines=lines)
    raise TraceFormatError(source.path, f"a {chosen} file is one JSON document, not JSONL")


def _import_document(
    source: SourceFile, chosen: str, timing: Timing
) -> tuple[list[Trace], list[ImportIssue]]:
    p, data = Path(source.path), source.data
    if chosen == "swe-agent":
        return import_swe_agent(data, p, timing)
    if chosen == "mini-swe-agent":
        return import_mini_swe_agent(data, p, timing)
    if chosen == "tau-bench":
        return import_tau_bench(data, p, timing)
    if chosen == "openhands":
        return import_openhands(data, p)
    if chosen == "openai":
        return import_openai(data, p, timing)
    raise TraceFormatError(source.path, f"a {chosen} file is JSONL, not one JSON document")


def import_file(
    path: str | os.PathLike[str],
    format: str = "auto",
    *,
    timing: Timing | None = None,
    limits: TraceLimits = DEFAULT_LIMITS,
) -> ImportResult:
    """Import one source file.

    ``format`` is ``"auto"`` or one of :data:`FORMATS`; ``timing`` the synthetic clock for
    sources without timestamps (default :class:`Timing`; Claude Code, Codex and OpenHands logs
    keep their recorded times); ``limits`` the :class:`~regio.traces.safejson.TraceLimits`.
    Raises :class:`TraceFormatError` (a :class:`regio.errors.RegioError`) when the file cannot
    be imported at all (unreadable, over a size limit, not JSON/JSONL, nested too deep, wrong
    shape for the format, unknown format name); record-level problems are returned as
    ``issues``. Never raises another exception for a file's content.
    """
    timing = timing or Timing()
    if format != "auto" and format not in FORMATS:
        raise TraceFormatError(
            str(path), f"unknown format {format!r}; use auto or one of {', '.join(FORMATS)}"
        )
    source = load_source(path, limits)
    chosen = detect_format(source) if format == "auto" else format
    if chosen == "regio":
        if not source.is_jsonl:
            raise TraceFormatError(source.path, "a regio trace is JSONL, not one JSON document")
        with open(source.path, "rb") as handle:
            trace = parse_trace_lines(iter_lines(handle, source.path, limits), source.path, limits)
        return ImportResult(source.path, chosen, (trace,), ())
    if source.is_jsonl:
        traces, found = _import_jsonl(source, chosen, timing)
    else:
        traces, found = _import_document(source, chosen, timing)
    issues = [*source.issues, *found]
    if not any(trace.events for trace in traces):
        first = f" (first issue: {issues[0]})" if issues else ""
        raise TraceFormatError(source.path, f"no {chosen} message could be imported{first}")
    return ImportResult(source.path, chosen, tuple(traces), tuple(issues))


def expand_sources(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files named, plus the source files found under named directories (recursively, sorted;
    names ending in :data:`SOURCE_SUFFIXES`). A missing path raises :class:`TraceFormatError`."""
    out: list[Path] = []
    for item in paths:
        p = Path(item)
        if p.is_dir():
            out.extend(
                sorted(f for f in p.rglob("*") if f.is_file() and f.name.endswith(SOURCE_SUFFIXES))
            )
        elif p.is_file():
            out.append(p)
        else:
            raise TraceFormatError(str(p), "no such file or directory")
    return out
