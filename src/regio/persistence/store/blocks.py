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
import itertools
import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

import msgspec

from regio.cache.prefix import common_prefix

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


class _Saved(NamedTuple):
    """The last save's request blocks (the memo's :data:`BLOCKS`): the blocks, each one's
    repetition, record key, message index and breakpoint, and by record key in block order
    each record's digest and bare block (without its position fields); ``counts``: how many
    blocks of each ``(digest, source)`` the request has."""

    blocks: tuple[LayoutBlock, ...]
    repeats: list[int]
    keys: list[str]
    messages: list[int | None]
    breakpoints: list[str | None]
    digests: dict[str, str]
    bare: dict[str, LayoutBlock]
    counts: dict[tuple[str, str], int]


def keyed_request(request: Request, rec: Recorder) -> tuple[Request, RequestIndex]:
    """The last request without its blocks and its :class:`RequestIndex`; each block goes
    to ``put`` (without its position fields) when its record is not stored yet (a block
    equal to the one the memo has under its key is not encoded again).

    The leading blocks equal to the last save's (the render log keeps a settled prefix's
    blocks; the tool definitions are laid out again alike) are taken from the memo whole, in
    slices and dictionary views compared in C, when the store holds their digests: a save's
    work in Python follows the blocks after them; a later block that is the last save's very
    block at its place is not keyed again."""
    encode = msgspec.msgpack.encode
    blocks = request.blocks
    matched, last = rec.memo.get(BLOCKS, (False, None))
    same = common_prefix(blocks, last.blocks) if last is not None else 0
    digests: dict[str, str] = {}
    if same:
        digests = dict(itertools.islice(last.digests.items(), same))
        if digests.items() <= rec.stored.items():
            rec.digests.update(digests)
        else:
            same, digests = 0, {}
    if same:
        bare = dict(itertools.islice(last.bare.items(), same))
        repeats, keys = last.repeats[:same], last.keys[:same]
        messages, breakpoints = last.messages[:same], last.breakpoints[:same]
        counts = dict(last.counts)  # the prefix's: the last save's less its blocks after it
        for old in last.blocks[same:]:
            pair = (old.digest, old.source)
            if counts[pair] == 1:
                del counts[pair]
            else:
                counts[pair] -= 1
    else:
        bare, repeats, keys, messages, breakpoints, counts = {}, [], [], [], [], {}
    old_blocks = last.blocks if last is not None else ()
    old_bare = last.bare if last is not None else {}
    old_digests = last.digests if last is not None else {}
    for i in range(same, len(blocks)):
        b = blocks[i]
        n = counts.get((b.digest, b.source), 0)
        counts[(b.digest, b.source)] = n + 1
        if i < len(old_blocks) and old_blocks[i] is b and last is not None and last.repeats[i] == n:
            # the last save's very block at its place (after a change before it)
            key = last.keys[i]
            stripped = old_bare[key]
        else:
            tag = hashlib.blake2b(f"{b.digest}|{b.source}|{n}".encode(), digest_size=8)
            key = f"@lb/{tag.hexdigest()}"
            stripped = msgspec.structs.replace(b, prefix_hash="", message=None, breakpoint=None)
        digest = old_digests.get(key, "") if old_bare.get(key) == stripped else ""
        if digest and rec.stored.get(key) == digest:
            rec.digests[key] = digest
        else:
            rec.keep(key, encode(stripped))
        digests[key] = rec.digests[key]
        bare[key] = stripped
        repeats.append(n)
        keys.append(key)
        messages.append(b.message)
        breakpoints.append(b.breakpoint)
    index = RequestIndex(keys, messages, breakpoints)
    known = rec.memo.get(CHAIN, (None, {}))[1]
    links: dict[tuple[str, str], str] = {}
    # the last save's leading blocks had their chain checked then (``matched``): only the
    # blocks after them are chained again, from the last of them
    start = same if matched else 0
    root = blocks[start - 1].prefix_hash if start else None
    if list(map(_PREFIX, blocks[start:])) != chain(
        list(map(_DIGEST, blocks[start:])), known, links, root
    ):
        index.prefix = list(map(_PREFIX, blocks))
    rec.next_memo[CHAIN] = (None, links)
    saved = _Saved(blocks, repeats, keys, messages, breakpoints, digests, bare, counts)
    rec.next_memo[BLOCKS] = (index.prefix is None, saved)
    return msgspec.structs.replace(request, blocks=()), index


_DIGEST = operator.attrgetter("digest")
_PREFIX = operator.attrgetter("prefix_hash")

#: Memo key of the digest chain links of the last save's request (not a record key).
CHAIN = "@chain"
#: Memo key of the last save's request blocks: whether their prefix hashes were the digest
#: chain, and the blocks with their records (:class:`_Saved`; not a record key).
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
