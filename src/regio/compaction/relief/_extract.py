"""What a cleared tool result's placeholder keeps: a bounded, deterministic extract of its
salient lines (``ReliefPolicy.placeholder_extract_tokens``).

A placeholder alone keeps none of the result's facts; a summary keeps its identifiers. The
extract closes that gap with the extractive summarizer's own rules
(:mod:`regio.summarizers.kinds`, :func:`regio.summarizers._extractive.extract_identifiers`), in
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

import re
from collections.abc import Callable

from regio.summarizers._extractive import extract_identifiers
from regio.summarizers.kinds import ERROR as _ERROR
from regio.summarizers.kinds import TOOL_ERROR as _TOOL_ERROR
from regio.summarizers.tracebacks import condense

__all__ = [
    "ERROR_WORDS",
    "MAX_ERROR_CHARS",
    "MAX_ERROR_LINES",
    "MAX_ITEMS",
    "salient_extract",
]

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
#: What every match of :data:`regio.summarizers.kinds.ERROR` or
#: :data:`regio.summarizers.kinds.TOOL_ERROR` contains: one of these words (under the
#: patterns' case folding), or a line opening with ``E`` (pytest's error lines, :data:`_E_LINE`).
ERROR_WORDS = ("error", "exception", "traceback", "fail", "fatal", "panic", "exit")
_ERROR_WORD = re.compile("|".join(ERROR_WORDS), re.IGNORECASE)
_E_LINE = re.compile(r"^\W{0,3}E\b", re.MULTILINE)


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
    :data:`MAX_ERROR_LINES`. The lines joined are searched once first for what every error
    match contains (:data:`ERROR_WORDS`, a line opening with ``E``): a text without it has no
    error line, and most tool output is read without a pattern search of each line."""
    joined = "\n".join(condensed)
    if not (_has_error_word(joined) or _E_LINE.search(joined)):
        return []
    errors = [ln for ln in condensed if _TOOL_ERROR.search(ln) or _ERROR.search(ln)]
    return errors[:MAX_ERROR_LINES]


def _has_error_word(text: str) -> bool:
    """Whether ``text`` holds one of :data:`ERROR_WORDS` in any case. An ASCII text is
    lower-cased and searched for each word (several times faster than the case-insensitive
    pattern); any other text with the pattern, whose case folding the error patterns share
    (``ı`` matches ``i`` there, and ``str.lower`` keeps it)."""
    if text.isascii():
        lowered = text.lower()
        return any(word in lowered for word in ERROR_WORDS)
    return _ERROR_WORD.search(text) is not None


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
    for line in reversed(lines):  # the last lines first within a class
        for token in extract_identifiers(line):
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
