"""The conversation part of :func:`regio.layout.assemble`, reusing the previous request's work
for the unchanged prefix (DESIGN.md section 6: per-turn cost proportional to what changed).

Per request the conversation is *projected* (entries, with unsettled notes and frozen tail copies
after their anchors), *repaired* (:mod:`regio.layout.repair`) and turned into
:class:`LayoutBlock` s with digests and chained prefix hashes. :func:`conversation_blocks` keeps,
per window, one :class:`_Slot` with all three results and redoes only:

* the projection from the first entry that is not the same object as last time, or whose
  anchored notes / frozen copies changed (extras are memoized by value, so an unchanged note or
  copy is the same message object on every request);
* the repair from the latest safe checkpoint inside the unchanged prefix
  (:func:`regio.layout.increment.repair_resume`);
* the layout blocks from the first repaired message that is not the same object as last time,
  when the chain root (the hash at the end of the system level) is unchanged.

The per-block look-ups (tokens and region by block object, the set of prefix hashes) are carried
forward: when the previous request's flat blocks (or layout blocks) are a prefix of this one's,
the previous look-up is extended in place with the new blocks only (the dropped rest, if any,
is removed); otherwise it is rebuilt. :func:`entry_ids` does the same for the ids of the
conversation entries.

Purity: the result equals a fresh computation (tests compare payload bytes with the caches
cleared and warm). A slot is taken *out* of the cache before its lists, dicts and sets are
truncated and extended in place, and the new slot (the same containers) is stored once the
request is built: nothing else holds them (the returned blocks and hash set are read-only and
valid until the next call for the window; :func:`regio.layout.assemble` copies the blocks into
its own tuple), and an exception leaves no slot behind, so the next call starts afresh.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence, Set
from operator import attrgetter
from typing import Any

import attrs

from regio.content import Block, Entry, Text, block_text

from .increment import RepairTrace, common_prefix, repair_resume
from .memo import ByKey, register
from .model import LayoutBlock
from .protocols import count_text
from .repair import FROZEN, PMessage

__all__ = [
    "Extra",
    "clear_slots",
    "conversation_blocks",
    "conversation_tokens",
    "entry_ids",
    "frozen_message",
    "note_message",
]

#: One message placed after an anchor: (order key, message, tokens per block, region per block).
Extra = tuple[tuple[int, int], PMessage, tuple[int, ...], tuple[str | None, ...]]

_EXTRAS: ByKey[PMessage] = register(ByKey())
_MAX_SLOTS = 8


def note_message(text: str, tokens: int, entry_id: str) -> PMessage:
    """The (memoized) user message carrying an unsettled note."""
    return _EXTRAS.get(
        ("note", text, tokens, entry_id),
        lambda: PMessage("user", (Text(text),), f"note:{entry_id}"),
    )


def frozen_message(when: int, copies: Sequence[tuple[str, int, str]]) -> PMessage:
    """The (memoized) user message of the frozen tail copies ``(text, tokens, region)`` placed
    by request ``when``."""
    key = ("frozen", when, tuple(copies))
    return _EXTRAS.get(
        key, lambda: PMessage("user", tuple(Text(t) for t, _, _ in copies), f"{FROZEN}{when}")
    )


@attrs.frozen
class _Slot:
    window: Any
    #: the live entry list ``entries`` was copied from, its ``rewrite_epoch`` then (None: no
    #: append-only signal) -- see :func:`_appended_only`
    source: Any
    epoch: int | None
    entries: list[Entry]
    extras: dict[str | None, list[Extra]]
    projected: list[PMessage]
    seg_start: list[int]
    seg_flat: list[int]
    flat_blocks: list[Block]
    flat_tokens: list[int]
    flat_regions: list[str | None]
    #: tokens / region per ``id`` of each block of ``flat_blocks`` (the objects stay alive
    #: through ``flat_blocks``, so an id is never reused while it is a key here)
    tokens_of: dict[int, int]
    region_of: dict[int, str | None]
    trace: RepairTrace
    root: str
    blocks: list[LayoutBlock]
    out_start: list[int]
    #: the prefix hashes of ``blocks``
    hashes: set[str]
    #: ``cum[i]``: tokens of ``blocks[:i]`` (one longer than ``blocks``)
    cum: list[int]


_SLOTS: OrderedDict[tuple[int, str], _Slot] = register(OrderedDict())


@attrs.frozen
class _Ids:
    window: Any
    source: Any
    epoch: int | None
    entries: list[Entry]
    ids: set[str]


_IDS: OrderedDict[int, _Ids] = register(OrderedDict())
_ENTRY_ID = attrgetter("id")
_PREFIX_HASH = attrgetter("prefix_hash")


def clear_slots() -> None:
    """Forget every window's slot (tests; frees memory)."""
    _SLOTS.clear()
    _IDS.clear()


def _epoch(source: Any) -> int | None:
    return getattr(source, "rewrite_epoch", None) if source is not None else None


def _appended_only(source: Any, old_source: Any, old_epoch: int | None, old_len: int) -> bool:
    """True when ``source`` (the live entry list the conversation is a copy of) is the list a
    cache entry was built from and was only appended to since (its ``rewrite_epoch`` is
    unchanged: :class:`regio.regions.entrylist.EntryList`): its first ``old_len`` entries are
    then the same objects as before, with no scan."""
    return (
        source is not None
        and old_source is source
        and old_epoch is not None
        and _epoch(source) == old_epoch
        and len(source) >= old_len
    )


def entry_ids(
    window: Any, conversation: Sequence[Entry], source: Sequence[Entry] | None = None
) -> Set[str]:
    """The set of ``Entry.id`` of ``conversation``: read-only, and valid until the next call
    for the same window. Carried forward per window: when the previous call's entries are a
    prefix (same objects) of ``conversation``, that set is extended in place with the new ids
    only (it leaves the cache while it is extended); otherwise it is rebuilt.

    ``source``: optional, the live entry list ``conversation`` is a copy of (an
    :class:`regio.regions.entrylist.EntryList`); when it was only appended to since the last
    call, the prefix check is O(1) instead of a scan."""
    old = _IDS.pop(id(window), None)
    n = len(old.entries) if old is not None else 0
    if (
        old is not None
        and old.window is window
        and n <= len(conversation)
        and (
            _appended_only(source, old.source, old.epoch, n)
            or common_prefix(conversation, old.entries) == n
        )
    ):
        entries, ids = old.entries, old.ids
        entries.extend(conversation[n:])
        ids.update(map(_ENTRY_ID, conversation[n:]))
    else:
        entries, ids = list(conversation), set(map(_ENTRY_ID, conversation))
    _IDS[id(window)] = _Ids(window, source, _epoch(source), entries, ids)
    while len(_IDS) > _MAX_SLOTS:
        _IDS.popitem(last=False)
    return ids


def _first_change(
    slot: _Slot,
    conversation: Sequence[Entry],
    extras: dict[str | None, list[Extra]],
    source: Sequence[Entry] | None,
) -> int:
    """Index of the first entry whose segment (entry + anchored extras) must be rebuilt; ``-1``
    when the extras before the first entry changed."""
    if extras.get(None) != slot.extras.get(None):
        return -1
    if _appended_only(source, slot.source, slot.epoch, len(slot.entries)):
        first = len(slot.entries)
    else:
        first = common_prefix(conversation, slot.entries)
    changed = {a for a in extras.keys() | slot.extras.keys() if extras.get(a) != slot.extras.get(a)}
    changed.discard(None)
    if changed:
        for i in range(first):
            if conversation[i].id in changed:
                return i
    return first


def conversation_blocks(
    window: Any,
    strategy: str,
    conversation: Sequence[Entry],
    extras: dict[str | None, list[Extra]],
    root: str,
    split: Callable[[Entry], list[int]],
    digest: Callable[[str, str, Block], str],
    chain: Callable[[str, str], str],
    source: Sequence[Entry] | None = None,
) -> tuple[Sequence[LayoutBlock], list[Any], Set[str]]:
    """The message-level layout blocks of ``conversation`` (with ``extras``: anchor ->
    messages in placement order) chained from ``root``, the repair events and the set of the
    blocks' prefix hashes. The blocks and the set are the cache's own: read-only.

    ``split(entry)`` shares an entry's tokens over its blocks; ``digest(level, role, block)``
    and ``chain(previous, digest)`` are the (memoized) block digest and prefix-hash step.
    ``source``: optional, the live entry list ``conversation`` is a copy of (see
    :func:`entry_ids`); lets an append-only conversation skip the prefix scan.
    """
    key = (id(window), strategy)
    # the slot leaves the cache: from here on this call owns its lists and extends them in
    # place (an exception leaves no slot behind, so the next call starts afresh)
    slot = _SLOTS.pop(key, None)
    if slot is not None and slot.window is not window:
        slot = None
    start = _first_change(slot, conversation, extras, source) if slot is not None else -1
    # the projected messages before ``same`` are the slot's own objects (None: unknown)
    same: int | None = None
    # tokens / region per block object: carried forward from the slot when its flat blocks up
    # to ``f0`` are kept (the dropped rest is removed: proportional to what changed)
    f0 = 0
    if slot is not None and start >= 0 and len(slot.tokens_of) == len(slot.flat_blocks):
        f0 = len(slot.flat_blocks) if start >= len(slot.entries) else slot.seg_flat[start]
    if f0:
        assert slot is not None
        tokens_of = slot.tokens_of
        region_of = slot.region_of
        for b in slot.flat_blocks[f0:]:
            del tokens_of[id(b)]
            del region_of[id(b)]
    else:
        tokens_of, region_of = {}, {}
    if slot is None or start < 0:
        entries: list[Entry] = list(conversation)
        projected: list[PMessage] = []
        seg_start: list[int] = []
        seg_flat: list[int] = []
        flat_blocks: list[Block] = []
        flat_tokens: list[int] = []
        flat_regions: list[str | None] = []
        begin = 0
        for _, pm, toks, regs in extras.get(None, []):
            projected.append(pm)
            flat_blocks.extend(pm.blocks)
            flat_tokens.extend(toks)
            flat_regions.extend(regs)
    else:
        begin = start
        if start < len(slot.entries):
            p, f = slot.seg_start[start], slot.seg_flat[start]
        else:
            p, f = len(slot.projected), len(slot.flat_blocks)
        same = p
        entries = slot.entries
        del entries[start:]
        entries.extend(conversation[start:])
        projected = slot.projected
        del projected[p:]
        seg_start = slot.seg_start
        del seg_start[start:]
        seg_flat = slot.seg_flat
        del seg_flat[start:]
        flat_blocks = slot.flat_blocks
        del flat_blocks[f:]
        flat_tokens = slot.flat_tokens
        del flat_tokens[f:]
        flat_regions = slot.flat_regions
        del flat_regions[f:]
    for i in range(begin, len(conversation)):
        e = conversation[i]
        seg_start.append(len(projected))
        seg_flat.append(len(flat_blocks))
        projected.append(PMessage(e.role or "user", e.blocks, e.id))
        flat_blocks.extend(e.blocks)
        flat_tokens.extend(split(e))
        flat_regions.extend([None] * len(e.blocks))
        for _, pm, toks, regs in extras.get(e.id, ()):
            projected.append(pm)
            flat_blocks.extend(pm.blocks)
            flat_tokens.extend(toks)
            flat_regions.extend(regs)

    messages, events, trace = repair_resume(
        projected, slot.trace if slot is not None else None, same=same, consume=True
    )

    new_ids = list(map(id, flat_blocks[f0:]))
    tokens_of.update(zip(new_ids, flat_tokens[f0:], strict=True))
    region_of.update(zip(new_ids, flat_regions[f0:], strict=True))
    reuse = 0
    if slot is not None and slot.root == root and len(tokens_of) == len(flat_blocks):
        # the trace was handed over (the slot left the cache): ``stable`` is exact
        reuse = trace.stable
    if reuse and slot is not None:
        cut = slot.out_start[reuse]
        blocks = slot.blocks
        hashes = slot.hashes
        hashes.difference_update(map(_PREFIX_HASH, blocks[cut:]))
        del blocks[cut:]
        out_start = slot.out_start
        del out_start[reuse + 1 :]
        cum = slot.cum
        del cum[cut + 1 :]
    else:
        blocks, out_start, hashes, cum = [], [0], set(), [0]
    h = blocks[-1].prefix_hash if blocks else root
    for mi in range(reuse, len(messages)):
        msg = messages[mi]
        for b in msg.blocks:
            known = tokens_of.get(id(b))
            n = known if known is not None else count_text(window, block_text(b))
            dg = digest("messages", msg.role, b)
            h = chain(h, dg)
            hashes.add(h)
            cum.append(cum[-1] + n)
            blocks.append(
                LayoutBlock(
                    level="messages",
                    role=msg.role,
                    tokens=n,
                    digest=dg,
                    prefix_hash=h,
                    block=b,
                    tool=None,
                    region=region_of.get(id(b)),
                    message=mi,
                    source=msg.source,
                )
            )
        out_start.append(len(blocks))

    _SLOTS[key] = _Slot(
        window=window,
        source=source,
        epoch=_epoch(source),
        entries=entries,
        extras=extras,
        projected=projected,
        seg_start=seg_start,
        seg_flat=seg_flat,
        flat_blocks=flat_blocks,
        flat_tokens=flat_tokens,
        flat_regions=flat_regions,
        tokens_of=tokens_of,
        region_of=region_of,
        trace=trace,
        root=root,
        blocks=blocks,
        out_start=out_start,
        hashes=hashes,
        cum=cum,
    )
    _SLOTS.move_to_end(key)
    while len(_SLOTS) > _MAX_SLOTS:
        _SLOTS.popitem(last=False)
    return blocks, events, hashes


def conversation_tokens(window: Any, strategy: str, blocks: Sequence[LayoutBlock]) -> int:
    """Total tokens of ``blocks``, the sequence :func:`conversation_blocks` last returned for
    ``(window, strategy)``: read from the running sum the cache keeps (O(1)); summed when
    ``blocks`` is not that sequence."""
    slot = _SLOTS.get((id(window), strategy))
    if slot is not None and slot.window is window and slot.blocks is blocks:
        return slot.cum[-1]
    return sum(b.tokens for b in blocks)
