"""Statements: the sentences of a text, a rule kept together with its condition.

A durable item keeps its whole source sentence or sentences. :func:`statements` splits a text
into the units an item is made of:

* a line that opens with a label (``SAFETY RULE:``, ``Constraint:``, ``Note:``, ``Update:``
  -- a short run of words before a colon) and is at most :data:`MAX_STATEMENT_CHARS` long is
  one statement, the label governing every sentence after it, except a sentence that states
  a value or opens with a label or a to-do marker of its own (``TODO: update the CHANGELOG.
  The port is 8443.`` is a to-do and a value);
* otherwise the line is split into sentences (:func:`sentences`), and a sentence that cannot
  stand alone is joined to the one before it: one that opens with an anaphor or a condition
  (``It``, ``This``, ``Otherwise``, ``Unless``, ``Except``, ``If so`` ...), or one of at most
  :data:`CONTINUATION_WORDS` words with no subject of its own (``Never exceed without
  explicit approval.``, ``Use it in confirmations.``, ``Fix JUDGE-004 first.``; not ``The
  host is db-1.``). So ``Budget cap is $500 total. Never exceed
  without explicit approval.`` is one statement and the cap keeps its rule.

Each statement is a verbatim slice of its line (the line's own spacing kept), so an item's
text can always be found in the text it came from.
"""

from __future__ import annotations

import re

from .valuestatements import value_key

__all__ = [
    "ANNOUNCEMENTS",
    "CONTINUATION_WORDS",
    "LABEL",
    "LABEL_KINDS",
    "MAX_STATEMENT_CHARS",
    "WEAK_LABEL_KINDS",
    "label_kind",
    "label_of",
    "meta_label",
    "sentences",
    "statements",
    "strip_label",
]

#: Longest statement kept as an item (characters): a longer one is a paragraph, not an
#: instruction or a fact, and is kept only through the prose of the summary.
MAX_STATEMENT_CHARS = 400
#: A sentence of at most this many words continues the sentence before it.
CONTINUATION_WORDS = 6

_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
#: A label opening a line: one to four words (letters, spaces, hyphens, apostrophes) and a
#: colon, then text.
LABEL = re.compile(r"^(?P<label>[A-Za-z][A-Za-z'\u2019 -]{0,40}?)\s*:\s+(?=\S)")
#: A list marker (not a checkbox: ``- [ ] X`` is a to-do as written).
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+(?!\[[ xX\u2713\u2714]\])")
_TODO_MARK = re.compile(r"^\W*(?:TODO|FIXME)\b")
_SUBJECT = re.compile(r"^(?:the|a|an|my|our|your|their|his|her|we|i|you)\b", re.IGNORECASE)
_OPENER = re.compile(
    r"^(?:it|its|this|that|these|those|they|them|otherwise|unless|except|if\s+so|"
    r"in\s+that\s+case|instead|then|also)\b",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (at line breaks and sentence ends), stripped, non-empty."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(s.strip() for s in _SPLIT.split(line.strip()) if s.strip())
    return out


def label_of(line: str) -> str | None:
    """The label opening ``line`` (``"HARD CONSTRAINT"`` of ``HARD CONSTRAINT: ...``), lower
    case, or ``None``. A label is at most four words."""
    match = LABEL.match(line)
    if match is None:
        return None
    label = match.group("label").strip()
    return label.lower() if 0 < len(label.split()) <= 4 else None


#: Words of a label that names a kind of item, with that kind, checked in this order
#: (``GOAL STATE`` is a goal, ``SAFETY RULE`` a constraint).
LABEL_KINDS: tuple[tuple[str, str], ...] = (
    ("preference", "preference"),
    ("prefer", "preference"),
    ("goal", "goal"),
    ("objective", "goal"),
    ("rule", "constraint"),
    ("constraint", "constraint"),
    ("requirement", "constraint"),
    ("policy", "constraint"),
    ("restriction", "constraint"),
    ("guideline", "constraint"),
    ("todo", "todo"),
    ("to-do", "todo"),
    ("to do", "todo"),
    ("next step", "todo"),
    ("next", "todo"),
    ("action item", "todo"),
    ("follow-up", "todo"),
    ("decision", "decision"),
    ("decided", "decision"),
    ("error", "error"),
    ("bug", "error"),
    ("failure", "error"),
    ("fact", "fact"),
)
#: Labels that say little (``Note:``, ``Reminder:``): the statement is read as usual and the
#: label's kind is taken only when it gives none.
WEAK_LABEL_KINDS: tuple[tuple[str, str], ...] = (
    ("note", "fact"),
    ("info", "fact"),
    ("reminder", "todo"),
    ("status", "goal"),
    ("task", "goal"),
)
#: Labels that announce a statement without saying what it is about.
ANNOUNCEMENTS = frozenset(
    {"update", "quick update", "correction", "fyi", "heads up", "heads-up", "important",
     "nb", "n.b", "ps", "p.s", "new", "change", "changed", "edit", "also", "and", "so"}
)  # fmt: skip


def label_kind(label: str | None, table: tuple[tuple[str, str], ...] = LABEL_KINDS) -> str | None:
    """The kind ``label`` names by a word of ``table``, or ``None``."""
    if label is None:
        return None
    for word, kind in table:
        if re.search(rf"\b{re.escape(word)}\b", label):
            return kind
    return None


def meta_label(label: str) -> bool:
    """Whether ``label`` only says what kind of statement follows (``FACT``, ``HARD
    CONSTRAINT``, ``Note``) or announces it (``Update``, ``FYI``): a label like ``Release
    timing has changed`` names the subject, and stays part of the statement."""
    return (
        label in ANNOUNCEMENTS
        or label_kind(label) is not None
        or label_kind(label, WEAK_LABEL_KINDS) is not None
    )


def strip_label(text: str) -> str:
    """``text`` without its opening labels that only name a kind or announce
    (:func:`meta_label`; ``Update: FACT: ...`` loses both)."""
    out = text.strip()
    for _ in range(2):
        label = label_of(out)
        if label is None or not meta_label(label):
            break
        match = LABEL.match(out)
        assert match is not None
        out = out[match.end() :]
    return out


def _spans(line: str) -> list[tuple[int, int]]:
    """Start and end of each sentence of ``line`` (verbatim slices, stripped)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SPLIT.finditer(line):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(line)))
    return [(a, b) for a, b in spans if line[a:b].strip()]


def _continues(sentence: str) -> bool:
    """Whether ``sentence`` leans on the one before: an anaphor or a condition opens it, or
    it is short and names no subject of its own (no article or possessive opens it, and it
    states no value: ``The host is db-1.`` stands alone)."""
    if label_of(sentence) is not None or _TODO_MARK.match(sentence):
        return False
    if _OPENER.match(sentence):
        return True
    if len(sentence.split()) > CONTINUATION_WORDS or _SUBJECT.match(sentence):
        return False
    return value_key(sentence) is None


def statements(text: str) -> list[str]:
    """The statements of ``text`` (module doc), in order, each a verbatim slice of its line
    (a bullet marker left out)."""
    out: list[str] = []
    for raw in text.splitlines():
        line = _BULLET.sub("", raw.strip(), count=1).strip()
        if not line:
            continue
        labelled = label_of(line) is not None and len(line) <= MAX_STATEMENT_CHARS
        groups: list[tuple[int, int]] = []
        for start, end in _spans(line):
            sentence = line[start:end]
            if labelled:  # a sentence with a label, a to-do marker or a value stands alone
                joins = (
                    label_of(sentence) is None
                    and _TODO_MARK.match(sentence) is None
                    and value_key(sentence) is None
                )
            else:
                joins = _continues(sentence)
            if groups and joins:
                groups[-1] = (groups[-1][0], end)
            else:
                groups.append((start, end))
        out.extend(line[a:b].strip() for a, b in groups)
    return out
