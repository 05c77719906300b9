"""The cache model class of each cache mechanism (``breakpoint_lookback``, ``auto_prefix``,
``radix``, ...): :func:`model_for_rule` builds the model a :class:`regio.cache.rules.Rule`
describes. Finding a provider's rule by name (``anthropic:claude-sonnet-4-6``, ``vllm``,
``oracle``) is the providers registry's: :func:`regio.providers.cache_model_for`.
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
from regio.cache.rules import Rule
from regio.cache.types import CacheRuleError

__all__ = ["MODEL_CLASSES", "model_for_rule"]

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


def model_for_rule(rule: Rule, **options: Any) -> CacheModel:
    """The cache model class for ``rule.mechanism``, built with ``options``."""
    cls = MODEL_CLASSES.get(rule.mechanism)
    if cls is None:
        raise CacheRuleError(
            f"rule {rule.id!r}, key 'mechanism': no cache model for {rule.mechanism!r}; "
            f"known: {sorted(MODEL_CLASSES)}"
        )
    return cls(rule, **options)
