"""The :class:`regio.layout.CacheEconomics` a layout is given, from the provider's cache rule."""

from __future__ import annotations

from regio.layout.model import CacheEconomics

from .base import CacheRuleKey
from .registry import find_provider

__all__ = ["economics_for"]


def economics_for(provider: str | None, model: str | None, rules: object = None) -> CacheEconomics:
    """The :class:`CacheEconomics` of ``provider`` / ``model`` from the provider's cache rule
    (:meth:`regio.providers.CacheRuleKey.resolve`; ``rules``: a
    :class:`regio.cache.rules.RuleSet`, default the packaged one; a provider no registration
    knows is looked up in the rules under its own name): ``min_cache_tokens`` is the rule's
    ``min_tokens``; ``gc_ratio`` is ``(m_write - m_read) / m_read`` with ``m_write`` =
    ``mult.write_5m`` (Anthropic), else ``mult.write``, else ``mult.plain`` (automatic caches
    without a write fee) and ``m_read`` = ``mult.read``; ``mark_odds`` is ``(m_write -
    m_plain) / (m_write - m_read)`` (``m_plain``: ``mult.plain``, default 1), and
    ``mark_odds_1h`` the same with ``mult.write_1h`` (when the rule has one). No provider or
    model, a provider without a cache rule, or a model or multiplier the rules do not know
    keep the documented defaults of :class:`CacheEconomics`."""
    default = CacheEconomics()
    if not provider or not model:
        return default
    found = find_provider(provider)
    key = found.cache_rule if found is not None else CacheRuleKey(provider)
    if key is None:
        return default
    try:
        rule = key.resolve(model, rules=rules)  # type: ignore[arg-type]
    except Exception:  # unknown provider or model: the documented defaults
        return default
    mult = getattr(rule, "mult", None) or {}
    read = mult.get("read")
    write = mult.get("write_5m", mult.get("write", mult.get("plain", 1.0)))
    ratio = default.gc_ratio
    odds, odds_1h = default.mark_odds, default.mark_odds_1h
    if read and write is not None and write > read:
        ratio = float((write - read) / read)
        plain = mult.get("plain", 1.0)
        odds = _odds(write, plain, read)
        odds_1h = _odds(mult.get("write_1h", write), plain, read)
    return CacheEconomics(int(rule.min_tokens or default.min_cache_tokens), ratio, odds, odds_1h)


def _odds(write: float, plain: float, read: float) -> float:
    """``(write - plain) / (write - read)``, at least 0 (a marker's break-even chance of being
    read back, :func:`regio.layout.tail.settling_copies`)."""
    return float(max(0.0, write - plain) / (write - read)) if write > read else 0.0
