"""What a summary keeps first: sentences of the summarized entries sorted into the sections of
an extractive summary, most important first (``docs/runtime.md``, "Summarizers").

1. ``Constraints``: user instructions and constraints, verbatim -- a sentence of a user's (or
   the agent's own) text with a modal of obligation or prohibition (must, never, do not,
   only, always, should not, make sure, ...);
2. ``Open items``: to-dos and next steps (``TODO``, ``- [ ]``, ``Next:``, next step, still
   need to, remember to, action item, follow-up, ...) that no later sentence completed
   (:mod:`regio.summarizers.openitems`: ``done: X``, ``- [x] X``, ``we fixed X``, ``closed
   TODO-12``, ``X is done`` drop the item they name, by identifier or by text, and nothing
   else);
3. ``Values``: the latest stated value of each setting (:mod:`regio.summarizers.valuestatements`:
   ``set X to Y``, ``X is now Y``, ``X is <id>``, ``reservation ABC123 is for May 3``, ...); a
   later statement of the same key replaces the earlier one. A state (``the test is now
   failing``, ``the build is done``) is not a value: a failure state is an error;
4. ``Decisions``: choices stated in the conversation (decided, we will, going with, switch
   to, instead of, ...);
5. ``Errors``: lines reporting an error, with their message (exception names, ``error:``,
   ``failed``, ``Traceback``, non-zero exit codes, ``X is failing|broken``). A stack trace of
   tool output is one line: its exception line and its innermost frame's location
   (``ZeroDivisionError: division by zero (at x.py:1, in <module>)``,
   :mod:`regio.summarizers.tracebacks`), never the ``Traceback (most recent call last):`` header.

**The newest statement of a key wins, whichever section it lands in.** A constraint that
fixes a value (``the port must be 9000``, ``make sure the timeout is 30s``) is kept verbatim
under ``Constraints`` -- it is an instruction, and constraints are kept first -- and the
older value of its key (``the port is 8080``) leaves ``Values``. A later value of the key
replaces the constraint only when the user states it (the user changed their requirement):
the agent reporting another value (``the port is now 8080``) does not lift the user's
constraint, and both are kept. A completion is itself neither an open item nor an error (``we
fixed the TypeError`` reports no error), but a sentence that also reports an error is kept as
an error (``Fixed the TypeError, but now test_dump fails with AssertionError: 344 != 345``).

Tool output -- tool results, and environment observations a plain-text agent sends as user
text (:mod:`regio.summarizers.observations`) -- has no authority to instruct: it supplies error
lines only (at most :data:`MAX_TOOL_ERRORS` per result or observation) and completes no to-do.

Open items and values come before errors: they are few (one line per to-do, one per key) and
survive only through the summary once their turn is cut, while tool output reports errors by
the dozen and the newest of them are still in the conversation. Measured on the bench's
generated 1,000-call coding sessions (4 seeds, 32k and 64k windows, ``regio bench ...
--canaries``): with errors first, the summary (~245 tokens at 32k) went to error lines and the
requests kept 5-20% of the planted to-dos and updated values; in this order they keep all of
them, and the share of the trace's own facts (error lines among them) is unchanged on 7 of 8
runs (0.53 points lower on the eighth).

A previous summary given as input is parsed back into these sections, so what it kept stays
in the same section (and first) when it is summarized again, and a later completion or
statement of a key drops its open item or value as it would a fresh one; its lines outside
any section are carried verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from regio.content import Entry, Text, ToolResult

from regio.summarizers.observations import is_observation
from regio.summarizers.openitems import TODO, OpenItems, completion
from regio.summarizers.tracebacks import condense
from regio.summarizers.valuestatements import constraint_key, failure_state, value_key

__all__ = ["SECTIONS", "Salient", "reports_error", "sentences", "sort_entries"]

#: Section titles, in the order a summary lists them.
SECTIONS = ("Constraints", "Open items", "Values", "Decisions", "Errors")

_CONSTRAINT = re.compile(
    r"\b(?:must|mustn(?:'|\u2019)?t|never|do\s+not|don(?:'|\u2019)?t|does\s+not|only|always|"
    r"should\s+not|shouldn(?:'|\u2019)?t|shall\s+not|cannot|can(?:'|\u2019)?t|may\s+not|"
    r"required?|requirements?|make\s+sure|ensure|avoid|forbidden|not\s+allowed|prohibited|"
    r"at\s+most|at\s+least|no\s+more\s+than|no\s+later\s+than|without)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decided|decide|decision|we(?:'|\u2019)?ll|we\s+will|i(?:'|\u2019)?ll|i\s+will|"
    r"going\s+with|go\s+with|chose|chosen|choose|switch(?:ed)?\s+to|instead\s+of|"
    r"settled\s+on|agreed|approach|plan\s+is)\b",
    re.IGNORECASE,
)
_ERROR = re.compile(
    r"(?:\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bexception\b|\btraceback\b|\bfailed\b|"
    r"\bfailure\b|\bfatal\b|\bpanic\b|\bexit\s+(?:code|status)\s+[1-9]\d*|\bFAILED\b)",
    re.IGNORECASE,
)
#: An error line of tool output (stronger than ``_ERROR``: source code that merely names an
#: exception is not a failure report).
_TOOL_ERROR = re.compile(
    r"(?:^\W{0,3}(?:[\w.]*(?:Error|Exception)|error|fatal|FAILED|ERROR|E)\b\s*[:\s]"
    r"|Traceback \(most recent call last\)|\bexit\s+(?:code|status)\s+[1-9]\d*"
    r"|\b\d+\s+(?:failed|errors?)\b)"
)
#: Most error lines kept from one tool result.
MAX_TOOL_ERRORS = 3
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_HEADER = re.compile(rf"^({'|'.join(SECTIONS)}):\s*$")

#: Longest sentence kept (characters): a longer one is not an instruction but a paragraph, and
#: is kept only through its identifiers.
MAX_SENTENCE_CHARS = 400


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (at line breaks and sentence ends), stripped, non-empty."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(s.strip() for s in _SPLIT.split(line.strip()) if s.strip())
    return out


@attrs.define
class _Keyed:
    section: str
    line: str
    by_user: bool


@attrs.define
class Salient:
    """Sorted sentences: ``sections`` (title -> lines, first-seen order, no duplicates),
    ``carried`` (previous summaries' lines outside any section, verbatim) and ``known`` (lines
    a context-only previous summary already holds: not repeated).

    Every operation is constant time in the number of kept lines (lines are indexed by
    text, keys and open items' words), so sorting a long span is linear in its sentences."""

    carried: list[str] = attrs.field(factory=list)
    known: set[str] = attrs.field(factory=set)
    _lines: dict[str, dict[str, None]] = attrs.field(factory=lambda: {s: {} for s in SECTIONS})
    _where: dict[str, str] = attrs.field(factory=dict)
    _keyed: dict[str, list[_Keyed]] = attrs.field(factory=dict)
    _key_of: dict[str, str] = attrs.field(factory=dict)
    _open: OpenItems = attrs.field(factory=OpenItems)

    @property
    def sections(self) -> dict[str, list[str]]:
        """Title -> kept lines, in the order of :data:`SECTIONS` (a copy)."""
        return {title: list(lines) for title, lines in self._lines.items()}

    def add(self, section: str, line: str, role: str | None = None) -> None:
        """Add ``line`` to ``section`` unless it is already kept anywhere. A ``Values`` line
        (:func:`value_key`) or a ``Constraints`` line that fixes a value
        (:func:`constraint_key`) supersedes the kept lines of the same key: the latest
        statement is the one kept, at the end. A value or a constraint supersedes the user's
        constraint only when the user (``role``) states it: the agent cannot lift or override
        the user's requirement (a line of a previous summary, ``role=None``, counts as the
        user's)."""
        key = None
        if section == "Values":
            key = value_key(line)
        elif section == "Constraints":
            key = constraint_key(line)
        if key is not None:  # first, so a known (carried) latest value still supersedes
            binding = section == "Constraints"
            for old in list(self._keyed.get(key, ())):
                if old.section == "Values" or role == "user" or (binding and not old.by_user):
                    self._remove(old.line)
        if line in self.known or line in self._where:
            return
        self._lines[section][line] = None
        self._where[line] = section
        if key is not None:
            self._keyed.setdefault(key, []).append(_Keyed(section, line, role != "assistant"))
            self._key_of[line] = key
        if section == "Open items":
            self._open.add(line)

    def complete(self, sentence: str) -> bool:
        """Drop the open items ``sentence`` completes (:func:`regio.summarizers.openitems.completion`);
        whether it is a completion (a past tense of an item's own verb is one only when it
        closed an item)."""
        done = completion(sentence)
        if done is None:
            return False
        closed = self._open.closed_by(done)
        for line in closed:
            self._remove(line)
        return bool(closed) or not done.own_verb  # "updated X" reports only what it closes

    def _remove(self, line: str) -> None:
        section = self._where.pop(line, None)
        if section is None:
            return
        del self._lines[section][line]
        key = self._key_of.pop(line, None)
        if key is not None:
            self._keyed[key] = [k for k in self._keyed[key] if k.line != line]
        if section == "Open items":
            self._open.discard(line)


def _parse_summary(text: str) -> tuple[dict[str, list[str]], list[str]]:
    sections: dict[str, list[str]] = {s: [] for s in SECTIONS}
    carried: list[str] = []
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        header = _HEADER.match(line)
        if header:
            current = header.group(1)
            continue
        if current is not None and line.startswith("- "):
            sections[current].append(line[2:])
            continue
        current = None
        carried.append(line)
    return sections, carried


def _texts(entry: Entry) -> list[tuple[str, bool]]:
    """``(text, is_tool_output)`` of the entry's text-bearing blocks."""
    out: list[tuple[str, bool]] = []
    for block in entry.blocks:
        if isinstance(block, Text):
            out.append((block.text, False))
        elif isinstance(block, ToolResult):
            out.append((block.content, True))
    return out


#: Where a sentence's clauses meet: a later clause can report what went wrong after the
#: completion of the first.
_CLAUSE = re.compile(
    r"[;:]\s+|,\s*(?:and|but|though|although|however|yet|while|then|so)?\s*"
    r"|\s+(?:and|but|though|although|however|yet|while|whereas)\s+",
    re.IGNORECASE,
)
#: A clause that reports a failure (not one that names the error it fixed).
_REPORT = re.compile(
    r"\b(?:fails?|failed|failing|rais(?:es|ed)|throws?|threw|crash(?:es|ed)|errors?\s+out|"
    r"errored|broke|breaks|reports?|reported|gives?|gave|shows?|showed|exit(?:s|ed)?\s+with)\b"
    r"|\bexit\s+(?:code|status)\s+[1-9]\d*|\btraceback\b|\b[A-Z]\w*(?:Error|Exception):",
    re.IGNORECASE,
)


def reports_error(sentence: str) -> bool:
    """Whether a clause after the first of ``sentence`` (a completion) reports a failure:
    ``Fixed the TypeError, but now test_dump fails with AssertionError`` and ``I've implemented
    the change and the build failed with exit code 2`` do, ``Fixed the TypeError and the
    ValueError`` does not (it names the errors it fixed)."""
    clauses = _CLAUSE.split(sentence)[1:]
    return any(
        (_ERROR.search(c) and _REPORT.search(c)) or failure_state(c[:1].upper() + c[1:])
        for c in clauses
        if c
    )


_STRONG = re.compile(r"\b(?:must|never|do\s+not|always)\b", re.IGNORECASE)


def _sort_sentence(out: Salient, role: str | None, sentence: str) -> None:
    """Sort one sentence of a user's or the agent's own text. A completion closes the open
    items it names and is itself neither an open item nor an error; a failure state (``the
    test is now failing``) is an error, never a value."""
    if len(sentence) > MAX_SENTENCE_CHARS:
        return
    done = out.complete(sentence)
    if _CONSTRAINT.search(sentence) and (role == "user" or _STRONG.search(sentence)):
        out.add("Constraints", sentence, role)
    elif done and not reports_error(sentence):
        if value_key(sentence) is not None:
            out.add("Values", sentence, role)
        elif _DECISION.search(sentence):
            out.add("Decisions", sentence, role)
    elif TODO.search(sentence) and not done:
        out.add("Open items", sentence, role)
    elif reports_error(sentence):
        out.add("Errors", sentence, role)
    elif value_key(sentence) is not None:
        out.add("Values", sentence, role)
    elif _ERROR.search(sentence) or failure_state(sentence):
        out.add("Errors", sentence, role)
    elif _DECISION.search(sentence):
        out.add("Decisions", sentence, role)


def _sort_tool_output(out: Salient, text: str) -> None:
    """Keep the first error lines of one tool result (never constraints: tool output has no
    authority to instruct); a stack trace is one error line, its exception line and innermost
    frame (:func:`regio.summarizers.tracebacks.condense`)."""
    kept = 0
    for raw, trace in condense(text.splitlines(), MAX_SENTENCE_CHARS):
        line = raw.strip()
        ok = kept < MAX_TOOL_ERRORS and line and len(line) <= MAX_SENTENCE_CHARS
        if ok and (trace or _TOOL_ERROR.search(line)):
            out.add("Errors", line)
            kept += 1


def sort_entries(entries: Sequence[Entry]) -> Salient:
    """Sort the sentences of ``entries`` into sections (module doc). A summary entry
    (``meta["summary"]``) is parsed back into its sections; a context-only one only marks its
    lines as already kept. Tool results and environment observations sent as user text
    (:func:`regio.summarizers.observations.is_observation`) are tool output: read for error lines
    only (never constraints, open items, values or decisions; they complete no to-do)."""
    out = Salient()
    carried_seen: set[str] = set()  # the carried lines so far, so that dedup is linear
    for entry in entries:
        if not entry.meta.get("summary"):
            continue
        sections, carried = _parse_summary(entry.text)
        if entry.meta.get("context_only"):
            out.known.update(line for lines in sections.values() for line in lines)
            continue
        for title, lines in sections.items():
            for line in lines:
                out.add(title, line)
        for line in carried:
            if line not in carried_seen:
                carried_seen.add(line)
                out.carried.append(line)
    for entry in entries:
        if entry.meta.get("summary"):
            continue
        observed = is_observation(entry)  # an environment observation is tool output
        for text, tool_output in _texts(entry):
            if tool_output or observed or entry.role == "tool":
                _sort_tool_output(out, text)
                continue
            for sentence in sentences(text):
                _sort_sentence(out, entry.role, sentence)
    return out
