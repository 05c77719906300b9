"""Extracting durable items from the entries a compaction summarizes.

:func:`extract_items` reads entries in order into an :class:`~regio.summarizers.items.ItemSet`
(optionally on top of the items the session already keeps):

* a **previous summary** (``meta["summary"]``) is parsed back: its item lists become items
  again (the user's authority, except its ``Reported values``: a tool's facts stay a tool's,
  :func:`~regio.summarizers.items.parse_items`) and its other lines are carried as prose; a
  context-only one (``meta["context_only"]``: it stays in the history) only marks its items
  as already kept;
* the **user's and the agent's own text** is split into statements
  (:func:`regio.summarizers.statements.statements`); a statement that completes an open to-do
  closes it, and each statement is sorted into a kind
  (:func:`regio.summarizers.kinds.classify`) and added under its key, superseding the earlier
  item of that key;
* **tool output** -- tool results, and environment observations a plain-text agent sends as
  user text (:func:`regio.summarizers.observations.is_observation`) -- has no authority to
  instruct or to complete: it gives error lines (:func:`~regio.summarizers.kinds.tool_errors`,
  at most :data:`~regio.summarizers.kinds.MAX_TOOL_ERRORS` per result) and the values it
  reports (:func:`~regio.summarizers.toolfacts.tool_facts`, at most
  :data:`~regio.summarizers.toolfacts.MAX_TOOL_FACTS` per result), always as ``fact`` items
  marked ``by_tool``. A fact says what a tool observed, not what anyone must do, so it is no
  instruction; it supersedes an earlier report of its subject or the agent's own fact, never
  any other item (:class:`~regio.summarizers.items.ItemSet`, "Authority"), and a set keeps at
  most :data:`~regio.summarizers.items.MAX_TOOL_ITEMS` of them, at most
  :data:`~regio.summarizers.items.MAX_TOOL_ITEMS_PER_LABEL` per label (the oldest go, reported
  as superseded). It completes nothing. Its sentences that state a rule, a to-do or a value
  (:func:`~regio.summarizers.toolnotes.tool_notes`, at most
  :data:`~regio.summarizers.toolnotes.MAX_TOOL_NOTES` per result) are kept as **quotes**, with
  the tool's authority only (:mod:`regio.summarizers.toolnotes`): never a constraint or a
  to-do of anyone's.

The :class:`Extraction` says what changed (items added, superseded, closed) and which
statements became items (``consumed``), so the prose of a summary can leave them out: a value
that a later statement supersedes must not live on in the prose either.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import attrs
import msgspec

from regio.content import Entry, Text, ToolResult

from .items import DurableItem, ItemSet, parse_items
from .kinds import HEADINGS, SECTIONS, classify, tool_errors
from .observations import is_observation
from .openitems import completion
from .statements import MAX_STATEMENT_CHARS, statements
from .toolfacts import tool_facts
from .toolnotes import QUOTE_KIND, tool_notes

__all__ = ["Extraction", "extract_items", "is_tool_output", "without_statements"]


def is_tool_output(entry: Entry) -> bool:
    """Whether ``entry`` is tool output as a whole: a ``tool`` message or an environment
    observation sent as user text."""
    return entry.role == "tool" or is_observation(entry)


@attrs.define
class Extraction:
    """What :func:`extract_items` found: the resulting ``items``; ``added`` (items of this
    extraction still kept), ``superseded`` and ``closed`` (earlier items that left);
    ``consumed`` (every statement that became an item, kept or superseded since);
    ``carried`` (previous summaries' lines outside any item list, verbatim); ``known``
    (items a context-only previous summary already holds)."""

    items: ItemSet
    added: list[DurableItem] = attrs.field(factory=list)
    superseded: list[DurableItem] = attrs.field(factory=list)
    closed: list[DurableItem] = attrs.field(factory=list)
    consumed: set[str] = attrs.field(factory=set)
    carried: list[str] = attrs.field(factory=list)
    known: set[str] = attrs.field(factory=set)
    _carried_seen: set[str] = attrs.field(factory=set, repr=False)

    @property
    def sections(self) -> dict[str, list[str]]:
        """Heading -> the texts of the items of that kind, in render order, every heading of
        :data:`regio.summarizers.kinds.SECTIONS` present (a copy)."""
        out: dict[str, list[str]] = {heading: [] for heading in SECTIONS}
        for item in self.items.items():
            if item.kind in HEADINGS:  # quotes of tool output are no section of a kind
                out[HEADINGS[item.kind]].append(item.text)
        return out

    def _record(self, added: DurableItem | None, gone: list[DurableItem]) -> None:
        if added is not None:
            self.added.append(added)
            self.consumed.add(added.text)
        for item in gone:
            if item in self.added:
                self.added.remove(item)
            self.superseded.append(item)

    def _close(self, closed: list[DurableItem]) -> None:
        for item in closed:
            if item in self.added:
                self.added.remove(item)
            self.closed.append(item)


def _texts(entry: Entry) -> list[tuple[str, bool]]:
    """``(text, is_tool_output)`` of the entry's text-bearing blocks."""
    out: list[tuple[str, bool]] = []
    for block in entry.blocks:
        if isinstance(block, Text):
            out.append((block.text, False))
        elif isinstance(block, ToolResult):
            out.append((block.content, True))
    return out


def _read_summary(out: Extraction, entry: Entry) -> None:
    parsed, rest = parse_items(entry.text)
    if entry.meta.get("context_only"):
        out.known.update(item.text for item in parsed)
        return
    for item in parsed:  # a listed tool fact keeps a tool's authority
        added = out.items.add(
            item.kind, item.text, by_user=not item.by_tool, by_tool=item.by_tool, source=entry.id
        )
        out._record(*added)
    seen = out._carried_seen  # kept across summaries: one pass over all carried lines
    for line in rest:
        if line.strip() and line not in seen:
            seen.add(line)
            out.carried.append(line)


def _read_statement(
    out: Extraction, statement: str, role: str | None, source: str, alone: bool = False
) -> None:
    if len(statement) > MAX_STATEMENT_CHARS:
        return
    done = completion(statement)
    completed = False
    if done is not None:
        closed = out.items.complete(done)
        out._close(closed)
        completed = bool(closed) or not done.own_verb  # "updated X" reports only what it closes
    kind = classify(statement, role, completed=completed, alone=alone)
    if kind is None:
        return
    known = statement in out.known  # a context-only summary keeps it: it still supersedes
    by_user = role != "assistant"
    out._record(*out.items.add(kind, statement, by_user=by_user, source=source, keep=not known))


def _read_tool_output(out: Extraction, text: str, source: str) -> None:
    """The error lines, reported values and quotes of one tool result (module doc)."""
    for line in tool_errors(text):
        if line not in out.known:
            out._record(*out.items.add("error", line, by_user=False, source=source))
    facts = tool_facts(text)
    for line in facts:
        if line not in out.known:
            added = out.items.add("fact", line, by_user=False, by_tool=True, source=source)
            out._record(*added)
    for line in tool_notes(text, facts):
        if line not in out.known:
            added = out.items.add(QUOTE_KIND, line, by_user=False, by_tool=True, source=source)
            out._record(*added)


def extract_items(entries: Sequence[Entry], base: ItemSet | None = None) -> Extraction:
    """The items of ``entries`` (module doc), added to ``base`` (changed in place) or to a new
    set."""
    out = Extraction(base if base is not None else ItemSet())
    for entry in entries:
        if entry.meta.get("summary"):
            _read_summary(out, entry)
    for entry in entries:
        if entry.meta.get("summary"):
            continue
        observed = is_tool_output(entry)
        for text, tool_output in _texts(entry):
            if tool_output or observed:
                _read_tool_output(out, text, entry.id)
                continue
            found = statements(text)
            for statement in found:
                _read_statement(out, statement, entry.role, entry.id, alone=len(found) == 1)
    return out


def _strip(text: str, statements_: Collection[str]) -> str:
    """``text`` with every line that is, or holds, one of ``statements_`` cut down to what
    is left of it (a line left empty goes)."""
    lines: list[str] = []
    for line in text.splitlines():
        stripped = line
        for statement in statements_:
            if statement and statement in stripped:
                stripped = stripped.replace(statement, "")
        if stripped.strip(" -*\t") or stripped == line:
            lines.append(stripped if stripped != line else line)
    return "\n".join(lines)


def without_statements(entries: Sequence[Entry], consumed: Collection[str]) -> list[Entry]:
    """``entries`` with the statements of ``consumed`` (the items' texts) taken out of their
    text and tool results, for the prose of a summary: what became an item is not repeated,
    and a superseded value does not live on in the prose. Summary entries are left as they
    are; an entry left without text keeps its id (it was summarized all the same)."""
    if not consumed:
        return list(entries)
    out: list[Entry] = []
    for entry in entries:
        if entry.meta.get("summary"):
            out.append(entry)
            continue
        blocks = []
        for block in entry.blocks:
            if isinstance(block, Text):
                block = msgspec.structs.replace(block, text=_strip(block.text, consumed))
            elif isinstance(block, ToolResult):
                block = msgspec.structs.replace(block, content=_strip(block.content, consumed))
            blocks.append(block)
        out.append(msgspec.structs.replace(entry, blocks=tuple(blocks)))
    return out
