"""Provider prefix-cache rules (YAML data), cache models and the oracle bound.

Input: :class:`CacheRequest` (ordered :class:`CacheBlock` s with kind, level, tokens, digest,
optional ``mark`` "5m"/"1h" and token ids; times in simulated seconds). Output: one
:class:`CacheOutcome` per request (read, write_5m, write_1h, write, uncached tokens, input
units, cost in USD) and a :class:`CacheReport` (totals, ``hit_rate``, ``eps``). Build a model
by name with :func:`regio.providers.cache_model_for` (``"anthropic:claude-sonnet-4-6"``,
``"openai:gpt-5"``, ``"vllm"``, ``"oracle"``, ...; the providers registry holds each provider's
cache rule), or from a rule with :func:`model_for_rule`, and feed it with ``model.run(requests)``
or ``model.process(request)``.
Rules: :func:`load_rules` / :func:`resolve` over ``regio/data/cache-rules.yaml`` or your own
file. Docs: ``docs/cache.md``.
"""

from __future__ import annotations

from regio.cache.anthropic import AnthropicCache, breakpoints, positions
from regio.cache.auto_prefix import AutoPrefixCache, openai_q
from regio.cache.base import CacheModel, order_requests
from regio.cache.deepseek import DeepSeekCache
from regio.cache.engines import PagedCache, SlotCache
from regio.cache.gemini import ExplicitCache, GeminiExplicitCache
from regio.cache.openai import BreakpointExactCache
from regio.cache.oracle import OracleCache
from regio.cache.registry import model_for_rule
from regio.cache.rules import Rule, RuleSet, default_rules, load_rules, parse_period, resolve
from regio.cache.types import (
    BreakpointError,
    CacheBlock,
    CacheError,
    CacheExpiredError,
    CacheOutcome,
    CacheReport,
    CacheRequest,
    CacheRequestError,
    CacheRuleError,
)

__all__ = [
    "AnthropicCache",
    "AutoPrefixCache",
    "BreakpointError",
    "BreakpointExactCache",
    "CacheBlock",
    "CacheError",
    "CacheExpiredError",
    "CacheModel",
    "CacheOutcome",
    "CacheReport",
    "CacheRequest",
    "CacheRequestError",
    "CacheRuleError",
    "DeepSeekCache",
    "ExplicitCache",
    "GeminiExplicitCache",
    "OracleCache",
    "PagedCache",
    "Rule",
    "RuleSet",
    "SlotCache",
    "breakpoints",
    "default_rules",
    "load_rules",
    "model_for_rule",
    "openai_q",
    "order_requests",
    "parse_period",
    "positions",
    "resolve",
]
