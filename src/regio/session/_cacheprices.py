"""What an engine knows about its provider's prefix cache: the ``(write, read)`` price
multipliers that size token hysteresis targets, the output price the cost controller weighs a
summary with, and the cache TTL (seconds) that times an idle compaction. All come from the
cache rules data (``regio/data/cache-rules.yaml``, each rule citing its provider's
documentation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from regio.cache import resolve
from regio.errors import RegioError
from regio.policies.costcontrol import DEFAULT_OUTPUT
from regio.policies.hysteresis import DEFAULT_MULTIPLIERS

if TYPE_CHECKING:
    from regio.cache.rules import Rule

__all__ = ["CacheTerms", "cache_terms"]


class CacheTerms(msgspec.Struct, frozen=True):
    """``write`` / ``read``: price multipliers of a cache write and a cache read (x the base
    input price); ``ttl_s``: seconds an unused cached prefix lives (``None``: unknown or
    unbounded); ``output``: the output price over the input price (the rules' prices, else
    :data:`regio.policies.costcontrol.DEFAULT_OUTPUT`); ``input_usd``: the input price."""

    write: float
    read: float
    ttl_s: float | None
    output: float = DEFAULT_OUTPUT
    #: the input price, USD per million tokens (``None``: not in the rules)
    input_usd: float | None = None


def _ttl(rule: Rule, ttl: str) -> float | None:
    value = rule.ttl_s
    if isinstance(value, dict):
        value = value.get(ttl, next(iter(value.values()), None))
    if value is None:
        value = rule.param("ttl_default_s")
    return float(value) if value is not None else None


def cache_terms(provider: str, model: str, ttl: str = "5m") -> CacheTerms:
    """The :class:`CacheTerms` of ``provider`` / ``model`` for the breakpoint TTL ``ttl``
    (``5m`` / ``1h``); a provider the rules do not know gets Anthropic's 5-minute terms."""
    try:
        rule = resolve(provider, model or "")
    except (RegioError, LookupError, ValueError):
        return CacheTerms(*DEFAULT_MULTIPLIERS, ttl_s=300.0)
    price = rule.price
    output = DEFAULT_OUTPUT
    if price.input and price.output:
        output = float(price.output) / float(price.input)
    write = rule.m(
        "write_1h" if ttl == "1h" else "write_5m",
        rule.m("write", rule.m("create", rule.m("plain"))),
    )
    read = rule.m("read", DEFAULT_MULTIPLIERS[1])
    return CacheTerms(
        write=write, read=read, ttl_s=_ttl(rule, ttl), output=output, input_usd=price.input
    )
