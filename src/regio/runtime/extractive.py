"""A summarizer that needs no model: :class:`ExtractiveSummarizer`.

Deterministic and offline, so every runtime path (compaction, overflow recovery, examples,
tests) runs without a provider. For each entry it keeps:

* the first and the last non-empty line (tool calls as ``call name(id) {json}``);
* every identifier-like token of the lines in between: file paths (``src/app/main.py``),
  ids (``ORD-4471``, ``TCK-9902``), dotted or snake/camel names with digits or separators,
  URLs, hosts, dates and numbers -- verbatim, in first-seen order, without duplicates.

A previous summary (first entry with ``meta["summary"]``) is carried forward verbatim first
(FC-11 part 4). Output is bounded by ``max_summary_tokens`` measured with ``counter`` (the
heuristic counter by default): lines are kept in order until the budget is reached and the cut
is marked with ``[... N lines omitted]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from regio.content import Entry, Text, ToolResult, ToolUse, canonical_json
from regio.tokens import HeuristicCounter, TokenCounter

from .summarizer import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_SUMMARY_TOKENS

__all__ = ["ExtractiveSummarizer", "extract_identifiers"]

_IDENT = re.compile(
    r"(?:https?://\S+)"  # URLs
    r"|(?:~?[\w.-]*/[\w./-]+)"  # paths
    r"|(?:\b\w+\.(?:py|js|ts|tsx|json|yaml|yml|toml|md|txt|rs|go|java|c|h|cpp|sh|cfg|ini)\b)"
    r"|(?:\b\d{4}-\d{2}-\d{2}\b)"  # dates
    r"|(?:\b[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+\b)"  # ORD-4471, db-07.internal, snake_case
    r"|(?:\b[a-z]+[A-Z]\w*\b)"  # camelCase
    r"|(?:\b[A-Z][A-Z0-9]{2,}\b)"  # CONSTANTS
    r"|(?:\b\d[\d,.]*\b)"  # numbers
)


def extract_identifiers(text: str) -> list[str]:
    """Identifier-like tokens of ``text`` (paths, ids, dates, names, numbers), first-seen order,
    without duplicates."""
    seen: dict[str, None] = {}
    for match in _IDENT.finditer(text):
        token = match.group(0).rstrip(".,;:)")
        if token and token not in seen:
            seen[token] = None
    return list(seen)


def _lines(entry: Entry) -> list[str]:
    lines: list[str] = []
    for block in entry.blocks:
        if isinstance(block, Text):
            lines.extend(block.text.splitlines())
        elif isinstance(block, ToolResult):
            lines.extend(
                f"result({block.tool_use_id}): {ln}" if i == 0 else ln
                for i, ln in enumerate(block.content.splitlines() or [""])
            )
        elif isinstance(block, ToolUse):
            lines.append(f"call {block.name}({block.id}) {canonical_json(block.input).decode()}")
    return [ln.strip() for ln in lines if ln.strip()]


#: Longest line kept (characters); longer lines are cut with an ellipsis.
MAX_LINE_CHARS = 240
#: Most identifiers kept per entry.
MAX_IDENTIFIERS = 40


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "\u2026"


@attrs.define(eq=False)
class ExtractiveSummarizer:
    """Keeps first/last lines and identifiers of each entry; needs no model (see module doc).

    ``context_window`` / ``max_summary_tokens`` / ``reserve_tokens`` are tokens, as for every
    summarizer; ``counter`` measures the output bound.
    """

    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    reserve_tokens: int | None = None
    counter: TokenCounter = attrs.field(factory=HeuristicCounter)

    def summary_lines(self, entries: Sequence[Entry]) -> list[str]:
        """All lines the summary would hold before the size bound."""
        out: list[str] = []
        for entry in entries:
            if entry.meta.get("summary"):
                out.extend(ln for ln in entry.text.splitlines() if ln.strip())
                continue
            lines = _lines(entry)
            if not lines:
                continue
            label = entry.role or (f"note {entry.key}" if entry.key else "note")
            out.append(f"- {label} {entry.id}: {_clip(lines[0])}")
            middle = lines[1:-1]
            if middle:
                idents = extract_identifiers("\n".join(middle))[:MAX_IDENTIFIERS]
                if idents:
                    out.append("  ids: " + " ".join(idents))
            if len(lines) > 1:
                out.append(f"  last: {_clip(lines[-1])}")
        return out

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str:
        lines = self.summary_lines(entries)
        kept: list[str] = []
        used = 0
        budget = self.max_summary_tokens
        for index, line in enumerate(lines):
            cost = self.counter.count(line + "\n")
            # keep room for the omission marker
            if used + cost > budget - 8:
                kept.append(f"[... {len(lines) - index} lines omitted]")
                break
            kept.append(line)
            used += cost
        return "\n".join(kept)
