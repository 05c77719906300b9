"""Cache models by CLI name (``anthropic:claude-sonnet-4-6``, ``openai:gpt-5``, ``vllm``,
``oracle``, ...), found through the providers registry, which holds each provider's cache rule.

``cache_model_for(name)`` parses ``provider[:model]``, finds the registered provider (by name or
alias: ``gemini`` is ``google``, ``claude`` is ``anthropic``, ``llama.cpp`` is ``llamacpp``;
:func:`regio.providers.find_provider`), resolves its cache rule for the model (its default
model when none is given) and builds the model class for the rule's mechanism
(:func:`regio.cache.model_for_rule`). Google's provider caches implicitly unless
``mechanism="explicit_object"``. ``oracle[:provider[:model]]`` builds the oracle bound
quantized for that provider; plain ``oracle`` quantizes request-side at the default provider's
block boundaries (Anthropic, the Claude Sonnet 4.6 rule, minimum 1,024).
"""

from __future__ import annotations

from typing import Any

from regio.cache.base import CacheModel
from regio.cache.oracle import OracleCache
from regio.cache.registry import model_for_rule
from regio.cache.rules import Rule, RuleSet, default_rules
from regio.cache.types import CacheRuleError

from .registry import DEFAULT_PROVIDER, find_provider, providers

__all__ = ["cache_model_for"]


def _rule(
    name: str,
    ruleset: RuleSet,
    platform: str | None,
    sim_date: str | None,
    mechanism: str | None,
) -> Rule:
    """The cache rule of ``provider[:model]`` (module doc). Raises :class:`CacheRuleError`
    naming the providers with cache rules for a provider that has none."""
    given, _, model = name.partition(":")
    provider = find_provider(given)
    if provider is None or provider.cache_rule is None:
        known = sorted(p.name for p in providers() if p.cache_rule is not None)
        raise CacheRuleError(
            f"unknown cache provider {given.strip().lower()!r} in {name!r}; use one of "
            f"{known} or 'oracle[:provider[:model]]'"
        )
    return provider.cache_rule.resolve(
        model.strip() or provider.default_model,
        rules=ruleset,
        platform=platform,
        sim_date=sim_date,
        mechanism=mechanism,
    )


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
        rest = name[len("oracle:") :] if name != "oracle" else DEFAULT_PROVIDER
        return OracleCache(_rule(rest, ruleset, platform, sim_date, mechanism), **options)
    return model_for_rule(_rule(name, ruleset, platform, sim_date, mechanism), **options)
