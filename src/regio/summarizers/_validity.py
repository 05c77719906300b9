"""What a summary must not be, by class (the commit gate of ``docs/runtime.md``, "Compaction
flush"): :func:`summary_defect` names the first class a text falls into, or ``None``.

Classes (checked in this order, each a shape of text rather than a list of phrases):

* ``empty``: not a string, empty, or whitespace only;
* ``error``: the text of a failed call instead of a summary: it opens like an exception
  (``ValueError: ...``, ``openai.RateLimitError``, ``Exception``, ``Error ...`` / ``Failed
  to ...``), an HTTP failure (``HTTP 429``, ``502 Bad Gateway``, ``status code 500``), a JSON
  error object (``{"error": ...}``, ``{"type": "error", ...}``), or it *is* a stack trace: it
  opens with one (``Traceback (most recent call last):``, a ``File "...", line N`` / ``at
  f (file:line)`` frame), or it is one with at most a one-line lead-in (``Summarization
  failed:`` and a traceback): two or more of its non-blank lines are trace lines as they
  stand (:func:`regio.summarizers.tracebacks.trace_mask`) and at most one is not. A summary that
  *quotes* a trace of the conversation is accepted: a traceback line under ``Errors:`` (``-
  Traceback ...``), after a label (``tool: Traceback ...``), inside a fenced code block, or
  trace lines among two or more lines of summary (the extractive summarizer quotes error
  lines of tool output; an LLM summarizer may quote a traceback). Only a bare traceback with
  at most one line around it is ambiguous, and is read as a failed call.
* ``refusal``: it opens with a first-person refusal or apology (``I can't``, ``I'm sorry``,
  ``Unfortunately, I``, ``As an AI``), or with one of the deployment's own refusal phrases
  (``EngineOptions.refusal_phrases``, the blueprint's ``summarizer.refusal_phrases``: the
  built-in ones are English);
* ``request``: it asks for input instead of summarizing: it opens with a request addressed to
  the reader (``Please provide ...``, ``Could you share ...``, ``I need the ...``), says there
  is nothing to summarize (``There is no conversation ...``, ``No content was provided``), or
  it is one short question to the reader.

The size classes (``over_cap``: more than ``max_summary_tokens``; ``oversized``: not smaller
than what it replaces) need the token counts and are checked by
:func:`regio.summarizers._protocol.check_summary`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from regio.summarizers.tracebacks import opens_with_trace, trace_mask

__all__ = ["DEFECTS", "normalize_phrase", "opens_with_phrase", "summary_defect"]

#: Text classes :func:`summary_defect` recognises, in checking order.
DEFECTS = ("empty", "error", "refusal", "request")

_APOS = "(?:'|\u2019)?"

_ERROR_OPENING = re.compile(
    r"^\W{0,3}(?:"
    r"(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exceeded|Timeout)\b"  # ValueError: ...
    r"|(?:error|exception|fatal|failure)\b"  # Error generating summary: ...
    r"|failed\s+to\b|could\s+not\s+(?:connect|complete|generate|reach)\b"
    r"|HTTP(?:/\d(?:\.\d)?)?\s*[45]\d\d\b"  # HTTP 429, HTTP/1.1 503
    r"|[45]\d\d\s+(?:bad|internal|service|gateway|too|not|forbidden|unauthori[sz]ed)\b"
    r"|(?:status|error)(?:\s+code)?\s*[:=]?\s*[45]\d\d\b"
    r"|\{\s*\"(?:error|type\"\s*:\s*\"error)\""  # {"error": ...}, {"type": "error"...
    r"|<html\b|<!doctype\s+html"
    r")",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*(?:```|~~~)")

_REFUSAL = re.compile(
    r"^\W*(?:"
    rf"i{_APOS}m\s+sorry|i\s+am\s+sorry|sorry,|my\s+apologies|i\s+apologi[sz]e|"
    rf"i\s+can{_APOS}t|i\s+cannot|i\s+can\s+not|i{_APOS}m\s+unable|i\s+am\s+unable|"
    rf"i{_APOS}m\s+not\s+able|i\s+am\s+not\s+able|i\s+won{_APOS}t|i\s+will\s+not|"
    rf"i\s+(?:must|have\s+to)\s+decline|as\s+an\s+ai\b|unfortunately,?\s+i\b"
    r")",
    re.IGNORECASE,
)

_VERBS = r"(?:provide|share|send|give|paste|upload|supply|specify|clarify|include|attach)"
_REQUEST = re.compile(
    r"^\W*(?:"
    rf"(?:please|kindly)\s+(?:\w+\s+){{0,2}}{_VERBS}\b"
    rf"|(?:could|can|would|will)\s+you\s+(?:please\s+)?{_VERBS}\b"
    r"|i\s+(?:need|require|would\s+need)\s+(?:more|the|some|additional|a)\b"
    r"|there\s+(?:is|are|was|were)\s+no\s+(?:\w+\s+){0,2}(?:conversation|messages?|content|"
    r"text|entries|input|transcript)"
    r"|no\s+(?:\w+\s+){0,2}(?:conversation|messages?|content|text|input|transcript)\s+"
    r"(?:was|were|has\s+been|have\s+been)?\s*(?:provided|given|supplied|included|found)"
    r"|(?:what|which)\s+(?:would|do)\s+you\s+(?:like|want)"
    r")",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^\W+")
_EDGES = re.compile(r"^\W+|\W+$")
#: Characters of a summary's opening compared with the refusal phrases.
_OPENING_CHARS = 400

_QUESTION_TO_READER = re.compile(r"\b(?:you|your)\b.*\?\s*$", re.IGNORECASE | re.S)

#: A text this short (characters) that is one question to the reader is a request for input.
SHORT_QUESTION_CHARS = 200


#: Lines besides a stack trace that a failed call's text may hold (a lead-in such as
#: ``Summarization failed:``).
MAX_LEAD_LINES = 1


def _mostly_trace(body: str) -> bool:
    """Whether ``body`` is a stack trace with at most a lead-in: two or more of its non-blank
    lines are trace lines as they stand and at most :data:`MAX_LEAD_LINES` are not (lines
    inside a fenced code block are quoted: not trace lines)."""
    lines: list[str] = []
    fenced = False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            lines.append("")  # a fence is summary text, not trace
        elif line.strip():
            lines.append("" if fenced else line)
    trace = sum(trace_mask(lines))
    rest = len(lines) - trace
    return trace >= 2 and rest <= MAX_LEAD_LINES


def normalize_phrase(phrase: str) -> str:
    """``phrase`` as :func:`summary_defect` compares it: case-folded, runs of whitespace as
    one space, leading and trailing non-word characters removed."""
    return " ".join(_EDGES.sub("", phrase).casefold().split())


def opens_with_phrase(body: str, phrases: Sequence[str]) -> bool:
    """Whether ``body`` opens (after leading punctuation and whitespace) with one of
    ``phrases`` (normalized by :func:`normalize_phrase`), case-insensitively."""
    if not phrases:
        return False
    opening = " ".join(_LEADING.sub("", body[:_OPENING_CHARS]).casefold().split())
    return any(p and opening.startswith(normalize_phrase(p)) for p in phrases)


def summary_defect(text: object, refusal_phrases: Sequence[str] = ()) -> str | None:
    """The first class of :data:`DEFECTS` that ``text`` falls into (module doc), or ``None``
    for a usable summary. ``refusal_phrases``: openings that also make a ``refusal`` besides
    the built-in English ones (a deployment in another language adds its own: ``"Lo
    siento"``, ``"Je ne peux pas"``; the blueprint's ``summarizer.refusal_phrases``)."""
    if not isinstance(text, str) or not text.strip():
        return "empty"
    body = text.strip()
    if _ERROR_OPENING.match(body) or opens_with_trace(body) or _mostly_trace(body):
        return "error"
    if _REFUSAL.match(body) or opens_with_phrase(body, refusal_phrases):
        return "refusal"
    if _REQUEST.match(body):
        return "request"
    if len(body) <= SHORT_QUESTION_CHARS and "\n" not in body and _QUESTION_TO_READER.search(body):
        return "request"
    return None
