"""One render log per session: what the layout derived from the conversation so far.

A :class:`RenderLog` belongs to one engine (``Engine.render_log``); :func:`regio.layout.assemble`
and the renderers read and extend it, so a request costs what is new since the previous one:

* the conversation entries consumed so far, with the notes and frozen tail copies placed after
  them (the *projection*);
* the repaired messages up to the *watermark*, the last point where no tool call is open
  (:class:`regio.layout.repair.RepairFront`): nothing after it can change them;
* their :class:`LayoutBlock` s with digests, chained prefix hashes and running token sums;
* per renderer API, the rendered form of each of those messages (``rendered``).

Everything after the watermark (usually the newest turn) is projected, repaired and hashed
again on every request. There is one invalidation point, :meth:`RenderLog.reset`: it is called
when the conversation is rewritten (compaction, eviction, release, settled notes, collected
tail copies), when the system prefix or the strategy changes, and when a late result answers a
call the log took as missing. Each of those is a cache miss the provider charges anyway. A
newer result of a call whose latest result was a progress report (``ToolResult(final=False)``)
does not reset the log: a newer report is rendered as its own message where it was added and
the superseded report's message is taken out (its entry leaving the window, or rewritten
without it beside the results of parallel calls); the final result replaces the call's running
marker once (:mod:`regio.layout.progresslog`).

Shapes: tokens are ints; hashes are hex sha256 strings (:func:`regio.layout.model.chain_hash`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from itertools import compress, count
from operator import is_not
from typing import Any

import attrs

from regio.content import Block, Entry, Text, block_text
from regio.regions.entrylist import EntryMark, appended_since, entry_mark, unchanged

from .breakpoints import HELD_DIGITS
from .events import LayoutEvent
from .model import LayoutBlock, ToolSpec, block_digest, chain_hash
from .progresslog import drop_removed_reports, retoken, show_latest
from .protocols import RegionLike
from .repair import (
    START_MESSAGE,
    PMessage,
    RepairFront,
    RepairRun,
    StaleFront,
    advance,
    named,
    repair_after,
    run_events,
)
from .watermark import reporting, watermarks

__all__ = [
    "ConversationView",
    "Extra",
    "RenderLog",
    "frozen_message",
    "note_message",
    "same_prefix",
]

#: One message placed after an anchor: (order key, message, tokens per block, region per block).
Extra = tuple[tuple[int, int], PMessage, tuple[int, ...], tuple[str | None, ...]]


def note_message(text: str, tokens: int, entry_id: str, region: str | None = None) -> PMessage:
    """The user message carrying an unsettled note (``tokens``: of ``text``) of ``region``
    (the grows region the entry belongs to, on the note's block)."""
    info = ((tokens, region),)
    return PMessage("user", (Text(text),), f"note:{entry_id}", origin="note", info=info)


def summary_message(text: str, tokens: int, entry_id: str, region: str) -> PMessage:
    """The user message carrying one ``compact_history`` summary at the opening of the
    messages (``tokens``: of ``text``; ``region``: the history region)."""
    info = ((tokens, region),)
    return PMessage("user", (Text(text),), f"summary:{entry_id}", origin="summary", info=info)


def frozen_message(when: int, copies: Sequence[tuple[str, int, str]]) -> PMessage:
    """The user message of the frozen tail copies ``(text, tokens, region)`` placed by request
    ``when``."""
    return PMessage(
        "user",
        tuple(Text(t) for t, _, _ in copies),
        f"frozen:{when}",
        origin="frozen",
        info=tuple((n, r) for _, n, r in copies),
    )


def same_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """Length of the common prefix of ``a`` and ``b`` by object identity (C-level scan; the
    log's check of its entries and the render prefix's of its blocks)."""
    return next(compress(count(), map(is_not, a, b)), min(len(a), len(b)))


@attrs.frozen
class ConversationView:
    """The conversation part of one request: ``blocks`` (message level, in order; the log's
    final blocks followed by this request's fresh ones), the repair ``events``, ``tokens`` (sum
    over ``blocks``) and ``final`` (how many leading blocks are the log's final ones)."""

    blocks: list[LayoutBlock]
    events: list[LayoutEvent]
    tokens: int
    final: int
    fresh_hashes: frozenset[str]


@attrs.define(eq=False)
class RenderLog:
    """The render log of one session (see the module docstring). Create one per engine (or per
    sequence of requests); never share it between sessions.

    ``resets`` counts the invalidations (how often the conversation was rewritten)."""

    resets: int = 0
    strategy: str | None = None
    root: str | None = None
    #: where the last :meth:`sync` left the live entry list it was given (``None``: none, or
    #: not an :class:`regio.regions.entrylist.EntryList`)
    source: EntryMark | None = None
    entries: list[Entry] = attrs.field(factory=list)
    entry_index: dict[str, int] = attrs.field(factory=dict)
    extras: dict[str | None, list[Extra]] = attrs.field(factory=dict)
    front: RepairFront = attrs.field(factory=RepairFront)
    blocks: list[LayoutBlock] = attrs.field(factory=list)
    cum: list[int] = attrs.field(factory=lambda: [0])
    hashes: set[str] = attrs.field(factory=set)
    messages: int = 0
    rendered: dict[str, dict[int, tuple[LayoutBlock, Any, Callable[[Any], Any]]]] = attrs.field(
        factory=dict
    )
    #: per API, the rendered messages of the final conversation prefix
    #: (:func:`regio.layout.render.prefix.message_prefix`)
    prefixes: dict[str, Any] = attrs.field(factory=dict)
    #: the committed blocks' prefix hashes by their first ``HELD_DIGITS`` hex digits
    short: dict[str, str] = attrs.field(factory=dict)
    head: dict[Any, str] = attrs.field(factory=dict)
    #: entries rewritten without superseded reports since the last request, ``(old, new)``:
    #: the blocks they kept get their token shares in the new entry (:func:`retoken`)
    slimmed: list[tuple[Entry, Entry]] = attrs.field(factory=list)
    _conversation: Sequence[Entry] = ()
    _pending_ids: set[str] = attrs.field(factory=set)
    #: entry digests of this request and the previous one: entry id -> (entry, digest)
    _digests: dict[str, tuple[Entry, str]] = attrs.field(factory=dict)
    _digests_before: dict[str, tuple[Entry, str]] = attrs.field(factory=dict)
    #: sections of closed chunks of this request and the previous one, by value key
    _sections: dict[Hashable, Any] = attrs.field(factory=dict)
    _sections_before: dict[Hashable, Any] = attrs.field(factory=dict)
    #: the summary messages opening the conversation: the regions' entry lists they were
    #: built from (name and entry-list mark per region), the extras, and per (region,
    #: entry id) the entry with its message and tokens
    _summary_key: tuple[tuple[str, EntryMark | None], ...] | None = None
    _summary_extras: list[Extra] = attrs.field(factory=list)
    _summary_messages: dict[tuple[str, str], tuple[Entry, PMessage, int]] = attrs.field(
        factory=dict
    )
    #: the last ``LayoutState.anchored`` digest (:func:`regio.layout.plan.anchored_digest`):
    #: the anchor's id, the entries through it (the objects), the hash state through them
    #: (without the closing bracket) and the digest
    anchored: tuple[str, list[Entry], Any, str] | None = None

    # ----- the one invalidation point ----------------------------------------------------
    def reset(self) -> None:
        """Forget everything derived from the conversation (it was rewritten)."""
        self.resets += 1
        self.source = None
        self.entries = []
        self.entry_index = {}
        self.extras = {}
        self.front = RepairFront()
        self.blocks = []
        self.cum = [0]
        self.hashes = set()
        self.messages = 0
        self.rendered = {}
        self.anchored = None
        self.prefixes = {}
        self.short = {}
        self.slimmed = []
        self._pending_ids = {e.id for e in self._conversation}

    # ----- entries -------------------------------------------------------------------------
    def sync(self, conversation: Sequence[Entry], source: Sequence[Entry] | None = None) -> None:
        """Take the conversation's current entries (``source``: the live entry list they were
        copied from, an :class:`regio.regions.entrylist.EntryList`: when it was only appended
        to, no scan is needed). Resets the log when the consumed entries are not a prefix."""
        self._conversation = conversation
        self._digests_before, self._digests = self._digests, {}
        self._sections_before, self._sections = self._sections, {}
        n = len(self.entries)
        appended = appended_since(source, self.source) is not None and len(conversation) >= n
        if n and not appended:
            same = same_prefix(conversation, self.entries)
            if same < n and not drop_removed_reports(self, conversation, same):
                self.reset()
        self.source = entry_mark(source)
        self._pending_ids = {e.id for e in conversation[len(self.entries) :]}

    def has_entry(self, entry_id: str | None) -> bool:
        """Whether an entry of the synced conversation has id ``entry_id``."""
        return entry_id in self.entry_index or entry_id in self._pending_ids

    def entry_digest(self, entry: Entry) -> str:
        """``entry.digest``, computed once per entry object while the requests keep using it
        (entries are immutable; the digests of the previous request are kept)."""
        found = self._digests.get(entry.id)
        if found is None or found[0] is not entry:
            found = self._digests_before.get(entry.id)
            if found is None or found[0] is not entry:
                found = (entry, entry.digest)
            self._digests[entry.id] = found
        return found[1]

    def section(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """``build()`` remembered under the value ``key`` while the requests keep using it
        (the sections of closed chunks: their text depends only on the key)."""
        found = self._sections.get(key)
        if found is None:
            found = self._sections_before.get(key)
            if found is None:
                found = build()
            self._sections[key] = found
        return found

    # ----- the summaries opening the conversation ----------------------------------------
    def summaries(
        self, regions: Sequence[RegionLike], message: Callable[[str, Entry], tuple[PMessage, int]]
    ) -> list[Extra]:
        """The summary extras of ``regions`` (anchor ``None``, oldest first): per entry
        ``message(region name, entry) -> (message, tokens)``. The same list object is returned
        while no region's entry list changed (an :class:`regio.regions.entrylist.EntryList`
        with the same rewrite epoch and length), and each entry's message is built once while
        the entry stays; a request where nothing changed costs O(regions)."""
        old = self._summary_key
        if (
            old is not None
            and len(old) == len(regions)
            and all(
                name == r.name and unchanged(r.entries, mark)
                for (name, mark), r in zip(old, regions, strict=True)
            )
        ):
            return self._summary_extras
        key = tuple((r.name, entry_mark(r.entries)) for r in regions)
        known, kept = self._summary_messages, {}
        out: list[Extra] = []
        for region in regions:
            for entry in region.entries:
                at = (region.name, entry.id)
                found = known.get(at)
                if found is None or found[0] is not entry:
                    found = (entry, *message(region.name, entry))
                kept[at] = found
                out.append(((-1, len(out)), found[1], (found[2],), (region.name,)))
        self._summary_key, self._summary_extras, self._summary_messages = key, out, kept
        return out

    # ----- head digests --------------------------------------------------------------------
    def head_digest(self, level: str, role: str, blk: Block | None, tool: ToolSpec | None) -> str:
        """:func:`block_digest` of a tools / system / tail block, remembered by value for the
        blocks of the previous request (the head changes rarely)."""
        key = (
            (level, role, tool.name, tool.description, repr(tool.input_schema))
            if tool
            else (
                level,
                role,
                block_text(blk) if isinstance(blk, Text) else repr(blk),
            )
        )
        found = self.head.get(key)
        if found is None:
            lvl = "messages" if level == "tail" else level
            found = block_digest(lvl, role, blk, tool)
            if len(self.head) > 256:
                self.head.clear()
            self.head[key] = found
        return found

    # ----- the conversation ----------------------------------------------------------------
    def conversation(
        self,
        strategy: str,
        extras: dict[str | None, list[Extra]],
        root: str,
        split: Callable[[Entry], list[int]],
        count_block: Callable[[Block], int],
    ) -> ConversationView:
        """The message blocks of the synced conversation with ``extras`` (anchor -> messages
        in placement order) chained from ``root`` (the prefix hash after the system level).
        ``split(entry)`` shares an entry's tokens over its blocks; ``count_block`` counts a
        block the repair synthesized. Raises :class:`regio.layout.LayoutError` for a system
        message in the conversation."""
        if strategy != self.strategy or root != self.root or self._extras_changed(extras):
            if self.entries or self.messages or self.front.inputs:
                self.reset()
            self.strategy, self.root = strategy, root
        if self.slimmed:
            retoken(self, split)
        try:
            return self._build(extras, split, count_block)
        except StaleFront:
            self.reset()
            return self._build(extras, split, count_block)

    def _extras_changed(self, extras: dict[str | None, list[Extra]]) -> bool:
        if not self.entries:
            return False
        index = self.entry_index
        for anchor in extras.keys() | self.extras.keys():
            final = anchor is None or anchor in index
            if not final:
                continue
            now, was = extras.get(anchor, []), self.extras.get(anchor, [])
            if now is not was and now != was:
                return True
        return False

    def _project(
        self, extras: dict[str | None, list[Extra]], split: Callable[[Entry], list[int]]
    ) -> tuple[list[PMessage], list[int]]:
        """Inputs after the log's entries (each block with its tokens and region) and where
        each entry's segment starts."""
        inputs: list[PMessage] = []
        starts: list[int] = []
        if not self.entries:
            inputs.extend(pm for _, pm, _, _ in extras.get(None, ()))
        for e in self._conversation[len(self.entries) :]:
            starts.append(len(inputs))
            info = tuple((n, None) for n in split(e))
            inputs.append(PMessage(e.role or "user", e.blocks, e.id, info=info))
            inputs.extend(pm for _, pm, _, _ in extras.get(e.id, ()))
        return inputs, starts

    def _build(
        self,
        extras: dict[str | None, list[Extra]],
        split: Callable[[Entry], list[int]],
        count_block: Callable[[Block], int],
    ) -> ConversationView:
        inputs, starts = self._project(extras, split)
        # the watermark: the last segment boundary before the newest entry with no open call
        # (read on the call ids as the repair names them)
        ids = named(self.front, inputs)
        cuts = set(starts[1:])
        k = next((m for m in reversed(watermarks(ids, self.front)) if m in cuts), 0)
        if k:
            run = self._repaired(inputs[:k], reporting(ids[k:]), count_block, False)
            self._commit(run, k, count_block, extras, starts.index(k))
            inputs = inputs[k:]
        run = self._repaired(inputs, (), count_block, True)
        return self._view(run, count_block)

    def _repaired(
        self,
        inputs: list[PMessage],
        later: set[str] | tuple[()],
        count_block: Callable[[Block], int],
        complete: bool,
    ) -> RepairRun:
        """``inputs`` repaired after the front, the shells showing their calls' latest
        results (:func:`show_latest`; repaired again when that changed the front's carry,
        which the run starts from)."""
        carry = self.front.carry
        run = repair_after(self.front, inputs, later)
        show_latest(self, run.late, count_block, complete=complete)
        if self.front.carry is not carry:
            run = repair_after(self.front, inputs, later)
        return run

    def _layout_blocks(
        self,
        messages: Sequence[PMessage],
        first_index: int,
        h: str,
        count_block: Callable[[Block], int],
    ) -> list[LayoutBlock]:
        out: list[LayoutBlock] = []
        for mi, msg in enumerate(messages, first_index):
            for b, known in msg.pairs():
                n, region = known if known is not None else (count_block(b), None)
                dg = block_digest("messages", msg.role, b, None)
                h = chain_hash(h, dg)
                out.append(
                    LayoutBlock(
                        level="messages",
                        role=msg.role,
                        tokens=n,
                        digest=dg,
                        prefix_hash=h,
                        block=b,
                        region=region,
                        message=mi,
                        source=msg.source,
                        origin=msg.origin,
                    )
                )
        return out

    def _end_hash(self) -> str:
        return self.blocks[-1].prefix_hash if self.blocks else (self.root or "")

    def _commit(
        self,
        run: RepairRun,
        inputs: int,
        count_block: Callable[[Block], int],
        extras: dict[str | None, list[Extra]],
        entries: int,
    ) -> None:
        """Move the watermark over ``inputs`` inputs (the segments of ``entries`` entries)."""
        was_first = self.front.first_role
        final = advance(self.front, run, inputs)
        if was_first is None and self.front.first_role == "assistant":
            final = [START_MESSAGE, *final]
        new = self._layout_blocks(final, self.messages, self._end_hash(), count_block)
        self.messages += len(final)
        for b in new:
            self.blocks.append(b)
            self.cum.append(self.cum[-1] + b.tokens)
            self.hashes.add(b.prefix_hash)
            self.short[b.prefix_hash[:HELD_DIGITS]] = b.prefix_hash
        if not self.entries and None in extras:
            self.extras[None] = extras[None]
        for e in self._conversation[len(self.entries) : len(self.entries) + entries]:
            self.entry_index[e.id] = len(self.entries)
            self.entries.append(e)
            self._pending_ids.discard(e.id)
            if e.id in extras:
                self.extras[e.id] = extras[e.id]

    def _view(self, run: RepairRun, count_block: Callable[[Block], int]) -> ConversationView:
        messages = run.messages
        if self.front.first_role is None and messages and messages[0].role == "assistant":
            messages = [START_MESSAGE, *messages]
        fresh = self._layout_blocks(messages, self.messages, self._end_hash(), count_block)
        return ConversationView(
            blocks=[*self.blocks, *fresh],
            events=run_events(self.front, run),
            tokens=self.cum[-1] + sum(b.tokens for b in fresh),
            final=len(self.blocks),
            fresh_hashes=frozenset(b.prefix_hash for b in fresh),
        )

    def has_hash(self, prefix_hash: str, view: ConversationView) -> bool:
        """Whether a message block of ``view`` has prefix hash ``prefix_hash``."""
        return prefix_hash in self.hashes or prefix_hash in view.fresh_hashes

    # ----- rendered form per API -----------------------------------------------------------
    def rendered_unit(
        self, api: str, message: int, first: LayoutBlock
    ) -> tuple[Any, Callable[[Any], Any]] | None:
        """The rendered form ``api`` stored for final message ``message`` whose first block is
        ``first`` (the log's own block object) with the function that copies it, else
        ``None``."""
        found = self.rendered.get(api, {}).get(message)
        if found is None or found[0] is not first:
            return None
        return found[1], found[2]

    def keep_unit(
        self, api: str, message: int, first: LayoutBlock, unit: object, copy: Callable[[Any], Any]
    ) -> bool:
        """Store the rendered form of message ``message`` (and ``copy``, the function that
        gives a payload its own containers of it) when it is final (before the watermark)
        and ``first`` is the log's own block (no marker on it); whether it was stored."""
        if message < self.messages and self._final_block(first):
            self.rendered.setdefault(api, {})[message] = (first, unit, copy)
            return True
        return False

    def _final_block(self, b: LayoutBlock) -> bool:
        # final message blocks are the log's own objects; find by running sums is not needed:
        # the message index says where to look
        lo = 0
        hi = len(self.blocks)
        while lo < hi:  # first block of message b.message
            mid = (lo + hi) // 2
            if (self.blocks[mid].message or 0) < (b.message or 0):
                lo = mid + 1
            else:
                hi = mid
        return lo < len(self.blocks) and self.blocks[lo] is b
