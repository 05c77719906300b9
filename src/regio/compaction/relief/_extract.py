"""What a cleared tool result's placeholder keeps: a bounded, deterministic extract of its
salient lines (``ReliefPolicy.placeholder_extract_tokens``).

A placeholder alone keeps none of the result's facts; a summary keeps its identifiers. The
extract closes that gap with the extractive summarizer's own rules
(:mod:`regio.summarizers.kinds`, :func:`regio.summarizers._extractive.identifier_matches`), in
this order, each item once:

1. error lines of the output (a line the summarizer files under ``Errors``: exception
   names, ``error``, ``failed``, ``Traceback``, non-zero exit codes; at most
   :data:`MAX_ERROR_LINES`), cut to :data:`MAX_ERROR_CHARS` characters; a stack trace is
   one such line, its exception line and innermost frame
   (:func:`regio.summarizers.tracebacks.condense`, as a summary keeps it: a placeholder the
   summarizer reads gives it the same line, never the ``Traceback`` header);
2. identifiers: file paths, ids with separators (``ORD-4471``, ``db-07.internal``,
   ``snake_case``), camelCase names, upper-case codes, then numbers of 3+ digits; within a
   class, the result's last lines first (an output ends with its outcome: the test summary,
   the exit status, the value asked for).

The extract is cut at ``max_tokens`` tokens of the engine's counter (whole items only). It
depends only on the result's text, the budget and the counter -- all fixed once the result
is admitted -- so the placeholder holding it is byte-identical on every later request.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from regio.summarizers._extractive import identifier_matches, identifier_tokens
from regio.summarizers.kinds import ERROR as _ERROR
from regio.summarizers.kinds import TOOL_ERROR as _TOOL_ERROR
from regio.summarizers.tracebacks import condense

__all__ = ["MAX_ERROR_CHARS", "MAX_ERROR_LINES", "MAX_ITEMS", "salient_extract"]

#: Most items tried for one extract (the output's first errors and identifiers).
MAX_ITEMS = 40
#: Most error lines kept from one result (twice what a summary keeps of one result: the
#: placeholder is all that stays of it until the summary covers it; measured on the bench's
#: generated coding sessions, docs/relief.md).
MAX_ERROR_LINES = 6
#: Longest error line kept in an extract (characters); longer ones are cut with an ellipsis.
MAX_ERROR_CHARS = 120

_NUMBER = re.compile(r"^\d[\d,.]*$")
_PATH = re.compile(r"/|\.\w{1,5}$")
#: :data:`regio.summarizers.kinds.TOOL_ERROR` with its ``^`` at every line start.
_TOOL_ERROR_AT_ANY_LINE = re.compile(_TOOL_ERROR.pattern, _TOOL_ERROR.flags | re.MULTILINE)


def _rank(token: str) -> int | None:
    """Class of an identifier (lower first), ``None`` for one not worth keeping."""
    if _NUMBER.match(token):
        return 3 if sum(ch.isdigit() for ch in token) >= 3 else None
    if len(token) < 3:
        return None
    if _PATH.search(token) or any(ch.isdigit() for ch in token):
        return 0
    if "_" in token or "-" in token or "." in token:
        return 1
    return 2


def _error_lines(condensed: list[str]) -> list[str]:
    """The lines of ``condensed`` that read as errors (module doc), at most
    :data:`MAX_ERROR_LINES`. The lines joined are searched once first: a pattern that matches
    in a line matches in the joined text too (:data:`_TOOL_ERROR_AT_ANY_LINE` reads its ``^``
    at every line start), so a text without a match has no error line."""
    joined = "\n".join(condensed)
    if not (_TOOL_ERROR_AT_ANY_LINE.search(joined) or _ERROR.search(joined)):
        return []
    errors = [ln for ln in condensed if _TOOL_ERROR.search(ln) or _ERROR.search(ln)]
    return errors[:MAX_ERROR_LINES]


def _line_identifiers(lines: list[str]) -> list[list[str]]:
    """:func:`regio.summarizers._extractive.extract_identifiers` of each line, read in one scan
    of the lines joined (no identifier spans a line break)."""
    found: list[list[str]] = [[] for _ in lines]
    ends = list(itertools.accumulate(len(ln) + 1 for ln in lines))  # past each line's break
    at = 0
    for match in identifier_matches("\n".join(lines)):
        while match.start() >= ends[at]:
            at += 1
        found[at].append(match.group())
    return [identifier_tokens(tokens) for tokens in found]


def _items(text: str) -> list[str]:
    """Error lines, then identifiers by class (module doc), each once."""
    raw = text.splitlines()
    lines = [ln.strip() for ln in raw if ln.strip()]
    # a stack trace counts as its one line, as a summary keeps it (the header says nothing)
    condensed = [ln.strip() for ln, _ in condense(raw, MAX_ERROR_CHARS) if ln.strip()]
    items = [
        ln if len(ln) <= MAX_ERROR_CHARS else ln[: MAX_ERROR_CHARS - 1] + "\u2026"
        for ln in _error_lines(condensed)
    ]
    seen = set(items)
    ranked: list[tuple[int, int, str]] = []
    order = 0
    for tokens in reversed(_line_identifiers(lines)):  # the last lines first within a class
        for token in tokens:
            rank = _rank(token)
            if rank is None or token in seen or any(token in item for item in items):
                continue
            seen.add(token)
            ranked.append((rank, order, token))
            order += 1
    ranked.sort()
    return items + [token for _, _, token in ranked]


def salient_extract(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The salient items of tool output ``text`` (module doc), joined by ``"; "``, at most
    ``max_tokens`` tokens by ``count`` (``""`` when ``max_tokens`` is 0 or nothing fits)."""
    if max_tokens <= 0 or not text:
        return ""
    kept: list[str] = []
    for item in _items(text)[:MAX_ITEMS]:
        if count("; ".join([*kept, item])) <= max_tokens:
            kept.append(item)  # an item that does not fit is skipped; a shorter one may
    return "; ".join(kept)
