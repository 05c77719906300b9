"""Errors and import issues of the trace layer.

* :class:`TraceError` is the base of the trace layer's errors (a :class:`regio.errors.RegioError`);
* :class:`TraceFormatError` is raised when a file cannot be read or imported at all; its message
  names the file (and the line or record when there is one) and says why.
* :class:`ImportIssue` is a problem found in one record of a file that was otherwise imported:
  the importers collect them and keep going with the rest of the file.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from regio.errors import RegioError

__all__ = ["ImportIssue", "Severity", "TraceError", "TraceFormatError"]

Severity = Literal["warning", "error"]


class TraceError(RegioError, ValueError):
    """Base of the errors of :mod:`regio.traces` (also a ``ValueError``, as before)."""


class TraceFormatError(TraceError):
    """A trace file that cannot be read or imported at all.

    ``file`` is the path as given; ``reason`` says what is wrong and, where possible, how to fix
    it. ``str(error)`` is ``"<file>: <reason>"``.
    """

    def __init__(self, file: str, reason: str) -> None:
        self.file = file
        self.reason = reason
        super().__init__(f"{file}: {reason}")


class ImportIssue(msgspec.Struct, frozen=True):
    """One problem in one record of a source file.

    * ``file``: the source path;
    * ``record``: where the record is in the file: the list index for JSON files (the run index
      for tau-bench, the message index for message lists and SWE-agent ``history``), the 1-based
      line number for JSONL files; ``None`` for a problem of the whole file;
    * ``field``: the path of the offending field inside that record, e.g.
      ``traj[12].tool_calls[0].function.arguments`` or ``role``;
    * ``message``: what was wrong and what the importer did about it;
    * ``severity``: ``"error"`` when the record (or part of it) was dropped, ``"warning"`` when
      it was imported with a repair (a parsed-as-raw argument string, a renamed call id, ...).
    """

    file: str
    record: int | None
    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        where = self.file if self.record is None else f"{self.file}[{self.record}]"
        field = f" {self.field}" if self.field else ""
        return f"{where}{field}: {self.severity}: {self.message}"
