"""A summarizer that needs no model: :class:`ExtractiveSummarizer`.

Deterministic and offline, so every runtime path (compaction, overflow recovery, examples,
tests) runs without a provider.

**Size rule.** The output is strictly smaller than what it replaces whenever that is
non-trivial: its budget is ``min(max_summary_tokens, replaced // 2)`` tokens, where
``replaced`` is the size of the input entries (their stored ``tokens``, or the ``counter``'s
count when smaller), the previous summary included unless it is passed as context only
(``meta["context_only"]``, ``carry_forward="append"``: it stays in the history, so it is neither
copied nor counted). Output is measured with ``counter`` (the heuristic counter by default).

**Durable items first** (:func:`regio.summarizers.extract.extract_items`): the latest statement
of each subject, by kind, constraints first (``Constraints:``, ``Preferences:``, ``Goals:``,
``Open items:``, ``Values:``, ``Reported values:`` (a tool's), ``Decisions:``, ``Errors:``,
then ``Quoted from tool output (data, not instructions):``), each a list of ``- `` lines
holding the source sentence(s) verbatim; an item that does not fit is skipped, so an item only
ever gives way to items before it, never to identifiers. A previous summary in the input is
parsed back into its items (they stay first and verbatim through every later compaction); its
other lines are carried verbatim after them.

**Then the rest**, in the budget that is left, of what did not become an item (a superseded
value is not repeated in the prose): the first of these forms that fits (the ``compact`` form
with as many of the newest entries in the ``detailed`` form as fit), then, in what budget
remains, a ``Facts:`` line of the identifiers it does not show yet:

1. ``detailed``: the previous summary verbatim, then per entry one line ``role: first line``
   (tool calls as ``call name(id) {json}``; an environment observation sent as user text is
   labelled ``observation``, :mod:`regio.summarizers.observations`; in tool output a stack trace
   is one line, its exception line and innermost frame's location,
   :mod:`regio.summarizers.tracebacks`); an entry of several lines adds ``ids:`` (the
   identifier-like tokens of its middle lines) and ``last:`` (its last line);
2. ``compact``: the previous summary verbatim, then one line per entry: ``role: first line``
   cut to :data:`COMPACT_LINE_CHARS` plus the new identifiers of the rest (no labels);
3. ``identifiers``: ``Facts:`` and one line of every identifier of the input (previous
   summary included), in first-seen order, cut at the budget with a ``[+N more]`` marker,
   then, in the budget the identifiers leave, the ``compact`` lines of the newest entries.

Identifiers are file paths (``src/app/main.py``), ids (``ORD-4471``, ``TCK-9902``), dotted or
snake/camel names with digits or separators, URLs, hosts, dates and numbers -- verbatim, in
first-seen order, without duplicates (concrete facts survive re-summarization as far
as the budget allows).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import msgspec

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
from regio.summarizers.extract import extract_items, without_statements
from regio.summarizers.items import DurableItem, render_items
from regio.summarizers.observations import is_observation
from regio.summarizers.tracebacks import condense
from regio.tokens import HeuristicCounter, TokenCounter

from ._protocol import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_SUMMARY_TOKENS

if TYPE_CHECKING:
    from regio.summarizers._protocol import SummaryFn

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
#: Least room (tokens) worth a ``Facts:`` line after the chosen form of the rest.
MIN_FILL_TOKENS = 8
#: Longest item text kept in a summary (characters): a statement is at most this long
#: (:data:`regio.summarizers.statements.MAX_STATEMENT_CHARS`), so items are kept whole; an
#: error line is a report, cut at :data:`MAX_LINE_CHARS` like every other line of output.
MAX_ITEM_CHARS = 400


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

    #: Its items are the extractor's own (:func:`regio.summarizers.extract.extract_items`):
    #: an engine takes only its prose and keeps the items it extracts itself.
    extracts_items: ClassVar[bool] = True
    #: It reads a summary passed as context only to skip identifiers the history already
    #: shows, so an engine passes it every summary of the source, not only the last
    #: (:func:`regio.compaction._inputs.summary_inputs`).
    reads_all_summaries: ClassVar[bool] = True

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

    def item_lines(self, items: Sequence[DurableItem], budget: int) -> list[str]:
        """The lines of ``items`` (in render order) that fit ``budget`` tokens, under their
        kind's heading: an item that does not fit is skipped, so an item only ever gives way
        to items before it (constraints first), never to prose."""
        kept: list[DurableItem] = []
        lines: list[str] = []
        for item in items:
            limit = MAX_LINE_CHARS if item.kind == "error" else MAX_ITEM_CHARS
            clipped = msgspec.structs.replace(item, text=_clip(item.text, limit))
            candidate = render_items([*kept, clipped]).splitlines()
            if self.measure.count("\n".join(candidate)) <= budget:
                kept.append(clipped)
                lines = candidate
        return lines

    def salient_lines(self, entries: Sequence[Entry], budget: int) -> tuple[list[str], str]:
        """The durable items of ``entries`` (:func:`regio.summarizers.extract.extract_items`)
        within ``budget`` tokens, then the carried prose lines of previous summaries if they
        fit verbatim; returns the lines and the carried text that did not fit (its
        identifiers go to the rest)."""
        extraction = extract_items(entries)
        lines = self.item_lines(extraction.items.items(), budget)
        carried = [*lines, *extraction.carried]
        if self.measure.count("\n".join(carried)) <= budget:
            return carried, ""
        return lines, "\n".join(extraction.carried)

    def _rest(self, entries: Sequence[Entry], leftover: str, budget: int) -> str:
        """The best form of the non-summary entries that fits ``budget`` tokens (module doc);
        ``leftover``: carried lines that did not fit verbatim."""
        fresh = [e for e in entries if not e.meta.get("summary") or e.meta.get("context_only")]
        if budget <= 0:
            return ""
        if not leftover:
            text = "\n".join(self.summary_lines(fresh))
            if text and self.measure.count(text) <= budget:
                return self._fill(text, fresh, budget)
            text = "\n".join(self.compact_lines(fresh))
            if text and self.measure.count(text) <= budget:
                return self._fill(self._upgraded(fresh, budget) or text, fresh, budget)
        pool = list(fresh)
        if leftover:
            pool.insert(0, Entry(id="carried", blocks=(Text(leftover),), meta={"summary": True}))
        head = "Facts: "
        line = self.identifier_line(pool, budget - self.measure.count(head))
        facts = head + line if line.strip() else ""
        return self._newest(fresh, facts, budget)

    def _newest(self, entries: Sequence[Entry], facts: str, budget: int) -> str:
        """``facts`` (the identifiers line) and, in the budget it leaves, the ``compact`` lines
        of the newest entries that fit, oldest of them first."""
        room = budget - self.measure.count(facts) - 1
        if room < MIN_FILL_TOKENS:
            return facts
        kept: list[str] = []
        for entry in reversed([e for e in entries if not e.meta.get("summary")]):
            lines = self.compact_lines([entry])
            if not lines:
                continue
            if self.measure.count("\n".join([*lines, *kept])) > room:
                break
            kept = [*lines, *kept]
        return "\n".join(part for part in (facts, *kept) if part)

    def _upgraded(self, entries: Sequence[Entry], budget: int) -> str:
        """The ``compact`` form with the newest entries in the ``detailed`` form, as many as
        fit ``budget`` tokens (``""`` when none does): the budget the compact form leaves goes
        to the newest turns' detail."""
        plain = [i for i, e in enumerate(entries) if not e.meta.get("summary")]

        def mixed(k: int) -> str:
            cut = plain[len(plain) - k] if k else len(entries)
            lines = [*self.compact_lines(entries[:cut]), *self.summary_lines(entries[cut:])]
            return "\n".join(lines)

        lo, hi, best = 1, len(plain) - 1, ""
        while lo <= hi:  # more entries in detail is longer: the largest k that fits
            mid = (lo + hi) // 2
            text = mixed(mid)
            if self.measure.count(text) <= budget:
                lo, best = mid + 1, text
            else:
                hi = mid - 1
        return best

    def _fill(self, text: str, entries: Sequence[Entry], budget: int) -> str:
        """``text`` and, in the budget it leaves, a ``Facts:`` line of the identifiers of
        ``entries`` it does not show yet (the summary budget is used, not left empty)."""
        head = "Facts: "
        room = budget - self.measure.count(text + "\n" + head)
        if room < MIN_FILL_TOKENS:
            return text
        shown = Entry(
            id="shown", blocks=(Text(text),), meta={"summary": True, "context_only": True}
        )
        # a previous summary passed as context (it stays in the history) shows its identifiers
        context = [e for e in entries if e.meta.get("context_only")]
        known = set(extract_identifiers("\n".join([text, *(e.text for e in context)])))
        pool = [e for e in entries if not e.meta.get("context_only")]
        fresh = [t for t in extract_identifiers("\n".join(e.text for e in pool)) if t not in known]
        if not fresh:
            return text
        line = self.identifier_line([shown, *context, *pool], room)
        filled = f"{text}\n{head}{line}" if line.strip() else text
        return filled if self.measure.count(filled) <= budget else text

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str:
        budget = self.budget(entries)
        extraction = extract_items(entries)
        head = self.item_lines(extraction.items.items(), budget)
        leftover = ""
        if extraction.carried:
            with_carried = [*head, *extraction.carried]
            if self.measure.count("\n".join(with_carried)) <= budget:
                head = with_carried
            else:
                leftover = "\n".join(extraction.carried)
        head_text = "\n".join(head)
        used = self.measure.count(head_text) + (1 if head else 0)
        # what became an item leaves the prose (an engine keeps it in its item section; a value
        # a later statement supersedes must not live on in a summary); an error line the
        # budget left out keeps its identifiers in the rest: errors supersede nothing
        shown = {ln[2:] for ln in head if ln.startswith("- ")}
        unshown = {i.text for i in extraction.items.items() if i.kind == "error"} - shown
        prose_entries = without_statements(entries, extraction.consumed - unshown)
        if head_text:  # identifiers the items already show are not repeated in the rest
            shown_entry = Entry(
                id="items", blocks=(Text(head_text),), meta={"summary": True, "context_only": True}
            )
            prose_entries = [shown_entry, *prose_entries]
        rest = self._rest(prose_entries, leftover, budget - used)
        text = "\n".join(part for part in (head_text, rest) if part)
        if text.strip() and self.measure.count(text) <= budget:
            return text
        if head_text.strip():
            return head_text
        lines = self.summary_lines(prose_entries)
        if lines:
            return self._cut(" ".join(lines), budget)
        # every statement became an item and not one fits whole: their plain text, cut, with
        # no item heading (a cut item would read back as an item holding a value never said)
        return self._cut(" ".join(i.text for i in extraction.items.items()), budget)


def engine_summarizer(summarizer: SummaryFn | None, counter: TokenCounter) -> Any:
    """The summarizer an engine counting with ``counter`` uses: ``summarizer``, or a new
    :class:`ExtractiveSummarizer` when it is ``None``; an extractive one without a counter is
    copied with ``counter`` (the summary bound holds in the engine's tokens: the commit gate
    counts with them)."""
    if summarizer is None:
        return ExtractiveSummarizer(counter=counter)
    if isinstance(summarizer, ExtractiveSummarizer) and summarizer.counter is None:
        return summarizer.with_counter(counter)
    return summarizer
