"""Self-hosted inference engines: vLLM, SGLang, llama.cpp.

All three work on token ids. A block without ``token_ids`` gets deterministic stand-in ids
derived from its digest (equal digests give equal ids; different digests differ from the first
token), and the answer gets ids from ``output_token_ids`` or from ``output_digest``, so a re-sent
answer block with that digest matches what the engine kept.

* :class:`PagedCache` (vLLM ``paged_blocks``, SGLang ``radix``): pages of ``block_size`` /
  ``page_size`` tokens keyed by chained hashes ``hash((parent, page_ids))``; m = deepest
  resident page; ``cached = p * floor(min(m * p, n - 1) / p)`` (a full hit recomputes the last
  token); then every full page of ``prompt + output[:-1]`` is resident; LRU over freed pages
  (a request's tail page first), evicted past ``capacity_blocks`` (``None`` = unbounded).
  Counters ``queries`` / ``hits`` in tokens (``vllm:prefix_cache_queries`` / ``..._hits``).
* :class:`SlotCache` (llama.cpp ``slot``): ``slots`` slots per scope; a request takes the idle
  slot with the best LCP / len(prompt) above ``slot_similarity``, else the least recently used;
  ``cache_n = LCP`` minus 1 when it covers the whole prompt; afterwards the slot holds
  ``prompt + output[:-1]``. ``cache_prompt=False`` gives ``cache_n = 0``.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import attrs

from regio.cache.base import CacheModel
from regio.cache.types import CacheOutcome, CacheRequest

__all__ = ["PagedCache", "SlotCache", "prompt_ids"]

_MASK = (1 << 62) - 1


def _stand_in(digest: str, count: int) -> list[int]:
    base = int.from_bytes(hashlib.sha256(f"regio-token\x00{digest}".encode()).digest()[:8], "big")
    return [(base + j * 0x9E3779B97F4A7C15) & _MASK for j in range(count)]


def prompt_ids(req: CacheRequest) -> list[int]:
    """The prompt's token ids (stand-ins for blocks without ids)."""
    out: list[int] = []
    for b in req.blocks:
        out.extend(b.token_ids if b.token_ids is not None else _stand_in(b.digest, b.tokens))
    return out


def output_ids(req: CacheRequest) -> list[int]:
    """The answer's token ids (``output_token_ids`` or stand-ins from ``output_digest``)."""
    if req.output_token_ids is not None:
        return list(req.output_token_ids)
    return _stand_in(req.output_digest or f"out:{req.id}", req.output_tokens)


@attrs.define
class PagedCache(CacheModel):
    """vLLM / SGLang paged prefix cache. ``capacity_blocks`` overrides ``sim.capacity_blocks``."""

    capacity_blocks: int | None = None
    resident: OrderedDict[int, None] = attrs.field(factory=OrderedDict)
    queries: int = 0
    hits: int = 0

    def reset(self) -> None:
        """Empty the cache and zero the counters."""
        self.resident.clear()
        self.queries = self.hits = 0

    @property
    def page(self) -> int:
        """Page size in tokens (``block_size`` for vLLM, ``page_size`` for SGLang)."""
        key = "page_size" if self.rule.mechanism == "radix" else "block_size"
        return int(self.rule.param(key, 16) or 1)

    def _pages(self, seed: str, ids: list[int]) -> list[int]:
        p = self.page
        h = int.from_bytes(hashlib.sha256(f"regio-paged\x00{seed}".encode()).digest()[:8], "big")
        out = []
        for i in range(0, len(ids) - p + 1, p):
            h = hash((h, tuple(ids[i : i + p])))
            out.append(h)
        return out

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Simulate one request."""
        self.check(request)
        ids = prompt_ids(request)
        n = len(ids)
        p = self.page
        seed = request.scope
        pages = self._pages(seed, ids)
        m = 0
        for h in pages:
            if h not in self.resident:
                break
            m += 1
        cached = p * (min(m * p, max(n - 1, 0)) // p)
        self.queries += n
        self.hits += cached
        full = ids + output_ids(request)[:-1]
        kept = self._pages(seed, full)
        for h in reversed(kept):
            self.resident[h] = None
            self.resident.move_to_end(h)
        cap = (
            self.capacity_blocks
            if self.capacity_blocks is not None
            else self.rule.param("capacity_blocks")
        )
        if cap is not None:
            while len(self.resident) > int(cap):
                self.resident.popitem(last=False)
        return self.outcome(request, n, read=cached)


@attrs.define
class _Slot:
    tokens: list[int] = attrs.field(factory=list)
    last_used: float = float("-inf")


@attrs.define
class SlotCache(CacheModel):
    """llama.cpp server slots. ``slots`` overrides ``sim.slots``; ``cache_prompt`` as the server
    option (default true)."""

    slots: int | None = None
    cache_prompt: bool = True
    state: dict[str, list[_Slot]] = attrs.field(factory=dict)

    def reset(self) -> None:
        """Empty every slot."""
        self.state.clear()

    def slot_tokens(self, scope: str = "default") -> list[list[int]]:
        """Current token history of each slot in ``scope``."""
        return [s.tokens for s in self.state.get(scope, [])]

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Simulate one request."""
        self.check(request)
        ids = prompt_ids(request)
        n = len(ids)
        count = int(self.slots or self.rule.param("slots", 1) or 1)
        slots = self.state.setdefault(request.scope, [_Slot() for _ in range(count)])
        lcps = [_lcp(s.tokens, ids) for s in slots]
        threshold = float(self.rule.extra.get("slot_similarity") or 0.1)
        best = max(range(len(slots)), key=lambda i: (lcps[i], -i))
        if not (n and lcps[best] / n > threshold):
            best = min(range(len(slots)), key=lambda i: (slots[i].last_used, i))
        slot = slots[best]
        lcp = lcps[best] if self.cache_prompt else 0
        if lcp == n and n > 0:
            lcp -= 1
        slot.tokens = ids + output_ids(request)[:-1]
        slot.last_used = request.t_start
        return self.outcome(request, n, read=lcp)


def _lcp(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n
    while lo < hi:  # binary search on equal prefixes (list slices compare in C)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
