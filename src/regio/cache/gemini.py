"""Gemini explicit context caches (``cachedContents``).

Implicit Gemini caching is :class:`regio.cache.auto_prefix.AutoPrefixCache` with a rule of
mechanism ``auto_prefix``. Here a cache object is created explicitly with :meth:`create`
(K tokens, TTL default ``ttl_default_s`` = 3600 s): creation costs ``K * mult.create`` input
units plus storage ``K / 1e6 * hours * storage_per_mtok_hour`` USD. A request naming a live cache
(``CacheRequest.cached_content``) must start with the cached blocks: ``read = K``,
``uncached = n - K``; naming a missing or expired cache raises :class:`CacheExpiredError`.
"""

from __future__ import annotations

import attrs
import msgspec

from regio.cache.base import CacheModel
from regio.cache.types import (
    CacheBlock,
    CacheExpiredError,
    CacheOutcome,
    CacheRequest,
    CacheRequestError,
)

__all__ = ["ExplicitCache", "GeminiExplicitCache"]


class ExplicitCache(msgspec.Struct, frozen=True):
    """A created cache object: ``name``, ``tokens`` K, ``created`` / ``expires_at`` (s),
    ``create_units`` (x base input), ``create_usd`` (``None`` without a price) and
    ``storage_usd`` for the whole TTL."""

    name: str
    tokens: int
    digests: tuple[str, ...]
    created: float
    expires_at: float
    create_units: float
    create_usd: float | None
    storage_usd: float


@attrs.define
class GeminiExplicitCache(CacheModel):
    """Explicit Gemini caches by name (scope: project = ``CacheRequest.scope``)."""

    caches: dict[tuple[str, str], ExplicitCache] = attrs.field(factory=dict)

    def reset(self) -> None:
        """Delete every cache object."""
        self.caches.clear()

    def create(
        self,
        name: str,
        blocks: tuple[CacheBlock, ...],
        t: float,
        ttl_s: float | None = None,
        scope: str = "default",
    ) -> ExplicitCache:
        """Create (or replace) cache ``name`` holding ``blocks`` at time ``t`` (seconds).

        Raises :class:`CacheRequestError` when the content is below the rule's minimum.
        """
        k = sum(b.tokens for b in blocks)
        minimum = self.rule.min_tokens or 0
        if k < minimum:
            raise CacheRequestError(
                f"explicit cache {name!r}: {k} tokens is below the minimum {minimum} of "
                f"{self.rule.id}; add content or use implicit caching"
            )
        ttl = float(ttl_s if ttl_s is not None else self.rule.extra.get("ttl_default_s") or 3600)
        units = k * self.rule.m("create")
        price = self.rule.price.input
        storage = float(self.rule.extra.get("storage_per_mtok_hour") or 0.0)
        entry = ExplicitCache(
            name=name,
            tokens=k,
            digests=tuple(b.digest for b in blocks),
            created=t,
            expires_at=t + ttl,
            create_units=units,
            create_usd=None if price is None else price / 1e6 * units,
            storage_usd=k / 1e6 * (ttl / 3600.0) * storage,
        )
        self.caches[(scope, name)] = entry
        return entry

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Bill one request; a named cache must be live at ``t_start``."""
        self.check(request)
        n = request.prompt_tokens
        name = request.cached_content
        if name is None:
            return self.outcome(request, n)
        entry = self.caches.get((request.scope, name))
        if entry is None or not (entry.created <= request.t_start < entry.expires_at):
            state = "does not exist" if entry is None else f"expired at t={entry.expires_at:g}"
            raise CacheExpiredError(
                f"request {request.id!r} names cached content {name!r} which {state}; "
                "recreate it or extend its TTL"
            )
        head = tuple(b.digest for b in request.blocks[: len(entry.digests)])
        if head != entry.digests:
            raise CacheRequestError(
                f"request {request.id!r}: its first blocks must be the {len(entry.digests)} "
                f"blocks of cached content {name!r} (the prompt as the model sees it)"
            )
        return self.outcome(request, n, read=entry.tokens)
