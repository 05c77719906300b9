"""Reading a source file, detecting its format, and importing it.

:func:`import_file` is the entry point: it parses the file (one JSON document, or JSONL with one
object per line), picks the importer (``format="auto"`` uses :func:`detect_format`), and returns
an :class:`ImportResult` with the traces and the issues found. Detection rules, in order:

1. JSONL whose first object is ``{"type": "header", ...}`` → ``regio`` (already a regio trace);
2. an object with a ``history`` list → ``swe-agent``;
3. an object with ``trajectory_format`` starting ``mini-swe-agent``, or with ``messages`` and an
   ``info`` holding ``mini_version`` → ``mini-swe-agent``;
4. a list (or JSONL) of objects with ``traj`` → ``tau-bench``;
5. a list of ``{role, content}`` messages (or an object with ``messages``) whose file name ends
   ``.traj.json`` or whose text holds mini-swe-agent's markers (``mswea_bash_command``,
   ``<returncode>``) → ``mini-swe-agent``; otherwise → ``openai``.

Anything else raises :class:`TraceFormatError` suggesting ``--format``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import msgspec

from regio.traces.builder import Timing
from regio.traces.errors import ImportIssue, TraceFormatError
from regio.traces.format import Trace, loads_trace
from regio.traces.importers import (
    import_mini_swe_agent,
    import_openai,
    import_swe_agent,
    import_tau_bench,
)

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

Format = Literal["regio", "swe-agent", "mini-swe-agent", "tau-bench", "openai"]

#: Format names accepted by :func:`import_file` (besides ``"auto"``).
FORMATS: tuple[str, ...] = ("swe-agent", "mini-swe-agent", "tau-bench", "openai", "regio")

#: File name endings taken when a directory is given to :func:`expand_sources`.
SOURCE_SUFFIXES = (".traj", ".json", ".jsonl")

_MINI_MARKERS = ("mswea_bash_command", "<returncode>")


class SourceFile(msgspec.Struct, frozen=True):
    """A parsed source file: ``data`` for a JSON document, or ``lines`` (1-based line number,
    object) for JSONL; ``raw`` is the text; ``issues`` are lines that did not parse."""

    path: str
    raw: str
    data: Any = None
    lines: list[tuple[int, Any]] | None = None
    issues: tuple[ImportIssue, ...] = ()


class ImportResult(msgspec.Struct, frozen=True):
    """What :func:`import_file` produced for one file: the ``format`` used, the ``traces`` and
    every ``issue`` found (the file's traces imported despite them)."""

    file: str
    format: str
    traces: tuple[Trace, ...]
    issues: tuple[ImportIssue, ...]


def load_source(path: str | os.PathLike[str]) -> SourceFile:
    """Parse a source file as one JSON document, or else as JSONL.

    In JSONL, a line that is not valid JSON becomes an :class:`ImportIssue` (record = line
    number) and the other lines are kept. Raises :class:`TraceFormatError` when the file cannot
    be read, is empty, or no line is valid JSON.
    """
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFormatError(str(p), f"cannot read the file: {exc}") from None
    if not raw.strip():
        raise TraceFormatError(str(p), "the file is empty")
    try:
        return SourceFile(str(p), raw, data=json.loads(raw))
    except ValueError as whole_error:
        lines: list[tuple[int, Any]] = []
        issues: list[ImportIssue] = []
        numbered = [(n, ln) for n, ln in enumerate(raw.splitlines(), start=1) if ln.strip()]
        for number, line in numbered:
            try:
                lines.append((number, json.loads(line)))
            except ValueError as exc:
                issues.append(ImportIssue(str(p), number, "", f"not valid JSON: {exc}; skipped"))
        if not lines or len(numbered) == 1:
            raise TraceFormatError(str(p), f"not valid JSON or JSONL: {whole_error}") from None
        return SourceFile(str(p), raw, lines=lines, issues=tuple(issues))


def _looks_mini(path: Path, messages: Any) -> bool:
    if path.name.endswith(".traj.json"):
        return True
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and any(marker in content for marker in _MINI_MARKERS):
            return True
    return False


def detect_format(source: SourceFile) -> Format:
    """The format of a parsed source (rules: module docstring). Raises
    :class:`TraceFormatError` when no rule matches."""
    path = Path(source.path)
    if source.lines is not None:
        first = source.lines[0][1]
        if isinstance(first, dict) and first.get("type") == "header":
            return "regio"
        if all(isinstance(obj, dict) and "traj" in obj for _, obj in source.lines):
            return "tau-bench"
        if isinstance(first, dict) and ("role" in first or "messages" in first):
            return "openai"
        raise TraceFormatError(
            source.path,
            "JSONL lines are neither messages, conversations nor tau-bench runs; pass --format",
        )
    data = source.data
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
        ".traj.json, a tau-bench result list or OpenAI messages); pass --format",
    )


def import_file(
    path: str | os.PathLike[str], format: str = "auto", *, timing: Timing | None = None
) -> ImportResult:
    """Import one source file.

    ``format`` is ``"auto"`` or one of :data:`FORMATS`; ``timing`` the synthetic clock
    (default :class:`Timing`). Raises :class:`TraceFormatError` when the file cannot be
    imported at all (unreadable, not JSON/JSONL, wrong shape for the format, unknown format
    name); record-level problems are returned as ``issues``.
    """
    timing = timing or Timing()
    if format != "auto" and format not in FORMATS:
        raise TraceFormatError(
            str(path), f"unknown format {format!r}; use auto or one of {', '.join(FORMATS)}"
        )
    source = load_source(path)
    chosen = detect_format(source) if format == "auto" else format
    p = Path(source.path)
    issues = list(source.issues)
    if chosen == "regio":
        return ImportResult(source.path, chosen, (loads_trace(source.raw, source.path),), ())
    data = source.data
    if source.lines is not None and chosen != "openai":
        if chosen == "tau-bench":
            data = [obj for _, obj in source.lines]
        else:
            raise TraceFormatError(source.path, f"a {chosen} file is one JSON document, not JSONL")
    if chosen == "swe-agent":
        traces, found = import_swe_agent(data, p, timing)
    elif chosen == "mini-swe-agent":
        traces, found = import_mini_swe_agent(data, p, timing)
    elif chosen == "tau-bench":
        traces, found = import_tau_bench(data, p, timing)
    else:
        traces, found = import_openai(data, p, timing, lines=source.lines)
    issues.extend(found)
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
