"""Reading a source file under limits: one JSON document, or JSONL streamed line by line.

:func:`load_source` decides the shape from the first line: when it is a complete JSON value and
more non-blank lines follow, the file is JSONL; a single line holding a record of a JSONL format
(``type`` in :data:`LINE_TYPES`) is JSONL too; otherwise it is one JSON document. A JSON
document is read whole, so it must fit ``max_document_bytes``; JSONL is never read whole:
:meth:`SourceFile.records` streams it again line by line, which keeps the memory of an import
bounded by the trace it builds, not by the file. A line is read in pieces of at most
``max_line_bytes`` and joined, so a line longer than that (one tool result of 50 MiB) still
loads; one JSON value is never larger than ``max_document_bytes``, so a longer line is
refused, naming it, with no more than that read. Every value goes through
:func:`regio.traces.safejson.parse_json` (depth, integer and surrogate limits).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from regio.traces.errors import ImportIssue, TraceFormatError
from regio.traces.safejson import DEFAULT_LIMITS, TraceLimits, parse_json

__all__ = ["HEAD_LINES", "LINE_TYPES", "SourceFile", "iter_lines", "load_source"]

#: JSONL lines parsed up front for format detection.
HEAD_LINES = 32

#: ``type`` tags of a JSONL record (regio, Claude Code, Codex): a one-line file holding one of
#: them is JSONL, not a JSON document.
LINE_TYPES = frozenset(
    {
        "header",
        "user",
        "assistant",
        "summary",
        "system",
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
    }
)


@attrs.define
class SourceFile:
    """A source file: ``data`` for a JSON document, or, for JSONL, ``head`` (the first
    :data:`HEAD_LINES` parsed lines as (1-based line number, object)) and :meth:`records`.
    ``issues`` collects lines that did not parse and replaced surrogates; ``size`` is in
    bytes."""

    path: str
    size: int
    limits: TraceLimits = DEFAULT_LIMITS
    data: Any = None
    head: list[tuple[int, Any]] | None = None
    issues: list[ImportIssue] = attrs.field(factory=list)

    @property
    def is_jsonl(self) -> bool:
        """True when the file is JSONL."""
        return self.head is not None

    def records(self) -> Iterator[tuple[int, Any]]:
        """Every JSONL line as (line number, object), streamed from the file. A line that is
        not valid JSON (or breaks a limit other than the line size) is added to ``issues``
        and skipped; a line over ``max_document_bytes`` raises :class:`TraceFormatError`."""
        with _open(self.path) as handle:
            for number, line in iter_lines(handle, self.path, self.limits):
                value = self._parse_line(number, line)
                if value is not _SKIP:
                    yield number, value

    def _parse_line(self, number: int, line: bytes) -> Any:
        try:
            value, replaced = parse_json(line, self.path, f"line {number}", self.limits)
        except TraceFormatError as exc:
            self.issues.append(ImportIssue(self.path, number, "", f"{exc.reason}; skipped"))
            return _SKIP
        if replaced:
            self.issues.append(_surrogate_issue(self.path, number, replaced))
        return value

    def materialize(self) -> list[tuple[int, Any]]:
        """All JSONL records as a list, for the formats that need the whole file (OpenAI
        message lists, tau-bench runs); refused above ``max_document_bytes``."""
        _check_size(self.path, self.size, self.limits.max_document_bytes, "this JSONL format")
        return list(self.records())


_SKIP = object()


def _surrogate_issue(path: str, record: int | None, count: int) -> ImportIssue:
    return ImportIssue(
        path,
        record,
        "",
        f"{count} lone UTF-16 surrogate(s) replaced by U+FFFD (no UTF-8 encoding exists)",
        "warning",
    )


def _open(path: str) -> IO[bytes]:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise TraceFormatError(path, f"cannot read the file: {exc.strerror or exc}") from None


def _read(handle: IO[bytes], path: str, size: int) -> bytes:
    try:
        return handle.readline(size)
    except OSError as exc:
        raise TraceFormatError(path, f"cannot read the file: {exc}") from None


def iter_lines(handle: IO[bytes], path: str, limits: TraceLimits) -> Iterator[tuple[int, bytes]]:
    """Non-blank lines with their 1-based numbers. Each is read in pieces of at most
    ``max_line_bytes`` (so a long line loads); a line longer than ``max_document_bytes`` (the
    most one JSON value may hold) raises :class:`TraceFormatError` naming it, with no more than
    that read."""
    piece = max(1, limits.max_line_bytes)
    cap = limits.max_document_bytes
    number = 0
    while True:
        line = _read(handle, path, min(piece, cap + 1))
        if not line:
            return
        number += 1
        if not line.endswith(b"\n") and len(line) == min(piece, cap + 1):
            parts = bytearray(line)
            while not parts.endswith(b"\n") and len(parts) <= cap:
                more = _read(handle, path, min(piece, cap + 1 - len(parts)))
                if not more:
                    break
                parts += more
            if len(parts) > cap:
                raise TraceFormatError(
                    path,
                    f"line {number}: longer than {cap} bytes (max_document_bytes, the most one "
                    "JSON value may hold); refused",
                )
            line = bytes(parts)
        if line.strip():
            yield number, line


def _parses(line: bytes, limits: TraceLimits, kind: type = object) -> bool:
    try:
        value, _ = parse_json(line, "", "", limits)
    except TraceFormatError:
        return False
    return isinstance(value, kind)


def _check_size(path: str, size: int, cap: int, what: str) -> None:
    if size > cap:
        raise TraceFormatError(
            path,
            f"{size} bytes is over the {cap}-byte limit for {what}; refused (raise the limit "
            "with TraceLimits, or convert the file to JSONL)",
        )


def load_source(path: str | os.PathLike[str], limits: TraceLimits = DEFAULT_LIMITS) -> SourceFile:
    """Open a source file and parse what detection needs (see the module doc).

    Raises :class:`TraceFormatError` when the file cannot be read, is not a regular file, is
    empty, is over ``max_file_bytes`` (or a JSON document over ``max_document_bytes``), or is
    neither valid JSON nor JSONL.
    """
    p = str(Path(path))
    try:
        stat = os.stat(p)
    except OSError as exc:
        raise TraceFormatError(p, f"cannot read the file: {exc.strerror or exc}") from None
    if not Path(p).is_file():
        raise TraceFormatError(p, "not a regular file")
    _check_size(p, stat.st_size, limits.max_file_bytes, "any trace file")
    source = SourceFile(p, stat.st_size, limits)
    with _open(p) as handle:
        lines = iter_lines(handle, p, limits)
        try:
            first = next(lines, None)
        except TraceFormatError:
            # a first line longer than one JSON value may be: as a whole document, too big
            _check_size(p, stat.st_size, limits.max_document_bytes, "a whole-document JSON file")
            raise
        second = next(lines, None)
    if first is None:
        raise TraceFormatError(p, "the file is empty")
    if second is not None and (_parses(first[1], limits) or _parses(second[1], limits, dict)):
        source.head = [rec for rec, _ in zip(source.records(), range(HEAD_LINES), strict=False)]
        source.issues.clear()  # records() reports them again when the file is imported
        if not source.head:
            raise TraceFormatError(p, "no line is valid JSON")
        return source
    _check_size(p, stat.st_size, limits.max_document_bytes, "a whole-document JSON file")
    raw = Path(p).read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(p, f"cannot read the file: not UTF-8 ({exc})") from None
    try:
        source.data, replaced = parse_json(raw, p, "", limits)
    except TraceFormatError as exc:
        raise TraceFormatError(p, f"not valid JSON or JSONL: {exc.reason}") from None
    kind = source.data.get("type") if isinstance(source.data, dict) else None
    if second is None and isinstance(kind, str) and kind in LINE_TYPES:
        source.head, source.data = [(first[0], source.data)], None  # a one-line JSONL file
        return source
    if replaced:
        source.issues.append(_surrogate_issue(p, None, replaced))
    return source
