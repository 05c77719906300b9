"""OpenAI GPT-5.6+ breakpoint cache.

Entries exist only at breakpoints and a read is an exact prefix at a breakpoint (no walk-back).
Candidates: explicit marks (any ``CacheBlock.mark``); ``implicit`` mode adds the last block of
every user/tool message. Eligible: cumulative tokens >= ``min_tokens`` (1,024). Scope:
(organization = ``scope``, ``prompt_cache_key`` = ``key``, model). A = the deepest of the latest
``read_window`` (50) eligible candidates with a live entry; writes go to eligible candidates after
the last assistant message (earlier turns are read-only) beyond A: implicit mode the latest
user/tool message end + up to 3 latest explicit marks, explicit mode up to 4 latest explicit
marks; TTL 1800 s from the write, renewed on a read. ``write = T(last written) - A``.
"""

from __future__ import annotations

from itertools import accumulate

import attrs
import msgspec

from regio.cache.base import CacheModel
from regio.cache.prefix import block_hashes
from regio.cache.types import CacheOutcome, CacheRequest

__all__ = ["BreakpointExactCache", "message_ends"]


def message_ends(req: CacheRequest) -> list[int]:
    """Index of the last block of each message: a block ends a message when the next block has
    another ``(message, role)`` pair (or it is the last block)."""
    blocks = req.blocks
    out = []
    for i, b in enumerate(blocks):
        if i + 1 == len(blocks) or (blocks[i + 1].message, blocks[i + 1].role) != (
            b.message,
            b.role,
        ):
            out.append(i)
    return out


@attrs.define
class _Entry:
    readable_at: float
    expires_at: float


@attrs.define
class BreakpointExactCache(CacheModel):
    """GPT-5.6 exact-breakpoint cache; ``store`` maps prefix hash (scope, key, model) -> entry."""

    store: dict[bytes, _Entry] = attrs.field(factory=dict)

    def reset(self) -> None:
        """Forget every entry."""
        self.store.clear()

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Simulate one request; O(blocks)."""
        self.check(request)
        rule = self.rule
        cum = list(accumulate(b.tokens for b in request.blocks))
        n = cum[-1] if cum else 0
        ends = message_ends(request)
        roles = {i: request.blocks[i].role for i in ends}
        tau = max((i for i in ends if roles[i] == "assistant"), default=-1)
        explicit = [i for i, b in enumerate(request.blocks) if b.mark is not None]
        implicit: list[int] = []
        if request.cache_mode == "implicit":
            implicit = [i for i in ends if roles[i] in ("user", "tool")]
        minimum = rule.min_tokens or 0
        cands = sorted({i for i in (*explicit, *implicit) if cum[i] >= minimum})
        if not cands:
            return self.outcome(request, n)
        t = request.t_start
        ttl = float(rule.ttl_s or 1800)
        keyed = msgspec.structs.replace(request, scope=f"{request.scope}\x00{request.key}")
        hashes = block_hashes(keyed, "openai", rule.render_level, self.hash_memo)
        window = int(rule.extra.get("read_window") or 50)
        big_a = 0
        hit: int | None = None
        for k in cands[-window:]:
            e = self.store.get(hashes[k])
            if e is not None and e.readable_at <= t < e.expires_at and cum[k] > big_a:
                big_a, hit = cum[k], k
        if hit is not None:
            self.store[hashes[hit]].expires_at = t + ttl
        fresh = [k for k in cands if k > tau and cum[k] > big_a]
        max_writes = int(rule.extra.get("max_writes") or 4)
        fresh_explicit = [k for k in fresh if k in set(explicit)]
        if request.cache_mode == "implicit":
            latest_msg = [k for k in fresh if k in set(implicit)][-1:]
            chosen = set(latest_msg) | set(
                fresh_explicit[-(max_writes - 1) :] if max_writes > 1 else []
            )
        else:
            chosen = set(fresh_explicit[-max_writes:])
        for k in chosen:
            old = self.store.get(hashes[k])
            if old is None or old.expires_at <= t:
                self.store[hashes[k]] = _Entry(t + request.ttft, t + ttl)
            else:
                old.readable_at = min(old.readable_at, t + request.ttft)
                old.expires_at = max(old.expires_at, t + ttl)
        written = cum[max(chosen)] - big_a if chosen else 0
        return self.outcome(request, n, read=big_a, write=written)
