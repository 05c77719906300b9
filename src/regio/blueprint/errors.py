"""Blueprint problems: issues (errors) and warnings, each naming a YAML path and line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

import msgspec

from regio.errors import RegioError

__all__ = [
    "BlueprintError",
    "BlueprintIssue",
    "BlueprintWarning",
    "UnknownRegionError",
    "format_problem",
    "suggest",
]


def suggest(word: str, choices: Sequence[str]) -> str:
    """``" Did you mean 'x'?"`` for the closest of ``choices`` (difflib ratio >= 0.6, else a
    choice that starts with ``word``), or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close and len(word) >= 3:  # an abbreviation: "convo" for "conversation"
        close = [c for c in choices if c.startswith(word)][:1]
    return f" Did you mean {close[0]!r}?" if close else ""


class BlueprintIssue(msgspec.Struct, frozen=True):
    """One reason a blueprint is invalid.

    ``path`` is the YAML path (``regions[3].budget``, ``<root>`` for the document), ``line``
    the 1-based line in the blueprint file (``None`` when the blueprint did not come from YAML),
    ``message`` says what is wrong and what is allowed.
    """

    path: str
    line: int | None
    message: str


class BlueprintWarning(msgspec.Struct, frozen=True):
    """A blueprint that loads but probably does not do what its author wants (same shape as
    :class:`BlueprintIssue`). Returned on ``Blueprint.warnings``, never raised."""

    path: str
    line: int | None
    message: str


def format_problem(file: str, problem: BlueprintIssue | BlueprintWarning) -> str:
    """``FILE:LINE: path: message`` (``FILE: path: message`` when the line is unknown) on one
    line (line breaks and other unprintable characters in a message or path are written as
    escapes such as ``\\n``); a warning's message is prefixed with ``warning: ``."""
    where = f"{file}:{problem.line}" if problem.line is not None else file
    prefix = "warning: " if isinstance(problem, BlueprintWarning) else ""
    text = f"{where}: {problem.path}: {prefix}{problem.message}"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


class BlueprintError(RegioError, ValueError):
    """A blueprint failed to load. ``issues`` lists every problem found (not only the first);
    ``file`` is the blueprint's file name (``<blueprint>`` for text). ``str()`` prints one issue
    per line as ``FILE:LINE: regions[3].budget: message``."""

    def __init__(self, issues: Iterable[BlueprintIssue], file: str = "<blueprint>") -> None:
        self.issues: list[BlueprintIssue] = list(issues)
        self.file = file
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(format_problem(self.file, issue) for issue in self.issues)


class UnknownRegionError(RegioError, KeyError):
    """:meth:`regio.blueprint.Blueprint.region` was asked for a name the blueprint does not
    declare; the message lists the declared regions (and the closest name). A ``KeyError``
    too, for callers that catch that."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
