"""A summarizer that needs no model: :class:`ExtractiveSummarizer`.

Deterministic and offline, so every runtime path (compaction, overflow recovery, examples,
tests) runs without a provider.

**Size rule.** The output is strictly smaller than what it replaces whenever that is
non-trivial: its budget is ``min(max_summary_tokens, replaced // 2)`` tokens, where
``replaced`` is the size of the input entries (their stored ``tokens``, or the ``counter``'s
count when smaller), the previous summary included unless it is passed as context only
(``meta["context_only"]``, ``carry_forward="append"``: it stays in the history, so it is neither
copied nor counted). Output is measured with ``counter`` (the heuristic counter by default).

**Salient sections first** (:mod:`regio.runtime.salience`): ``Constraints:`` (user
instructions and constraints, verbatim), ``Open items:`` (to-dos no later sentence
completed), ``Values:`` (the latest stated value of each setting or entity: a later ``X is
now Y`` replaces ``X is Z``, a constraint ``X must be Y`` replaces it too), ``Decisions:``,
``Errors:`` (with their messages), each a list of ``- `` lines, in that order; a line that
does not fit is skipped, so a constraint only ever gives way to other constraints, never to
identifiers. A
previous summary in the input is parsed back into its sections (its constraints stay first
and verbatim through every later compaction); its other lines are carried verbatim after them.

**Then the rest**, in the budget that is left: the first of these forms that fits:

1. ``detailed``: the previous summary verbatim, then per entry one line ``role: first line``
   (tool calls as ``call name(id) {json}``; an environment observation sent as user text is
   labelled ``observation``, :mod:`regio.runtime.observations`; in tool output a stack trace
   is one line, its exception line and innermost frame's location,
   :mod:`regio.runtime.tracebacks`); an entry of several lines adds ``ids:`` (the
   identifier-like tokens of its middle lines) and ``last:`` (its last line);
2. ``compact``: the previous summary verbatim, then one line per entry: ``role: first line``
   cut to :data:`COMPACT_LINE_CHARS` plus the new identifiers of the rest (no labels);
3. ``identifiers``: ``Facts:`` and one line of every identifier of the input (previous
   summary included), in first-seen order, cut at the budget with a ``[+N more]`` marker.

Identifiers are file paths (``src/app/main.py``), ids (``ORD-4471``, ``TCK-9902``), dotted or
snake/camel names with digits or separators, URLs, hosts, dates and numbers -- verbatim, in
first-seen order, without duplicates (concrete facts survive re-summarization as far
as the budget allows).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence

import attrs

from regio.content import (
    Document,
    Entry,
    Image,
    Text,
    ToolResult,
    ToolUse,
    block_text,
    canonical_json,
)
from regio.tokens import HeuristicCounter, TokenCounter

from .observations import is_observation
from .salience import SECTIONS, sort_entries
from .summarizer import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_SUMMARY_TOKENS
from .tracebacks import condense

__all__ = ["ExtractiveSummarizer", "extract_identifiers"]

#: The identifier forms that need a ``/`` (URLs, paths), then the others.
_SLASH_FORMS = (
    r"(?:https?://\S+)",  # URLs
    r"(?:~?[\w.-]*/[\w./-]+)",  # paths
)
_FORMS = (
    r"(?:\b\w+\.(?:py|js|ts|tsx|json|yaml|yml|toml|md|txt|rs|go|java|c|h|cpp|sh|cfg|ini)\b)",
    r"(?:\b\d{4}-\d{2}-\d{2}\b)",  # dates
    r"(?:\b[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+\b)",  # ORD-4471, db-07.internal, snake_case
    r"(?:\b[a-z]+[A-Z]\w*\b)",  # camelCase
    r"(?:\b[A-Z][A-Z0-9]{2,}\b)",  # CONSTANTS
    r"(?:\b\d[\d,.]*\b)",  # numbers
)
_IDENT = re.compile("|".join((*_SLASH_FORMS, *_FORMS)))
#: :data:`_IDENT` without the forms that need a ``/``: the same matches in text without one.
#: The path form is tried at every position of a word (it has no ``\b``) and fails there only
#: at the word's end: quadratic in the word's length. No form matches across whitespace, so
#: each whitespace-separated piece holding a ``/`` (:data:`_SLASHED`) is read with
#: :data:`_IDENT` and the text between them with this one, in order: the same tokens, in
#: linear time.
_IDENT_NO_SLASH = re.compile("|".join(_FORMS))
_SLASHED = re.compile(r"(?<!\S)\S*/\S*")


def extract_identifiers(text: str) -> list[str]:
    """Identifier-like tokens of ``text`` (paths, ids, dates, names, numbers), first-seen order,
    without duplicates."""
    found: list[str] = []
    pos = 0
    for piece in _SLASHED.finditer(text):
        found += _IDENT_NO_SLASH.findall(text, pos, piece.start())
        found += _IDENT.findall(text, piece.start(), piece.end())
        pos = piece.end()
    found += _IDENT_NO_SLASH.findall(text, pos)
    seen = dict.fromkeys(token.rstrip(".,;:)") for token in found)
    seen.pop("", None)
    return list(seen)


def _tool_lines(text: str) -> list[str]:
    """Lines of tool output, each stack trace as one line (:func:`condense`)."""
    return [line for line, _ in condense(text.splitlines(), MAX_LINE_CHARS)]


def _lines(entry: Entry) -> list[str]:
    lines: list[str] = []
    observed = is_observation(entry) or entry.role == "tool"
    for block in entry.blocks:
        if isinstance(block, Text):
            lines.extend(_tool_lines(block.text) if observed else block.text.splitlines())
        elif isinstance(block, ToolResult):
            lines.extend(
                f"result({block.tool_use_id}): {ln}" if i == 0 else ln
                for i, ln in enumerate(_tool_lines(block_text(block)) or [""])
            )
        elif isinstance(block, ToolUse):
            lines.append(f"call {block.name}({block.id}) {canonical_json(block.input).decode()}")
        elif isinstance(block, Image | Document):  # its description, never its bytes
            lines.extend(block_text(block).splitlines())
    return [ln.strip() for ln in lines if ln.strip()]


#: Longest line kept (characters); longer lines are cut with an ellipsis.
MAX_LINE_CHARS = 240
#: Most identifiers kept per entry.
MAX_IDENTIFIERS = 40
#: Longest first line kept per entry in the ``compact`` form (characters).
COMPACT_LINE_CHARS = 80


def _clip(line: str, limit: int = MAX_LINE_CHARS) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def _label(entry: Entry) -> str:
    if is_observation(entry):  # the environment's output, not the user's words
        return "observation"
    return entry.role or (f"note {entry.key}" if entry.key else "note")


@attrs.define(eq=False)
class ExtractiveSummarizer:
    """Keeps first/last lines and identifiers of each entry, within half of what it replaces;
    needs no model (see module doc).

    ``context_window`` / ``max_summary_tokens`` / ``reserve_tokens`` are tokens, as for every
    summarizer; ``counter`` measures the input and the output bound (``None``: the heuristic
    counter; an engine gives a summarizer without one its own counter, so the bound holds in
    the engine's tokens). Calling it returns the summary text (never raises for well-formed
    entries).
    """

    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    reserve_tokens: int | None = None
    counter: TokenCounter | None = None
    _heuristic: TokenCounter = attrs.field(factory=HeuristicCounter, init=False, repr=False)

    def with_counter(self, counter: TokenCounter) -> ExtractiveSummarizer:
        """A copy of this summarizer that measures with ``counter``. A copy, not
        ``attrs.evolve``: a subclass may have a constructor of its own, and attributes of its
        own, which attrs' copy of the slotted fields would leave out."""
        own = dict(getattr(self, "__dict__", {}))
        twin = copy.copy(self)
        if own:
            twin.__dict__.update(own)
        twin.counter = counter
        return twin

    @property
    def measure(self) -> TokenCounter:
        """The counter in use (``counter``, else the heuristic one)."""
        return self.counter if self.counter is not None else self._heuristic

    def replaced_tokens(self, entries: Sequence[Entry]) -> int:
        """Tokens the summary replaces: every entry but a context-only previous summary,
        each at the smaller of its stored ``tokens`` and the ``counter``'s count."""
        total = 0
        for entry in entries:
            if entry.meta.get("context_only"):
                continue
            counted = self.measure.count_entry(entry)
            total += min(entry.tokens, counted) if entry.tokens > 0 else counted
        return total

    def budget(self, entries: Sequence[Entry]) -> int:
        """Output budget in tokens: ``min(max_summary_tokens, replaced_tokens // 2)``, at
        least 1."""
        return max(1, min(self.max_summary_tokens, self.replaced_tokens(entries) // 2))

    def summary_lines(self, entries: Sequence[Entry]) -> list[str]:
        """Lines of the ``detailed`` form (before the size bound)."""
        out: list[str] = []
        for entry in entries:
            if entry.meta.get("summary"):
                if not entry.meta.get("context_only"):
                    out.extend(ln for ln in entry.text.splitlines() if ln.strip())
                continue
            lines = _lines(entry)
            if not lines:
                continue
            out.append(f"{_label(entry)}: {_clip(lines[0])}")
            middle = lines[1:-1]
            if middle:
                idents = extract_identifiers("\n".join(middle))[:MAX_IDENTIFIERS]
                if idents:
                    out.append("  ids: " + " ".join(idents))
            if len(lines) > 1:
                out.append(f"  last: {_clip(lines[-1])}")
        return out

    def compact_lines(self, entries: Sequence[Entry]) -> list[str]:
        """Lines of the ``compact`` form: one per entry, no labels beyond the role."""
        out: list[str] = []
        seen: set[str] = set()
        for entry in entries:
            if entry.meta.get("summary"):
                if entry.meta.get("context_only"):
                    seen.update(extract_identifiers(entry.text))
                else:
                    out.extend(ln for ln in entry.text.splitlines() if ln.strip())
                continue
            lines = _lines(entry)
            if not lines:
                continue
            head = _clip(lines[0], COMPACT_LINE_CHARS)
            seen.update(extract_identifiers(head))
            rest = [t for t in extract_identifiers("\n".join(lines[1:])) if t not in seen][
                :MAX_IDENTIFIERS
            ]
            seen.update(rest)
            out.append(f"{_label(entry)}: {head}" + (" | " + " ".join(rest) if rest else ""))
        return out

    def identifier_line(self, entries: Sequence[Entry], budget: int) -> str:
        """The ``identifiers`` form cut to ``budget`` tokens (a ``[+N more]`` marker when
        identifiers are left out; the text itself cut when even one does not fit)."""
        context: set[str] = set()
        text_parts: list[str] = []
        for entry in entries:
            if entry.meta.get("context_only"):
                context.update(extract_identifiers(entry.text))
            elif entry.meta.get("summary"):
                text_parts.append(entry.text)
            else:
                text_parts.append("\n".join(_lines(entry)))
        idents = [t for t in extract_identifiers("\n".join(text_parts)) if t not in context]
        if not idents:
            words = " ".join(" ".join(text_parts).split())
            return self._cut(words, budget)
        kept: list[str] = []
        for index, token in enumerate(idents):
            marker = f" [+{len(idents) - index - 1} more]" if index + 1 < len(idents) else ""
            candidate = " ".join([*kept, token]) + marker
            if self.measure.count(candidate) > budget:
                break
            kept.append(token)
        if not kept:
            return self._cut(idents[0], budget)
        line = " ".join(kept)
        if len(kept) < len(idents):
            line += f" [+{len(idents) - len(kept)} more]"
        return line

    def _cut(self, text: str, budget: int) -> str:
        """``text`` cut (at a character) to at most ``budget`` tokens."""
        if self.measure.count(text) <= budget:
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.measure.count(text[:mid]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    def salient_lines(self, entries: Sequence[Entry], budget: int) -> tuple[list[str], str]:
        """The salient sections of ``entries`` (module doc) within ``budget`` tokens, and the
        carried lines of previous summaries that did not fit verbatim (their identifiers go
        to the rest)."""
        salient = sort_entries(entries)
        lines: list[str] = []
        for title in SECTIONS:
            header = False
            for item in salient.sections[title]:
                candidate = [*lines, *([] if header else [f"{title}:"]), f"- {_clip(item)}"]
                if self.measure.count("\n".join(candidate)) <= budget:
                    lines, header = candidate, True
        carried = [*lines, *salient.carried]
        if self.measure.count("\n".join(carried)) <= budget:
            return carried, ""
        return lines, "\n".join(salient.carried)

    def _rest(self, entries: Sequence[Entry], leftover: str, budget: int) -> str:
        """The best form of the non-summary entries that fits ``budget`` tokens (module doc);
        ``leftover``: carried lines that did not fit verbatim."""
        fresh = [e for e in entries if not e.meta.get("summary") or e.meta.get("context_only")]
        if budget <= 0:
            return ""
        if not leftover:
            for lines in (self.summary_lines(fresh), self.compact_lines(fresh)):
                text = "\n".join(lines)
                if text and self.measure.count(text) <= budget:
                    return text
        pool = list(fresh)
        if leftover:
            pool.insert(0, Entry(id="carried", blocks=(Text(leftover),), meta={"summary": True}))
        head = "Facts: "
        line = self.identifier_line(pool, budget - self.measure.count(head))
        return head + line if line.strip() else ""

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str:
        budget = self.budget(entries)
        head, leftover = self.salient_lines(entries, budget)
        head_text = "\n".join(head)
        used = self.measure.count(head_text) + (1 if head else 0)
        rest = self._rest(entries, leftover, budget - used)
        text = "\n".join(part for part in (head_text, rest) if part)
        if text.strip() and self.measure.count(text) <= budget:
            return text
        if head_text.strip():
            return head_text
        return self._cut(" ".join(self.summary_lines(entries)), budget)
