"""The provider table: one row per provider name regio knows.

Each :class:`Provider` says which renderer API it speaks (``api``, a name of
:func:`regio.layout.renderer_for`), which cache rules describe it (``cache_provider``, the
``provider`` of :mod:`regio.cache.rules`, and ``cache_model``, the model used when none is
given) and which chat format its token overhead follows (``chat_format``). The cache, tokens,
runtime and agent packages read it instead of keeping their own lists.

:func:`economics_for` turns a provider and model into the :class:`regio.layout.CacheEconomics`
the layout is given (minimum cacheable prefix, rent ratio of the freezing tail), from the
provider's cache rule.
"""

from __future__ import annotations

import attrs

from regio.layout.model import CacheEconomics

__all__ = ["PROVIDERS", "Provider", "economics_for", "provider_for"]


@attrs.frozen
class Provider:
    """One provider (see the module docstring). ``cache_provider`` is ``None`` for a provider
    whose caching no rule describes (a plain text endpoint)."""

    name: str
    api: str
    cache_provider: str | None
    cache_model: str
    chat_format: str


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("anthropic", "anthropic", "anthropic", "claude-sonnet-4-6", "anthropic"),
        Provider("openai", "openai_chat", "openai", "gpt-5", "openai_chat"),
        Provider("openai_responses", "openai_responses", "openai", "gpt-5", "openai_chat"),
        Provider("openai_compatible", "openai_chat", "vllm", "any", "openai_chat"),
        Provider("llamacpp", "openai_chat", "llamacpp", "any", "openai_chat"),
        Provider("vllm", "openai_chat", "vllm", "any", "openai_chat"),
        Provider("sglang", "openai_chat", "sglang", "any", "openai_chat"),
        Provider("deepseek", "openai_chat", "deepseek", "deepseek-chat", "openai_chat"),
        Provider("google", "openai_chat", "google", "gemini-2.5-flash", "openai_chat"),
        Provider("text", "text", None, "any", "openai_chat"),
    )
}


def provider_for(name: str) -> Provider:
    """The row of provider ``name``. Raises ``KeyError`` naming the known providers."""
    found = PROVIDERS.get(name)
    if found is None:
        raise KeyError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}")
    return found


def economics_for(provider: str | None, model: str | None, rules: object = None) -> CacheEconomics:
    """The :class:`CacheEconomics` of ``provider`` / ``model`` from its cache rule
    (:func:`regio.cache.rules.resolve`; ``rules``: a :class:`regio.cache.rules.RuleSet`, default
    the packaged one): ``min_cache_tokens`` is the rule's ``min_tokens``; ``gc_ratio`` is
    ``(m_write - m_read) / m_read`` with ``m_write`` = ``mult.write_5m`` (Anthropic), else
    ``mult.write``, else ``mult.plain`` (automatic caches without a write fee) and ``m_read`` =
    ``mult.read``. Unknown providers, models or multipliers keep the documented defaults of
    :class:`CacheEconomics`."""
    default = CacheEconomics()
    if not provider or not model:
        return default
    row = PROVIDERS.get(provider)
    cache_provider = row.cache_provider if row is not None else provider
    if cache_provider is None:
        return default
    from regio.cache.rules import resolve

    try:
        rule = resolve(cache_provider, model, rules=rules)  # type: ignore[arg-type]
    except Exception:  # unknown provider or model: the documented defaults
        return default
    mult = getattr(rule, "mult", None) or {}
    read = mult.get("read")
    write = mult.get("write_5m", mult.get("write", mult.get("plain", 1.0)))
    ratio = default.gc_ratio
    if read and write is not None and write > read:
        ratio = float((write - read) / read)
    return CacheEconomics(int(rule.min_tokens or default.min_cache_tokens), ratio)
