"""Providers as objects: one registered :class:`Provider` per provider, holding its renderer,
tool framing, chat overhead, usage parser, response reader, cache rule and default model
(``provider_for("vllm").tool_framing``: how vLLM's tool definitions are sent and counted).

The built-in providers, one module per family: :mod:`regio.providers.anthropic`
(``anthropic``), :mod:`regio.providers.openai` (``openai``, ``openai_responses``),
:mod:`regio.providers.compatible` (``openai_compatible``, ``llamacpp``, ``vllm``, ``sglang``,
``deepseek``, ``google``) and :mod:`regio.providers.text` (``text``). Every other module of
regio finds a provider through the registry (:mod:`regio.providers.registry`) and keeps no
list of its own; a new provider is one module that builds a :class:`Provider` and calls
:func:`register_provider` (docs/architecture.md, "A new provider").
"""

from __future__ import annotations

# The built-in providers register on import, in this order.
from .anthropic import ANTHROPIC
from .base import CacheRuleKey, Provider, ResponseReader, UsageFields, UsageParser
from .cachemodel import cache_model_for
from .compatible import DEEPSEEK, GOOGLE, LLAMACPP, OPENAI_COMPATIBLE, SGLANG, VLLM
from .economics import economics_for
from .openai import OPENAI, OPENAI_RESPONSES_PROVIDER
from .registry import (
    DEFAULT_PROVIDER,
    UnknownProviderError,
    chat_format_for,
    find_provider,
    provider_for,
    providers,
    register_provider,
    response_reader_for,
    response_readers,
    tool_framing_for,
    usage_parser_for,
    usage_parsers,
)
from .text import TEXT

__all__ = [
    "ANTHROPIC",
    "DEEPSEEK",
    "DEFAULT_PROVIDER",
    "GOOGLE",
    "LLAMACPP",
    "OPENAI",
    "OPENAI_COMPATIBLE",
    "OPENAI_RESPONSES_PROVIDER",
    "SGLANG",
    "TEXT",
    "VLLM",
    "CacheRuleKey",
    "Provider",
    "ResponseReader",
    "UnknownProviderError",
    "UsageFields",
    "UsageParser",
    "cache_model_for",
    "chat_format_for",
    "economics_for",
    "find_provider",
    "provider_for",
    "providers",
    "register_provider",
    "response_reader_for",
    "response_readers",
    "tool_framing_for",
    "usage_parser_for",
    "usage_parsers",
]
