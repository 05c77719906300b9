"""Anthropic Messages API prompt cache.

Breakpoints are explicit ``cache_control`` marks plus the automatic mark (top-level
``cache_control`` -> last cacheable block). Each breakpoint at or above ``min_tokens`` writes one
entry keyed by the chained prefix hash through its block. A read probes, from each breakpoint
(last first), the breakpoint block then the last block of each of the 19 earlier positions
(consecutive ``tool_use`` / ``tool_result`` runs collapse into one position when the rule lists
them in ``lookback.collapse_runs``); the first live entry wins. Entries live in
``[t_start + ttft, t_start + ttl)`` of their writer and every hit renews the TTL from the
reader's ``t_start``. Mixed-TTL billing: A = through the hit, B = through the last 1h breakpoint
beyond A, C = through the last breakpoint; read A, 1h write B-A, 5m write C-B, plain n-C.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from regio.cache.base import CacheModel
from regio.cache.prefix import block_hashes
from regio.cache.types import BreakpointError, CacheOutcome, CacheRequest
from regio.cache.walk import (
    LOOKBACK_POSITIONS,
    last_of,
    lookback_positions,
    probed_positions,
    walk_blocks,
    walked_prefix,
)

__all__ = ["AnthropicCache", "breakpoints", "positions"]

_PURGE_EVERY = 1024


@attrs.define
class _Entry:
    tokens: int
    ttl: float
    readable_at: float
    expires_at: float


def positions(kinds: list[str], collapse: tuple[str, ...]) -> list[int]:
    """Lookback position (1-based) of each block: a block continuing a run of the same
    collapsible kind shares its predecessor's position (:func:`regio.cache.walk.
    lookback_positions`)."""
    return lookback_positions(kinds, collapse)


def breakpoints(
    req: CacheRequest,
    max_breakpoints: int = 4,
    automatic: bool = True,
    marked: Sequence[int] | None = None,
) -> list[tuple[int, str]]:
    """``[(block index, ttl)]`` in block order: explicit marks plus the automatic mark.
    ``marked``: the indexes of the blocks that carry a mark, ascending, when the caller knows
    them (:func:`regio.cache.walk.walk_blocks`; ``None``: every block is looked at).

    Raises :class:`BreakpointError` for the provider's 400 cases: a mark on a
    thinking or empty block, more than ``max_breakpoints`` marks, a 1h mark after a 5m mark,
    automatic mode with another TTL already on the last cacheable block or with all slots used,
    or automatic mode on a platform without it.
    """
    marks: dict[int, str] = {}
    for i in range(len(req.blocks)) if marked is None else marked:
        b = req.blocks[i]
        if b.mark is None:
            continue
        if b.kind == "thinking" or b.tokens == 0:
            raise BreakpointError(
                f"request {req.id!r}: blocks[{i}] ({b.kind}, {b.tokens} tokens) cannot carry "
                "cache_control; move the mark to a non-empty, non-thinking block"
            )
        marks[i] = b.mark
    if req.auto_mark is not None:
        if not automatic:
            raise BreakpointError(
                f"request {req.id!r}: automatic caching (top-level cache_control) is not "
                "available for this model/platform; use explicit block marks"
            )
        last = next(
            (
                i
                for i in range(len(req.blocks) - 1, -1, -1)
                if req.blocks[i].kind != "thinking" and req.blocks[i].tokens > 0
            ),
            None,
        )
        if last is not None:
            if last in marks:
                if marks[last] != req.auto_mark:
                    raise BreakpointError(
                        f"request {req.id!r}: automatic cache_control ttl {req.auto_mark} "
                        f"conflicts with the {marks[last]} mark on blocks[{last}]"
                    )
            elif len(marks) >= max_breakpoints:
                raise BreakpointError(
                    f"request {req.id!r}: automatic cache_control needs a slot but "
                    f"{len(marks)} explicit marks are set (max {max_breakpoints}); drop one"
                )
            else:
                marks[last] = req.auto_mark
    if len(marks) > max_breakpoints:
        raise BreakpointError(
            f"request {req.id!r}: {len(marks)} cache_control marks, max {max_breakpoints}; "
            "remove marks (the layout planner keeps at most 4)"
        )
    out = sorted(marks.items())
    seen_5m = False
    for i, ttl in out:
        if ttl == "5m":
            seen_5m = True
        elif seen_5m:
            raise BreakpointError(
                f"request {req.id!r}: 1h mark on blocks[{i}] follows a 5m mark; "
                "1h marks must precede 5m marks"
            )
    return out


@attrs.define
class AnthropicCache(CacheModel):
    """Anthropic breakpoint + lookback cache. ``store`` maps prefix hash -> entry."""

    provider: str = "anthropic"
    store: dict[bytes, _Entry] = attrs.field(factory=dict)
    _count: int = 0

    def reset(self) -> None:
        """Forget every entry."""
        self.store.clear()

    def _purge(self, t: float) -> None:
        self.store = {h: e for h, e in self.store.items() if e.expires_at > t}

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Simulate one request at ``request.t_start``; O(blocks), or with ``hash_memo`` and
        ``walk_memo`` O(blocks from the first that differs from the memo's last request) in Python
        (:mod:`regio.cache.walk`; the slices and comparisons of the rest run in C)."""
        rule = self.rule
        lb = rule.lookback
        window = lb.positions if lb else LOOKBACK_POSITIONS
        collapse = tuple(lb.collapse_runs) if lb else ()
        memo = self.walk_memo
        start = walked_prefix(request.blocks, collapse, memo)
        self.check(request, start)
        cum, marked, pos = walk_blocks(request.blocks, collapse, memo, start)
        bps = breakpoints(request, rule.max_breakpoints or 4, rule.automatic_mode, marked)
        n = cum[-1] if cum else 0
        minimum = rule.min_tokens or 0
        bp = [(k, ttl) for k, ttl in bps if cum[k] >= minimum]
        if not bp:
            return self.outcome(request, n)
        t = request.t_start
        self._count += 1
        if self._count % _PURGE_EVERY == 0:
            self._purge(t)
        ttls = rule.ttl_s or {"5m": 300, "1h": 3600}
        deepest = bp[-1][0]
        hashes = block_hashes(request, self.provider, rule.render_level, self.hash_memo)
        hit: int | None = None
        for k, _ttl in reversed(bp):
            probes = [k] + [last_of(pos, p) for p in probed_positions(pos[k], window)]
            for a in probes:
                e = self.store.get(hashes[a])
                if e is not None and e.readable_at <= t < e.expires_at:
                    hit = a
                    break
            if hit is not None:
                break
        big_a = 0
        if hit is not None:
            big_a = cum[hit]
            e = self.store[hashes[hit]]
            e.expires_at = max(e.expires_at, t + e.ttl)
        big_c = cum[deepest]
        big_b = max((cum[k] for k, ttl in bp if ttl == "1h" and cum[k] > big_a), default=big_a)
        for k, ttl in bp:
            if cum[k] <= big_a:
                continue
            life = float(ttls[ttl])
            old = self.store.get(hashes[k])
            if old is None or old.expires_at <= t:
                self.store[hashes[k]] = _Entry(cum[k], life, t + request.ttft, t + life)
            else:
                old.readable_at = min(old.readable_at, t + request.ttft)
                old.expires_at = max(old.expires_at, t + life)
                old.ttl = max(old.ttl, life)
        return self.outcome(request, n, read=big_a, write_1h=big_b - big_a, write_5m=big_c - big_b)
