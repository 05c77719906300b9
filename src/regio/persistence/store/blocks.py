"""The last request's blocks as keyed records of a session store
(:mod:`regio.persistence.store.base`).

A save keeps each :class:`regio.layout.model.LayoutBlock` of the last request as a record
``@lb/<tag>`` without what depends on its place (prefix hash, message index, breakpoint), so
the blocks of an unchanged prefix are never written again; the head's
:class:`regio.persistence.store.parts.RequestIndex` holds the place of each (its record key, message
index and breakpoint TTL) and the prefix hashes only when they are not the chain of the digests. A
load puts the blocks back in order and rebuilds the chain (:func:`request_of`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec

from .errors import SessionDamagedError
from .lists import Recorder
from .parts import RequestIndex

if TYPE_CHECKING:
    from regio.layout import Request
    from regio.layout.model import LayoutBlock

__all__ = ["CHAIN", "BlockIndex", "chain", "keyed_request", "request_of"]


class BlockIndex(Protocol):
    """A stored last request's block index (:class:`RequestIndex`, or the
    ``regio.session-head/2`` and ``/3`` head's ``_RequestIndex`` of
    :mod:`regio.persistence.store.base`): each block's record key, message index and
    breakpoint TTL, and the prefix hashes when they are not the digest chain."""

    @property
    def keys(self) -> list[str]: ...

    @property
    def messages(self) -> list[int | None]: ...

    @property
    def breakpoints(self) -> list[str | None]: ...

    @property
    def prefix(self) -> list[str] | None: ...


def keyed_request(request: Request, rec: Recorder) -> tuple[Request, RequestIndex]:
    """The last request without its blocks and its :class:`RequestIndex`; each block goes
    to ``put`` (without its position fields) when its record is not stored yet (a block
    equal to the one the memo has under its key is not encoded again)."""
    encode = msgspec.msgpack.encode
    index = RequestIndex([], [], [])
    seen: dict[tuple[str, str], int] = {}
    prefix = []
    # the last save's blocks, by position: a block that is the same (immutable) object at the
    # same place and repetition is not keyed, stripped nor compared again (the render log
    # keeps a settled prefix's blocks), so a save's work per block is a few lookups
    matched, before = rec.memo.get(BLOCKS, (False, []))
    done: list[tuple[LayoutBlock, int, str]] = []
    same = 0  # the leading blocks that are the last save's very blocks
    for i, b in enumerate(request.blocks):
        prefix.append(b.prefix_hash)
        n = seen[(b.digest, b.source)] = seen.get((b.digest, b.source), -1) + 1
        last = before[i] if i < len(before) else None
        hit = None
        if last is not None and last[0] is b and last[1] == n:
            key = last[2]
            hit = rec.memo.get(key)
            same += same == i
        if hit is None:
            tag = hashlib.blake2b(f"{b.digest}|{b.source}|{n}".encode(), digest_size=8)
            key = f"@lb/{tag.hexdigest()}"
            bare = msgspec.structs.replace(b, prefix_hash="", message=None, breakpoint=None)
            hit = rec.memo.get(key)
            if hit is None or hit[0] != bare:
                hit = (bare, "")
        if hit[1] and rec.stored.get(key) == hit[1]:
            rec.digests[key] = hit[1]
        else:
            rec.keep(key, encode(hit[0]))
        rec.next_memo[key] = (hit[0], rec.digests[key])
        done.append((b, n, key))
        index.keys.append(key)
        index.messages.append(b.message)
        index.breakpoints.append(b.breakpoint)
    known = rec.memo.get(CHAIN, (None, {}))[1]
    links: dict[tuple[str, str], str] = {}
    # the last save's leading blocks had their chain checked then (``matched``): only the
    # blocks after them are chained again, from the last of them
    start = same if matched else 0
    root = request.blocks[start - 1].prefix_hash if start else None
    digests = [b.digest for b in request.blocks[start:]]
    if prefix[start:] != chain(digests, known, links, root):
        index.prefix = prefix
    rec.next_memo[CHAIN] = (None, links)
    rec.next_memo[BLOCKS] = (index.prefix is None, done)
    return msgspec.structs.replace(request, blocks=()), index


#: Memo key of the digest chain links of the last save's request (not a record key).
CHAIN = "@chain"
#: Memo key of the last save's request blocks: whether their prefix hashes were the digest
#: chain, and ``(block, repetition, record key)`` by position (not a record key).
BLOCKS = "@blocks"


def chain(
    digests: Sequence[str],
    known: Mapping[tuple[str, str], str] | None = None,
    links: dict[tuple[str, str], str] | None = None,
    root: str | None = None,
) -> list[str]:
    """The prefix hashes of the chain of ``digests`` from ``root`` (``None``: the chain's
    root, :data:`regio.layout.model.CHAIN_ROOT`); ``known`` links (``(previous hash,
    digest)`` -> hash, the last save's) are not hashed again, and every link goes to
    ``links``."""
    from regio.layout.model import CHAIN_ROOT, chain_hash

    out, h = [], CHAIN_ROOT if root is None else root
    for dg in digests:
        link = (h, dg)
        h = (known or {}).get(link) or chain_hash(h, dg)
        if links is not None:
            links[link] = h
        out.append(h)
    return out


def request_of(
    where: str, request: Request, index: BlockIndex, entries: Mapping[str, bytes]
) -> Request:
    """The last request with its blocks decoded from the keyed records."""
    from regio.layout.model import LayoutBlock

    dec = msgspec.msgpack.Decoder(LayoutBlock)
    missing = [k for k in index.keys if k not in entries]
    if missing:
        raise SessionDamagedError(
            f"{where}: the stored last request lacks blocks {missing[:3]}; the session is "
            "damaged, restore it from a file save"
        )
    blocks = [dec.decode(entries[k]) for k in index.keys]
    prefix = index.prefix or chain([b.digest for b in blocks])
    out = tuple(
        msgspec.structs.replace(b, prefix_hash=p, message=m, breakpoint=t)
        for b, p, m, t in zip(blocks, prefix, index.messages, index.breakpoints, strict=True)
    )
    return msgspec.structs.replace(request, blocks=out, total_tokens=request.total_tokens)
