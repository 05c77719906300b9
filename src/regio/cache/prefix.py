"""Prefix keys and longest-common-prefix (LCP) lookup shared by the cache models.

* :func:`block_hashes`: the chained prefix hash, ``h_0 = sha256(provider, scope,
  model)``, ``h_k = sha256(h_{k-1}, salt_k, digest_k)``; ``salt_k`` is the digest of the request
  parameters whose ``render_level`` is the level that block k opens (empty otherwise); a level
  with no block of its own salts the next level that opens (so a ``system``-level parameter
  still invalidates ``messages`` when the request has no system block) [D]. With a
  :class:`HashMemo` (its caller's, e.g. one session's predictions) a request's hashes are taken
  from the memo's last request up to the first block that differs: a prompt that grows at its
  end costs its new blocks.
* :class:`Unit`: one block (or the persisted output) as a matchable unit: digest, tokens and
  optional token ids. Two units match fully when their ids are equal (with ids on both sides)
  or their digests and token counts are equal; a partial match (same digest, fewer tokens, or
  a common run of ids) counts the shared tokens and stops. Without token ids a prefix is
  therefore matched in whole blocks, a lower bound.
* :class:`PrefixIndex`: stored sequences indexed by chained unit hashes; ``lcp`` finds the
  deepest stored prefix in O(units) and refines the next unit per token against the distinct
  continuations stored there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from regio.cache.types import CacheBlock, CacheRequest

__all__ = [
    "HashMemo",
    "PrefixIndex",
    "Unit",
    "block_hashes",
    "branch_depths",
    "chain",
    "common_prefix",
    "level_salts",
    "units_of",
]

#: At most this many distinct continuations are compared per token when refining an LCP.
MAX_CONTINUATIONS = 64


_LEVEL_NAMES = ("tools", "system", "messages")
_LEVELS = {name: i for i, name in enumerate(_LEVEL_NAMES)}


def level_salts(params: Mapping[str, str], render_level: Mapping[str, str]) -> dict[str, bytes]:
    """Salt per level: sha256 over the sorted ``name=value`` params rendered at that level."""
    out: dict[str, bytes] = {}
    for level in ("tools", "system", "messages"):
        items = sorted((k, v) for k, v in params.items() if render_level.get(k) == level)
        if items:
            h = hashlib.sha256()
            for k, v in items:
                h.update(f"{k}={v}\x00".encode())
            out[level] = h.digest()
    return out


@attrs.define
class HashMemo:
    """The chained prefix hashes of the last request :func:`block_hashes` hashed with this memo:
    its hash seed (provider, scope, model and level salts), its blocks, each block's hash and
    how many levels' salts were in the chain after it. Mutable, one caller's (never shared
    between sessions); ``hashed`` counts the blocks hashed through it."""

    seed: tuple[str, dict[str, bytes]] | None = None
    blocks: tuple[CacheBlock, ...] = ()
    hashes: list[bytes] = attrs.field(factory=list)
    applied: list[int] = attrs.field(factory=list)
    hashed: int = 0


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """The length of the longest common prefix of the sequences ``a`` and ``b`` (halving
    slices compared in C: a few slice comparisons, not a Python step per item; the items of
    two requests are mostly the same objects, compared by identity first). ``a`` and ``b``
    slice to the same type (two lists, two tuples): a list slice never equals a tuple slice."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def block_hashes(
    req: CacheRequest,
    provider: str,
    render_level: Mapping[str, str] | None = None,
    memo: HashMemo | None = None,
) -> list[bytes]:
    """Chained prefix hashes ``[h_1 .. h_n]`` of the request's blocks; with ``memo`` the
    leading blocks equal to the memo's last request's keep their hashes (module doc) and the
    request becomes the memo's last."""
    salts = level_salts(req.params, render_level or {}) if req.params else {}
    head = f"{provider}\x00{req.scope}\x00{req.model}"
    seed = (head, salts)
    start = 0
    out: list[bytes] = []
    applied_at: list[int] = []
    if memo is not None and memo.seed == seed:
        start = common_prefix(req.blocks, memo.blocks)
        out, applied_at = memo.hashes[:start], memo.applied[:start]
    if start:
        h, prev_level, applied = out[-1], req.blocks[start - 1].level, applied_at[-1]
    else:
        h = hashlib.sha256(head.encode()).digest()
        prev_level, applied = None, 0  # levels whose salt is in the chain (a skipped level
        # salts the next)
    for b in req.blocks[start:]:
        salt = b""
        if b.level != prev_level and salts:
            upto = _LEVELS.get(b.level, 2) + 1
            salt = b"".join(salts.get(lv, b"") for lv in _LEVEL_NAMES[applied:upto])
            applied = max(applied, upto)
        prev_level = b.level
        h = hashlib.sha256(h + salt + b"\x00" + b.digest.encode()).digest()
        out.append(h)
        applied_at.append(applied)
    if memo is not None:
        memo.seed, memo.blocks = seed, req.blocks
        memo.hashes, memo.applied = out, applied_at
        memo.hashed += len(req.blocks) - start
        return list(out)
    return out


class Unit(NamedTuple):
    """A matchable unit: ``digest``, ``tokens`` and optional ``ids`` (token ids)."""

    digest: str
    tokens: int
    ids: tuple[int, ...] | None = None

    def match(self, other: Unit) -> tuple[int, bool]:
        """(shared leading tokens, whether both units are fully equal)."""
        if self.ids is not None and other.ids is not None:
            if self.ids == other.ids:
                return len(self.ids), True
            n = 0
            for a, b in zip(self.ids, other.ids, strict=False):
                if a != b:
                    break
                n += 1
            return n, False
        if self.digest == other.digest:
            return min(self.tokens, other.tokens), self.tokens == other.tokens
        return 0, False


def units_of(req: CacheRequest, *, with_output: bool = False, drop_last: bool = True) -> list[Unit]:
    """The request's blocks as units; ``with_output`` appends the answer (``output_digest``,
    or ``"out:<id>"``) with ``output_tokens - 1`` tokens (``drop_last``) or all of them."""
    new = tuple.__new__  # NamedTuple.__new__ is slow on hot paths
    units = [new(Unit, (b.digest, b.tokens, b.token_ids)) for b in req.blocks]
    if with_output and req.output_tokens > 0:
        g = req.output_tokens - (1 if drop_last else 0)
        ids = req.output_token_ids[:g] if req.output_token_ids is not None else None
        if g > 0:
            units.append(Unit(req.output_digest or f"out:{req.id}", g, ids))
    return units


def chain(units: Iterable[Unit], seed: bytes = b"") -> list[bytes]:
    """Chained hashes of full units (digest + token count, or token ids when present)."""
    sha = hashlib.sha256
    h = sha(seed).digest()
    out: list[bytes] = []
    append = out.append
    for digest, tokens, ids in units:
        key = repr(ids).encode() if ids is not None else f"{digest}\x00{tokens}".encode()
        h = sha(h + key).digest()
        append(h)
    return out


class _Stored(NamedTuple):
    units: Sequence[Unit]
    hashes: Sequence[bytes]


class PrefixIndex:
    """Stored unit sequences, indexed by chained prefix hash.

    ``add(eid, units, hashes)`` stores a sequence under entry id ``eid``; ``remove(eid)`` drops
    it; ``lcp(units, hashes)`` returns ``(tokens, eid)`` of the longest common prefix with any
    stored sequence (``eid`` is ``None`` when nothing matches). Cost O(len(units)) per call.
    """

    def __init__(self) -> None:
        self._nodes: dict[bytes, dict[int, None]] = {}
        self._entries: dict[int, _Stored] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, eid: int) -> bool:
        return eid in self._entries

    def add(self, eid: int, units: Sequence[Unit], hashes: Sequence[bytes]) -> None:
        """Store ``units`` (with their chained ``hashes``) as entry ``eid`` (replacing it)."""
        if eid in self._entries:
            self.remove(eid)
        self._entries[eid] = _Stored(units, hashes)
        for h in hashes:
            self._nodes.setdefault(h, {})[eid] = None

    def remove(self, eid: int) -> None:
        """Drop entry ``eid`` (no-op when absent)."""
        st = self._entries.pop(eid, None)
        if st is None:
            return
        for h in st.hashes:
            ids = self._nodes.get(h)
            if ids is not None:
                ids.pop(eid, None)
                if not ids:
                    del self._nodes[h]

    def has_hash(self, h: bytes) -> bool:
        """True when some stored sequence has prefix hash ``h``."""
        return h in self._nodes

    def lcp(self, units: Sequence[Unit], hashes: Sequence[bytes]) -> tuple[int, int | None]:
        """Longest common prefix in tokens with any stored sequence, and one entry holding it."""
        # presence is monotone in k (an entry holding h_k holds h_1..h_k): binary search
        lo, hi = 0, len(hashes)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if hashes[mid - 1] in self._nodes:
                lo = mid
            else:
                hi = mid - 1
        k = lo
        base = sum(u.tokens for u in units[:k])
        holders = self._nodes[hashes[k - 1]] if k else self._entries
        best_eid: int | None = next(reversed(holders.keys())) if k else None
        if k >= len(units) or not holders:
            return base, best_eid
        nxt = units[k]
        best = 0
        seen: set[tuple[str, int]] = set()
        for i, eid in enumerate(reversed(holders.keys())):
            if i >= 4 * MAX_CONTINUATIONS or len(seen) >= MAX_CONTINUATIONS:
                break
            st = self._entries[eid]
            if len(st.units) <= k:
                continue
            cont = st.units[k]
            sig = (cont.digest, cont.tokens)
            if sig in seen:
                continue
            seen.add(sig)
            got, _ = nxt.match(cont)
            if got > best:
                best, best_eid = got, eid
        return base + best, best_eid


def branch_depths(index: PrefixIndex, hashes: Sequence[bytes]) -> list[int]:
    """Unit counts k (>= 1) along ``hashes`` where some stored sequence holding prefix k does
    not continue with unit k+1: the block-level LCPs with each stored sequence."""
    nodes = index._nodes
    out = []
    for k, h in enumerate(hashes, start=1):
        here = nodes.get(h)
        if here is None:
            break
        nxt = nodes.get(hashes[k]) if k < len(hashes) else None
        if nxt is None or len(here) > len(nxt):
            out.append(k)
    return out
