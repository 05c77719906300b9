"""Cache models by CLI name (``anthropic:claude-sonnet-4-6``, ``openai:gpt-5``, ``vllm``,
``oracle``, ...).

``cache_model_for(name)`` parses ``provider[:model]``, resolves the rule and
builds the model class for the rule's mechanism. Providers: ``anthropic``, ``openai``,
``gemini`` (= rules provider ``google``; implicit caching unless ``mechanism="explicit_object"``),
``deepseek``, ``vllm``, ``sglang``, ``llamacpp`` (``llama.cpp``). ``oracle[:provider[:model]]``
builds the oracle bound quantized for that provider; plain ``oracle`` quantizes request-side at
Anthropic block boundaries (the Claude Sonnet 4.6 rule, minimum 1,024).
"""

from __future__ import annotations

from typing import Any

from regio.cache.anthropic import AnthropicCache
from regio.cache.auto_prefix import AutoPrefixCache
from regio.cache.base import CacheModel
from regio.cache.deepseek import DeepSeekCache
from regio.cache.engines import PagedCache, SlotCache
from regio.cache.gemini import GeminiExplicitCache
from regio.cache.openai import BreakpointExactCache
from regio.cache.oracle import OracleCache
from regio.cache.rules import Rule, RuleSet, default_rules
from regio.cache.types import CacheRuleError

__all__ = ["DEFAULT_MODELS", "MODEL_CLASSES", "cache_model_for", "model_for_rule"]

MODEL_CLASSES: dict[str, type[CacheModel]] = {
    "breakpoint_lookback": AnthropicCache,
    "auto_prefix_grid": AutoPrefixCache,
    "auto_prefix": AutoPrefixCache,
    "breakpoint_exact": BreakpointExactCache,
    "explicit_object": GeminiExplicitCache,
    "unit_prefix": DeepSeekCache,
    "persisted_units": DeepSeekCache,
    "paged_blocks": PagedCache,
    "radix": PagedCache,
    "slot": SlotCache,
}

#: Model used when a name gives only the provider.
DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5",
    "google": "gemini-2.5-flash",
    "deepseek": "deepseek-chat",
    "vllm": "any",
    "sglang": "any",
    "llamacpp": "any",
}
_ALIASES = {
    "gemini": "google",
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "claude": "anthropic",
}


def model_for_rule(rule: Rule, **options: Any) -> CacheModel:
    """The cache model class for ``rule.mechanism``, built with ``options``."""
    cls = MODEL_CLASSES.get(rule.mechanism)
    if cls is None:
        raise CacheRuleError(
            f"rule {rule.id!r}, key 'mechanism': no cache model for {rule.mechanism!r}; "
            f"known: {sorted(MODEL_CLASSES)}"
        )
    return cls(rule, **options)


def _split(name: str) -> tuple[str, str]:
    provider, _, model = name.partition(":")
    provider = _ALIASES.get(provider.strip().lower(), provider.strip().lower())
    if provider not in DEFAULT_MODELS:
        raise CacheRuleError(
            f"unknown cache provider {provider!r} in {name!r}; use one of "
            f"{sorted(DEFAULT_MODELS)} or 'oracle[:provider[:model]]'"
        )
    return provider, model.strip() or DEFAULT_MODELS[provider]


def cache_model_for(
    name: str,
    *,
    rules: RuleSet | None = None,
    sim_date: str | None = None,
    platform: str | None = None,
    mechanism: str | None = None,
    **options: Any,
) -> CacheModel:
    """Build the cache model named ``name`` (see module doc). ``options`` go to the model class
    (e.g. ``idle_mode="optimistic"``, ``capacity_blocks=4096``, ``quantize="exact"``).

    Raises :class:`CacheRuleError` for an unknown provider or a model without a rule.
    """
    ruleset = rules or default_rules()
    if name == "oracle" or name.startswith("oracle:"):
        rest = name[len("oracle:") :] if name != "oracle" else "anthropic"
        provider, model = _split(rest)
        rule = ruleset.resolve(
            provider, model, platform, sim_date, mechanism or _default_mech(provider)
        )
        return OracleCache(rule, **options)
    provider, model = _split(name)
    rule = ruleset.resolve(
        provider, model, platform, sim_date, mechanism or _default_mech(provider)
    )
    return model_for_rule(rule, **options)


def _default_mech(provider: str) -> str | None:
    return "auto_prefix" if provider == "google" else None
