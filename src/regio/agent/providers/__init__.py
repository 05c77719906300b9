"""Provider adapters: OpenAI-compatible Chat Completions, Anthropic Messages, replay, scripted.

The SDK-backed providers are defined in :mod:`regio.clients` (below the engine, which builds a
blueprint's LLM summarizer on them) and re-exported here; they import their SDK lazily
(optional extra ``providers``). The offline ones (replay, scripted) live here.
"""

from __future__ import annotations

from regio.clients import (
    AnthropicProvider,
    OpenAICompatibleProvider,
    ProviderAdapter,
    is_openai_host,
    require_sdk,
)
from regio.providers.wire import (
    INVALID_ARGUMENTS_KEY,
    anthropic_completion,
    anthropic_usage,
    openai_chat_completion,
    openai_usage,
)

from .replay import ReplayProvider
from .scripted import ScriptedProvider, ScriptItem, reply

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "AnthropicProvider",
    "OpenAICompatibleProvider",
    "ProviderAdapter",
    "ReplayProvider",
    "ScriptItem",
    "ScriptedProvider",
    "anthropic_completion",
    "anthropic_usage",
    "is_openai_host",
    "openai_chat_completion",
    "openai_usage",
    "reply",
    "require_sdk",
]
