"""The window-sized parts of a ``regio.session-head/4`` head, as linked lists of records.

What a head would otherwise hold and rewrite on every save, because it is sized by the window,
is kept in lists (:mod:`regio.persistence.store.lists`), so a save writes the items that changed:

* ``@o/<region>``: each region's entry ids, in order;
* ``@c``: the window's index of tool calls to their turn groups (call id -> group id);
* ``@i``: the last request's block index: each block's record key (``@lb/...``) with its
  message index, stored as the difference to the previous block's (so the blocks after an
  eviction keep their records), and its breakpoint TTL; ``@rp`` holds the prefix hashes
  whole, only when they are not the chain of the block digests;
* the two layout states (the last request's, slot ``L``, and the one it started from, slot
  ``C``): each state's small remainder (strategy, counters, breakpoint marks and stats, tail
  copies) is one record keyed by its content (``@lr/<digest>``), so a remainder carried over
  from the previous save is not written again; its settled entry ids per region, frozen
  chunks per region, notes and frozen copies are lists (``@s/<slot>/s/<region>``,
  ``@s/<slot>/c/<region>``, ``@s/<slot>/n``, ``@s/<slot>/f``). A save moves the carried
  slot one request on and the last request's slot one request on: each list changes by one
  turn's settles and evictions.

Measured with ``tests/store_support.py``'s ``HistorySession`` (a summary history that fills
over the first ~1,000 turns; one save per turn, every byte a save writes): a save at turn 100,
1,000 and 10,000 writes 8.8, 9.0 and 9.1 kB (13.0, 18.6 and 19.4 kB when the block index and
the new layout state were written whole); the mean of 20 saves from those turns is 9.7, 9.9
and 10.1 kB (``pytest benchmarks/test_bench_store.py -k flat -s``); 9.81, 10.02 and 10.18 kB
since the head keeps the usage totals and each transcript record the kept originals' call ids
(9.75, 9.96 and 10.12 kB just before, 2026-12-01).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

import msgspec

from regio.cache.prefix import common_prefix

from .lists import DamagedListError, Recorder, Root, content_items, id_items, read_ids, read_list

if TYPE_CHECKING:
    from regio.layout import LayoutState
    from regio.persistence._statefile import EngineState

T = TypeVar("T")

__all__ = ["PARTS_PREFIXES", "StateRef", "decode_parts", "encode_parts"]

_ORDER, _CALLS, _INDEX, _PREFIX, _REST, _STATES = "@o/", "@c", "@i", "@rp", "@lr/", "@s/"
_LAST = "@bl/"

#: Record key prefixes of the window-sized parts of a ``regio.session-head/4`` head.
PARTS_PREFIXES = (_ORDER, _CALLS, _INDEX, _PREFIX, _REST, _STATES, _LAST)

_encode = msgspec.msgpack.encode


class StateRef(msgspec.Struct, array_like=True):
    """Where one stored layout state is: its remainder's record key, and the regions of its
    settled ids and of its frozen chunks, in order (each a list in its slot)."""

    rest: str
    settled: list[str]
    chunks: list[str]


class RequestIndex(msgspec.Struct):
    """The last request's block record keys with their message indexes, breakpoint TTLs and
    (only when they are not the digest chain) prefix hashes."""

    keys: list[str]
    messages: list[int | None]
    breakpoints: list[str | None]
    prefix: list[str] | None = None


def _keep_state(slot: str, state: LayoutState, rec: Recorder, roots: dict[str, Root]) -> StateRef:
    """Record one layout state in ``slot`` (module doc)."""
    ns = f"{_STATES}{slot}/"
    for region, ids in state.settled.items():
        roots[f"{ns}s/{region}"] = rec.keep_list(f"{ns}s/{region}", id_items(ids))
    for region, chunks in state.chunks.items():
        name = f"{ns}c/{region}"
        roots[name] = rec.keep_list(name, content_items([_encode(c) for c in chunks]))
    roots[f"{ns}n"] = rec.keep_list(f"{ns}n", content_items([_encode(n) for n in state.notes]))
    roots[f"{ns}f"] = rec.keep_list(f"{ns}f", content_items([_encode(f) for f in state.frozen]))
    rest = _encode(msgspec.structs.replace(state, settled={}, chunks={}, notes=(), frozen=()))
    key = rec.keep(_REST + hashlib.blake2b(rest, digest_size=8).hexdigest(), rest)
    return StateRef(key, list(state.settled), list(state.chunks))


def keep_last_compaction(bare: EngineState, rec: Recorder) -> tuple[EngineState, str | None]:
    """``bare`` without the compaction book's last result and the key of the record it went
    to, keyed by its content (``@bl/<digest>``): it changes with each compaction, not with
    each save, and its kept ids grow with the summary history."""
    last = bare.book.last
    if last is None:
        return bare, None
    data = _encode(last)
    key = rec.keep(_LAST + hashlib.blake2b(data, digest_size=8).hexdigest(), data)
    return msgspec.structs.replace(bare, book=msgspec.structs.replace(bare.book, last=None)), key


def last_compaction_of(
    state: EngineState, key: str | None, entries: Mapping[str, bytes]
) -> EngineState:
    """``state`` with the compaction book's last result from its record (the inverse of
    :func:`keep_last_compaction`). Raises :class:`DamagedListError` when it is missing."""
    from regio.session._session import CompactionResult

    if key is None:
        return state
    if key not in entries:
        raise DamagedListError(f"last compaction lacks its record {key!r}")
    last = msgspec.msgpack.decode(entries[key], type=CompactionResult)
    return msgspec.structs.replace(state, book=msgspec.structs.replace(state.book, last=last))


def encode_parts(
    bare: EngineState, order: Mapping[str, list[str]], index: RequestIndex | None, rec: Recorder
) -> tuple[EngineState, dict[str, Root], tuple[StateRef | None, StateRef | None], str | None]:
    """``bare`` (an engine state without window entries and request blocks) without its
    window-sized parts, the roots of the lists they went to, the two layout states' refs
    and the ``@rp`` key (module doc). Every record goes through ``rec``."""
    from regio.layout import LayoutState

    roots: dict[str, Root] = {}
    for name, ids in order.items():
        roots[_ORDER + name] = rec.keep_list(_ORDER + name, id_items(ids))
    calls = bare.window.call_groups
    if calls:
        roots[_CALLS] = rec.keep_list(_CALLS, _call_items(calls, rec))
        window = msgspec.structs.replace(bare.window, call_groups={})
        bare = msgspec.structs.replace(bare, window=window)
    prefix = None
    if index is not None:
        roots[_INDEX] = rec.keep_list(_INDEX, _index_items(index, rec))
        if index.prefix is not None:
            prefix = rec.keep(_PREFIX, _encode(index.prefix))
    last = carried = None
    request = bare.last_request
    if request is not None:
        last = _keep_state("L", request.state, rec, roots)
        request = msgspec.structs.replace(request, state=LayoutState())
        bare = msgspec.structs.replace(bare, last_request=request)
    fingerprint, input_state = bare.layout_input
    if input_state is not None:
        carried = _keep_state("C", input_state, rec, roots)
        bare = msgspec.structs.replace(bare, layout_input=(fingerprint, None))
    return bare, roots, (last, carried), prefix


def _index_items(index: RequestIndex, rec: Recorder) -> list[tuple[str, bytes | None]]:
    """The ``@i`` list items of ``index`` (module doc): the items of the leading blocks whose
    key, message and breakpoint are the last save's are its items (lists compared in C), the
    others are encoded."""
    last = rec.memo.get(_INDEX_SOURCE)
    start = 0
    items: list[tuple[str, bytes | None]] = []
    if last is not None:
        (keys, messages, breakpoints), old = last
        start = min(
            common_prefix(index.keys, keys),
            common_prefix(index.messages, messages),
            common_prefix(index.breakpoints, breakpoints),
        )
        items = old[:start]
    previous = next((m for m in reversed(index.messages[:start]) if m is not None), 0)
    for i in range(start, len(index.keys)):
        message = index.messages[i]
        step = None if message is None else message - previous
        previous = previous if message is None else message
        items.append((index.keys[i], _encode((step, index.breakpoints[i]))))
    source = (index.keys, index.messages, index.breakpoints)
    rec.next_memo[_INDEX_SOURCE] = (source, items)
    return items


#: Memo key of the last save's block index and its ``@i`` items (not a record key).
_INDEX_SOURCE = "@i-source"


def _call_items(calls: Mapping[str, str], rec: Recorder) -> list[tuple[str, bytes | None]]:
    """The ``@c`` list items of the call index ``calls`` (call id -> group id): the leading
    pairs that are the last save's keep its encoded items (lists compared in C)."""
    pairs = list(calls.items())
    last = rec.memo.get(_CALLS_SOURCE)
    start = 0
    items: list[tuple[str, bytes | None]] = []
    if last is not None:
        start = common_prefix(pairs, last[0])
        items = last[1][:start]
    items += [(c, _encode(g)) for c, g in pairs[start:]]
    rec.next_memo[_CALLS_SOURCE] = (pairs, items)
    return items


#: Memo key of the last save's call index pairs and their ``@c`` items (not a record key).
_CALLS_SOURCE = "@c-source"


def _state_of(
    slot: str, ref: StateRef, roots: Mapping[str, Root], entries: Mapping[str, bytes]
) -> LayoutState:
    from regio.layout import LayoutState
    from regio.layout.model import ChunkState, Note, TailCopy

    ns = f"{_STATES}{slot}/"
    if ref.rest not in entries:
        raise DamagedListError(f"layout state {slot} lacks its record {ref.rest!r}")
    rest = msgspec.msgpack.decode(entries[ref.rest], type=LayoutState)

    def values(name: str, kind: type[T]) -> tuple[T, ...]:
        dec = msgspec.msgpack.Decoder(kind)
        return tuple(dec.decode(v or b"") for _, v in read_list(name, roots[name], entries))

    settled = {r: tuple(read_ids(f"{ns}s/{r}", roots[f"{ns}s/{r}"], entries)) for r in ref.settled}
    chunks = {r: values(f"{ns}c/{r}", ChunkState) for r in ref.chunks}
    return msgspec.structs.replace(
        rest,
        settled=settled,
        chunks=chunks,
        notes=values(f"{ns}n", Note),
        frozen=values(f"{ns}f", TailCopy),
    )


def _index_of(
    roots: Mapping[str, Root], prefix: str | None, entries: Mapping[str, bytes]
) -> RequestIndex:
    index = RequestIndex([], [], [])
    dec = msgspec.msgpack.Decoder(tuple[int | None, str | None])
    previous = 0
    for key, value in read_list(_INDEX, roots[_INDEX], entries):
        step, ttl = dec.decode(value or b"")
        message = None if step is None else previous + step
        previous = previous if message is None else message
        index.keys.append(key)
        index.messages.append(message)
        index.breakpoints.append(ttl)
    if prefix is not None:
        if prefix not in entries:
            raise DamagedListError(f"the request index lacks its prefix record {prefix!r}")
        index.prefix = msgspec.msgpack.decode(entries[prefix], type=list[str])
    return index


def decode_parts(
    state: EngineState,
    roots: Mapping[str, Root],
    states: tuple[StateRef | None, StateRef | None],
    prefix: str | None,
    entries: Mapping[str, bytes],
) -> tuple[EngineState, dict[str, list[str]], RequestIndex | None]:
    """``state`` with its call index and layout states from the lists, each region's entry
    order and the request index (the inverse of :func:`encode_parts`). Raises
    :class:`regio.persistence.store.lists.DamagedListError` for a missing record or a missing root
    (``KeyError`` is turned into it)."""
    try:
        order = {
            ns[len(_ORDER) :]: read_ids(ns, root, entries)
            for ns, root in roots.items()
            if ns.startswith(_ORDER)
        }
        if _CALLS in roots:
            calls = {
                c: msgspec.msgpack.decode(g or b"", type=str)
                for c, g in read_list(_CALLS, roots[_CALLS], entries)
            }
            window = msgspec.structs.replace(state.window, call_groups=calls)
            state = msgspec.structs.replace(state, window=window)
        index = _index_of(roots, prefix, entries) if _INDEX in roots else None
        last, carried = states
        if last is not None and state.last_request is not None:
            request = msgspec.structs.replace(
                state.last_request, state=_state_of("L", last, roots, entries)
            )
            state = msgspec.structs.replace(state, last_request=request)
        if carried is not None:
            input_state = _state_of("C", carried, roots, entries)
            state = msgspec.structs.replace(
                state, layout_input=(state.layout_input[0], input_state)
            )
    except KeyError as exc:
        raise DamagedListError(f"the head names no root for list {exc}") from exc
    return state, order, index
