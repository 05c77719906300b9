"""Durable items in the window: each ``compact_history``'s item section.

A compaction first extracts typed items from what it summarizes
(:func:`regio.summarizers.extract.extract_items`) on top of the items its history already
keeps, so a later item of a subject supersedes the earlier one across compactions. The items
live in one entry of the history, always after its summaries (``meta[ITEMS_META]`` holds
them), rendered in priority order (constraints first). The entry changes only when a
compaction changes an item, so between compactions it is byte-identical, and placed last it
costs the cache nothing beyond its own bytes: a compaction rewrites the conversation after it
anyway. A summary holds prose only: what is not an item.

**The summarizer's reply** is read in the carry-forward schema
(:mod:`regio.summarizers.carryforward`). A summarizer whose items are the extractor's own
(``extracts_items = True``, :class:`regio.summarizers.ExtractiveSummarizer`) gives only its
prose. Any other reply with item lists is validated against the extracted items: if it left out
a constraint the extractor found, its items are not used (event ``items_fallback``); otherwise
its items that are verbatim in the input and name a subject the extractor did not find are
added, an item whose text tool output holds with a tool's authority whatever heading the reply
gave it, unless the user wrote it too (:func:`tool_text`, :func:`user_text`); any other item
has the agent's authority at most. A reply without item lists is prose; the extracted items are
used.

**A merge** of stored summaries adds no item that the section already has a key for: the
summaries are older than every item (a summary stored before item sections existed may still
hold item lists; they are added as older items). A tool's item (a reported value, a quote)
stays a tool's whatever heading a merging reply lists it under.

**Budget.** The section counts in its history's budget. Over it, the history first merges its
summaries' prose (oldest first; a merge reads the section, so the merged prose is sized as if
the items were part of it); only when one summary is left do items go: the lowest-priority
first (quotes of tool output first, then the last kind; among facts, the values a tool reported
before the stated ones; the item updated longest ago first:
:meth:`regio.summarizers.items.ItemSet.fit`), event ``items_dropped`` naming each. The section
is measured as rendered, so a tool's reported values count in the budget like every other item;
they are bounded before any budget (:data:`regio.summarizers.items.MAX_TOOL_ITEMS` in all,
:data:`regio.summarizers.items.MAX_TOOL_ITEMS_PER_LABEL` per label, or
:data:`regio.summarizers.items.MAX_TOOL_IDS_PER_LABEL` of identifiers;
:data:`regio.summarizers.items.MAX_TOOL_QUOTES` quotes; the oldest going as superseded in
``items_updated``), since a tool reports values by the dozen and, unbounded, they would squeeze
the summaries' prose before any item went.

**Errors stay with their summary.** An error is reported once, by the batch it happened in: the
summary's prose keeps its batch's error lines, and the section holds no error items.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import msgspec

from regio.content import Entry, Text, ToolResult
from regio.regions import CompactHistory, PendingCompaction
from regio.regions.compaction import ITEMS_META
from regio.session._events import ItemsDropped, ItemsFallback, ItemsUpdated
from regio.session._session import Session
from regio.summarizers.carryforward import check_reply, split_reply
from regio.summarizers.extract import extract_items, is_tool_output
from regio.summarizers.items import DurableItem, ItemSet, parse_items

__all__ = [
    "Settled",
    "commit_items",
    "fit_history",
    "merge_context",
    "render_section",
    "section_items",
    "settle",
    "tool_text",
    "user_text",
    "write_items",
]

#: The prose of a summary whose whole input became items (a single ellipsis when even this
#: would not be smaller than the turns it replaces).
EMPTY_PROSE = "(the summarized turns are kept as the durable items below)"


def section_items(history: CompactHistory) -> ItemSet:
    """The items ``history``'s section keeps (a new set: changing it changes nothing)."""
    entry = history.item_entry()
    if entry is None:
        return ItemSet()
    return ItemSet.from_meta(entry.meta[ITEMS_META])


@attrs.frozen
class Settled:
    """What a compaction does to the items: the summary's ``prose``, the resulting ``items``,
    and what changed (``added``, ``superseded``, ``closed``: items; ``rejected``: reply items
    not found in the input; ``dropped``: extracted constraints a reply left out)."""

    prose: str
    items: ItemSet
    added: tuple[DurableItem, ...] = ()
    superseded: tuple[DurableItem, ...] = ()
    closed: tuple[DurableItem, ...] = ()
    rejected: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()


def _errors_out(items: ItemSet) -> list[DurableItem]:
    """Take the error items out of ``items``: they stay in their summary's prose (module
    doc)."""
    return items.remove(i.key for i in items.items() if i.kind == "error")


def _empty_prose(c: Session, p: PendingCompaction) -> str:
    return EMPTY_PROSE if c.count_text(EMPTY_PROSE) < p.tokens else "\u2026"


def settle(c: Session, p: PendingCompaction, entries: Sequence[Entry], reply: str) -> Settled:
    """The items and prose of one compaction of ``entries`` (module doc); changes nothing."""
    history = c.window.region(p.target) if p.target else None
    base = section_items(history) if isinstance(history, CompactHistory) else ItemSet()
    reply_items, prose, structured = split_reply(reply)
    own = bool(getattr(c.summarizer, "extracts_items", False))
    if p.operation == "merge":
        parsed = [i for entry in entries for i in split_reply(entry.text)[0]]
        # an item a merging reply lists keeps the kind and authority of the item it was
        # (a tool's stays a tool's, whatever heading the reply gives it); one that was no
        # item has the agent's authority at most: the summarizer's claim, never the user's
        origin = {i.text: (i.kind, not i.by_tool, i.by_tool) for i in parsed}
        origin.update((i.text, (i.kind, i.by_user, i.by_tool)) for i in base.items())
        older = [_as_before(i.kind, i.text, i.by_tool, origin) for i in reply_items]
        older = older if structured and not own else []
        # summaries stored before item sections held item lists
        older.extend((i.kind, i.text, not i.by_tool, i.by_tool) for i in parsed)
        # errors stay with the summary that reported them (their prose), never re-enter
        added = base.add_older([i for i in older if i[0] != "error"])
        return Settled(prose or _empty_prose(c, p), base, added=tuple(added))
    fresh = [e for e in entries if not e.meta.get("summary") or not e.meta.get("context_only")]
    extraction = extract_items(fresh, base)
    rejected: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    added = list(extraction.added)
    if structured and not own and reply_items:
        source = "\n".join(e.text for e in fresh)
        users, tools = user_text(fresh), tool_text(fresh)
        check = check_reply(reply_items, extraction.added, source, user_text=users, tool_text=tools)
        rejected, dropped = check.rejected, check.dropped
        if not check.fallback:
            for item in check.accepted:
                kept, gone = extraction.items.add(
                    item.kind, item.text, key=item.key, by_user=item.by_user, by_tool=item.by_tool
                )
                if kept is not None:
                    added.append(kept)
                extraction.superseded.extend(gone)
    errors = _errors_out(extraction.items)
    return Settled(
        prose or _empty_prose(c, p),
        extraction.items,
        added=tuple(i for i in added if i not in errors),
        superseded=tuple(extraction.superseded),
        closed=tuple(extraction.closed),
        rejected=rejected,
        dropped=dropped,
    )


def _as_before(
    kind: str, text: str, by_tool: bool, origin: dict[str, tuple[str, bool, bool]]
) -> tuple[str, str, bool, bool]:
    """``(kind, text, by_user, by_tool)`` of a merging reply's item: those of the item it was
    (``origin``: text -> kind, by_user, by_tool), else the reply's kind with the agent's
    authority at most."""
    if text in origin:
        was_kind, by_user, was_tool = origin[text]
        return was_kind, text, by_user, was_tool
    return kind, text, False, by_tool


def user_text(entries: Sequence[Entry]) -> str:
    """What the user wrote in ``entries``: the text blocks of user entries that are not tool
    output, and a summary's items that are not a tool's (they were checked when they were
    made); never the agent's text, a tool result's or an observation's."""
    out: list[str] = []
    for entry in entries:
        if entry.meta.get("summary"):
            out.extend(i.text for i in parse_items(entry.text)[0] if not i.by_tool)
        elif entry.role == "user" and not is_tool_output(entry):
            out.extend(b.text for b in entry.blocks if isinstance(b, Text))
    return "\n".join(out)


def tool_text(entries: Sequence[Entry]) -> str:
    """What tools printed in ``entries``: tool results and observations (their text), and a
    summary's items that are a tool's."""
    out: list[str] = []
    for entry in entries:
        if entry.meta.get("summary"):
            out.extend(i.text for i in parse_items(entry.text)[0] if i.by_tool)
        elif is_tool_output(entry):
            out.append(entry.text)
        else:
            out.extend(b.content for b in entry.blocks if isinstance(b, ToolResult))
    return "\n".join(out)


def merge_context(c: Session, p: PendingCompaction) -> tuple[Entry, ...]:
    """What a merge of ``p``'s summaries reads besides them: its history's item section, as
    a summary it carries first (and does not replace: the section stays as it is). So the
    merged prose is sized as if the items were part of the summaries it merges, as they were
    before they had a section of their own: half of summaries plus items, less the items."""
    history = c.window.region(p.region) if p.operation == "merge" else None
    section = history.item_entry() if isinstance(history, CompactHistory) else None
    if section is None:
        return ()
    return (msgspec.structs.replace(section, meta={**section.meta, "summary": True}),)


def render_section(items: ItemSet) -> str:
    """The text of an item section holding ``items``: their kinds' item lists, as in a
    summary (:func:`regio.summarizers.items.render_items`), with no heading of its own, so
    it costs the history no more than the same lines inside a summary."""
    return items.render()


def commit_items(c: Session, history: CompactHistory, settled: Settled, source: str) -> None:
    """Write ``settled.items`` as ``history``'s item section, after its summaries (the entry is
    kept, byte for byte, when no item changed), and emit ``items_updated`` and
    ``items_fallback``."""
    if settled.dropped:
        c.emit(ItemsFallback(history.name, source, settled.dropped, settled.rejected))
    write_items(c, history, settled.items)
    if settled.added or settled.superseded or settled.closed:
        c.emit(
            ItemsUpdated(
                history.name,
                source,
                tuple(i.key for i in settled.added),
                tuple(i.text for i in settled.superseded),
                tuple(i.text for i in settled.closed),
                len(settled.items),
            )
        )


def write_items(c: Session, history: CompactHistory, items: ItemSet) -> None:
    """Make ``items`` ``history``'s item section, after its summaries: the entry is moved, not
    rewritten, when its items did not change (its bytes stay), and removed when none is
    left."""
    old = history.item_entry()
    data = items.to_meta()
    if old is not None and old.meta[ITEMS_META] == data:
        if history.entries[-1] is not old:  # a new summary came after it: move it last
            history.remove_ids([old.id])
            history.insert(len(history.entries), old)
        return
    if old is not None:
        history.remove_ids([old.id])
    if len(items):
        entry = c.window.make_entry(render_section(items), meta={ITEMS_META: data})
        history.insert(len(history.entries), entry)


def fit_history(c: Session, history: CompactHistory) -> list[DurableItem]:
    """Drop ``history``'s lowest-priority items while it is over budget and has no summaries
    left to merge (module doc); emits ``items_dropped``. Returns the dropped items."""
    if history.used_tokens <= history.budget or history.pending():
        return []
    if len(history.summaries()) > 1 or history.item_entry() is None:
        return []
    items = section_items(history)
    rest = history.used_tokens - history.item_entry().tokens  # type: ignore[union-attr]
    room = history.budget - rest

    def fits(kept: list[DurableItem]) -> bool:
        return not kept or c.count_text(render_section(ItemSet.of(kept))) <= room

    dropped = items.fit(fits)
    if dropped:
        write_items(c, history, items)
        c.emit(ItemsDropped(history.name, tuple(i.text for i in dropped), "budget"))
    return dropped
