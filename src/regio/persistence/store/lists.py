"""Ordered lists kept as linked records, so a save writes what changed in a list, not the list.

A list sized by the window (a region's entry order, the last request's block index, the call
index, a layout state's settled entry ids) is stored as one record per item under its
namespace, ``<ns>/<item key>`` -> ``[next item key, value]`` (msgpack), and a root in the
head: ``(first item key, item count)``. Between two saves only the records of inserted items,
of items whose value changed and of the items just before an insertion or a removal change;
the others have the digests the store already holds and are not written again (the
digest-checked put / drop of :mod:`regio.persistence.store.base`), so the bytes a save writes for a
list follow the turn's changes (an append: the new items and the old last item), never the list's
length. A load reads every record of the list (bounded by the window) and follows the chain
from the root.

Item keys are unique within a list; an item whose natural key repeats gets the key
``<key>\\x00<n>`` (its ``n``-th repetition) and carries its item as the value.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from regio.cache.prefix import common_prefix

__all__ = [
    "DamagedListError",
    "Memo",
    "Recorder",
    "Root",
    "content_items",
    "entry_digest",
    "id_items",
    "read_ids",
    "read_list",
]

#: ``(first item key, item count)`` of a stored list; ``("", 0)`` for an empty one.
Root = tuple[str, int]

_encode = msgspec.msgpack.encode
_node = msgspec.msgpack.Decoder(tuple[str, bytes | None])


def id_items(ids: Sequence[str]) -> list[tuple[str, bytes | None]]:
    """``ids`` as list items: each id is its own key with no value; a repeated id gets a
    ``\\x00<n>`` key and carries itself as the value (module doc)."""
    if len(set(ids)) == len(ids):  # no id repeats (the common case): built in C
        return list(zip(ids, itertools.repeat(None)))
    seen: dict[str, int] = {}
    out: list[tuple[str, bytes | None]] = []
    for i in ids:
        n = seen[i] = seen.get(i, -1) + 1
        out.append((i, None) if n == 0 else (f"{i}\x00{n}", _encode(i)))
    return out


def content_items(values: Sequence[bytes]) -> list[tuple[str, bytes | None]]:
    """Encoded ``values`` as list items keyed by their content (blake2b, 16 hex digits; a
    repeated value gets a ``\\x00<n>`` key)."""
    seen: dict[str, int] = {}
    out: list[tuple[str, bytes | None]] = []
    for data in values:
        key = hashlib.blake2b(data, digest_size=8).hexdigest()
        n = seen[key] = seen.get(key, -1) + 1
        out.append((key if n == 0 else f"{key}\x00{n}", data))
    return out


#: A memo of the last save or load: record key -> (the object encoded, its digest), and list
#: namespace -> (its items, the digests of its nodes).
Memo = dict[str, tuple[Any, Any]]


def entry_digest(data: bytes) -> str:
    """Digest of one encoded record (blake2b, 24 hex digits)."""
    return hashlib.blake2b(data, digest_size=12).hexdigest()


class Recorder:
    """The records of one save, checked against the digests the store holds (``stored``):
    :meth:`keep` puts a record only when its digest differs, and every kept key's digest is
    in ``digests`` (the keys missing from it are the ones to drop). ``memo`` is the previous
    save's (or load's) :data:`Memo`; what is the same object or the same list as there is
    not encoded again, and :attr:`next_memo` is the memo of this save."""

    def __init__(self, stored: Mapping[str, str], memo: Memo) -> None:
        self.stored = stored
        self.memo = memo
        self.digests: dict[str, str] = {}
        self.put: dict[str, bytes] = {}
        self.next_memo: Memo = {}

    def keep(self, key: str, data: bytes) -> str:
        """Record ``data`` under ``key``: into ``put`` only when its stored digest differs."""
        digest = self.digests[key] = entry_digest(data)
        if self.stored.get(key) != digest:
            self.put[key] = data
        return key

    def keep_objects(self, ns: str, values: Sequence[Any]) -> None:
        """Record the msgpack of each immutable value of ``values`` (each with a unique
        ``id``) under ``<ns>/<id>``, encoding a value only when it is not the object the memo
        has under its key (whose stored digest is known). The leading values equal to the last
        save's under ``ns`` are taken whole (slices and dictionary views compared in C) when
        the store holds their digests: the work in Python follows the values after them."""
        memo_key = f"@objects/{ns}"
        hit = self.memo.get(memo_key)
        old_values, (old_objects, old_digests) = hit if hit is not None else ([], ({}, {}))
        start = common_prefix(values, old_values) if hit is not None else 0
        digests = dict(itertools.islice(old_digests.items(), start))
        if start and not digests.items() <= self.stored.items():
            start, digests = 0, {}
        self.digests.update(digests)
        objects = dict(itertools.islice(old_objects.items(), start))
        for value in values[start:]:
            key = f"{ns}/{value.id}"
            digest = old_digests.get(key)
            if old_objects.get(key) is value and digest and self.stored.get(key) == digest:
                self.digests[key] = digest
            else:
                self.keep(key, _encode(value))
            objects[key], digests[key] = value, self.digests[key]
        self.next_memo[memo_key] = (list(values), (objects, digests))

    def keep_list(self, ns: str, items: Sequence[tuple[str, bytes | None]]) -> Root:
        """Record the list ``items`` (``(key, value)``, keys unique) under ``ns``, one node
        per item (module doc), and return its root. A list equal to the memo's is not
        encoded again; otherwise only the nodes whose item, value or successor changed are."""
        items = list(items)
        hit = self.memo.get(ns)
        nodes: dict[str, str] = {}
        if hit is not None and hit[0] == items and hit[1].items() <= self.stored.items():
            nodes = hit[1]
            self.digests.update(nodes)
        else:
            start = 0
            if hit is not None:
                # the nodes before the first changed item (their item and successor are the
                # memo's) are taken whole when the store holds their digests: a list that grew
                # or changed at its end costs the changed nodes, not the list
                start = max(0, common_prefix(items, hit[0]) - 1)
                kept = dict(itertools.islice(hit[1].items(), start))
                if len(kept) == start and kept.items() <= self.stored.items():
                    nodes.update(kept)
                    self.digests.update(kept)
                else:
                    start = 0
            old = _successors(hit[0][start:]) if hit is not None else {}
            old_digests = hit[1] if hit is not None else {}
            for i, (key, value) in enumerate(items[start:], start):
                following = items[i + 1][0] if i + 1 < len(items) else ""
                node = f"{ns}/{key}"
                digest = old_digests.get(node)
                same = old.get(key) == (following, value)
                if same and digest is not None and digest == self.stored.get(node):
                    nodes[node] = self.digests[node] = digest
                else:
                    self.keep(node, _encode((following, value)))
                    nodes[node] = self.digests[node]
        self.next_memo[ns] = (items, nodes)
        return (items[0][0] if items else "", len(items))


def _successors(items: Sequence[tuple[str, bytes | None]]) -> dict[str, tuple[str, Any]]:
    return {
        key: (items[i + 1][0] if i + 1 < len(items) else "", value)
        for i, (key, value) in enumerate(items)
    }


class DamagedListError(ValueError):
    """A stored list's chain is broken (a node is missing, or the chain does not end after
    the root's count)."""


def read_list(ns: str, root: Root, entries: Mapping[str, bytes]) -> list[tuple[str, bytes | None]]:
    """The items of the list stored under ``ns`` from ``root`` (the inverse of
    :func:`keep_list`). Raises :class:`DamagedListError` naming the missing node."""
    key, count = root
    out: list[tuple[str, bytes | None]] = []
    for _ in range(count):  # by count: an item key may be the empty string
        data = entries.get(f"{ns}/{key}")
        if data is None:
            raise DamagedListError(f"list {ns!r} lacks its item {key!r} of {count} items")
        following, value = _node.decode(data)
        out.append((key, value))
        key = following
    if key:
        raise DamagedListError(f"list {ns!r} runs past its {count} items")
    return out


def read_ids(ns: str, root: Root, entries: Mapping[str, bytes]) -> list[str]:
    """The ids of a list recorded from :func:`id_items` (the inverse)."""
    return [
        key if value is None else msgspec.msgpack.decode(value, type=str)
        for key, value in read_list(ns, root, entries)
    ]
