"""The cache-model interface every simulator implements.

A model is an attrs object holding one :class:`~regio.cache.rules.Rule` and its mutable store.
``process(request) -> CacheOutcome`` simulates one request at ``request.t_start`` (callers keep
requests in time order); ``run(requests) -> CacheReport`` sorts by ``(t_start, id)``,
processes them all and aggregates; ``reset()`` empties the store. ``hash_memo``: a caller's
:class:`regio.cache.prefix.HashMemo` the models that chain prefix hashes hash through (a caller
that simulates one growing prompt request after request hashes its new blocks only).
``walk_memo``: a caller's :class:`regio.cache.walk.BlockWalk` the breakpoint models take the
per-block facts of the blocks a request shares with the last one walked from (the same caller
walks its new blocks only).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from regio.cache.billing import bill, input_units
from regio.cache.prefix import HashMemo
from regio.cache.rules import Rule
from regio.cache.types import CacheOutcome, CacheReport, CacheRequest, CacheRequestError
from regio.cache.walk import BlockWalk

__all__ = ["CacheModel", "order_requests"]


def order_requests(requests: Iterable[CacheRequest]) -> list[CacheRequest]:
    """Requests sorted by ``t_start``, ties by ``id``."""
    return sorted(requests, key=lambda r: (r.t_start, r.id))


@attrs.define
class CacheModel:
    """Base class: ``rule`` + helpers for accounting. Subclasses implement :meth:`process`;
    ``hash_memo`` and ``walk_memo`` (keyword only; module doc)."""

    rule: Rule
    hash_memo: HashMemo | None = attrs.field(default=None, kw_only=True)
    walk_memo: BlockWalk | None = attrs.field(default=None, kw_only=True)

    @property
    def name(self) -> str:
        """The rule id the model simulates."""
        return self.rule.id

    def process(self, request: CacheRequest) -> CacheOutcome:  # pragma: no cover - abstract
        """Simulate one request; see subclasses."""
        raise NotImplementedError

    def reset(self) -> None:  # pragma: no cover - abstract
        """Forget every stored entry."""
        raise NotImplementedError

    def run(self, requests: Iterable[CacheRequest]) -> CacheReport:
        """Process requests in ``(t_start, id)`` order and aggregate a :class:`CacheReport`."""
        outs = [self.process(r) for r in order_requests(requests)]
        return CacheReport.from_outcomes(self.rule.id, outs)

    def check(self, request: CacheRequest, start: int = 0) -> None:
        """Reject malformed input (negative tokens, token ids of the wrong length) in the
        blocks from ``start`` (the earlier ones: checked as the same blocks of an earlier
        request, :mod:`regio.cache.walk`)."""
        for i in range(start, len(request.blocks)):
            b = request.blocks[i]
            if b.tokens < 0:
                raise CacheRequestError(
                    f"request {request.id!r}: blocks[{i}].tokens = {b.tokens} < 0; counts are >= 0"
                )
            if b.token_ids is not None and len(b.token_ids) != b.tokens:
                raise CacheRequestError(
                    f"request {request.id!r}: blocks[{i}] has {len(b.token_ids)} token_ids but "
                    f"tokens = {b.tokens}; make them agree"
                )
        if request.output_tokens < 0:
            raise CacheRequestError(f"request {request.id!r}: output_tokens < 0")

    def outcome(
        self,
        request: CacheRequest,
        n: int,
        *,
        read: int = 0,
        write_5m: int = 0,
        write_1h: int = 0,
        write: int = 0,
        read_mult: float | None = None,
    ) -> CacheOutcome:
        """Build an outcome; ``uncached = n - read - writes``; cost"""
        uncached = n - read - write_5m - write_1h - write
        if uncached < 0:
            raise AssertionError(f"{self.rule.id}: accounting exceeds prompt ({request.id})")
        r = self.rule
        units = input_units(
            r.mult,
            uncached=uncached,
            read=read,
            write_5m=write_5m,
            write_1h=write_1h,
            write=write,
            read_mult=read_mult,
        )
        cost = bill(
            r.price.input,
            r.price.output,
            input_tokens=n,
            input_units=units,
            output_tokens=request.output_tokens,
        )
        return CacheOutcome(
            id=request.id,
            rule_id=r.id,
            prompt_tokens=n,
            read=read,
            uncached=uncached,
            write_5m=write_5m,
            write_1h=write_1h,
            write=write,
            output_tokens=request.output_tokens,
            input_units=units,
            cost_usd=cost,
        )
