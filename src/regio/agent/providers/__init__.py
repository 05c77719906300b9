"""Provider adapters: OpenAI-compatible Chat Completions, Anthropic Messages, replay, scripted.

The SDK-backed providers import their SDK lazily (optional extra ``providers``).
"""

from __future__ import annotations

from regio.providers.wire import (
    INVALID_ARGUMENTS_KEY,
    anthropic_completion,
    anthropic_usage,
    openai_chat_completion,
    openai_usage,
)

from .anthropic import AnthropicProvider
from .base import ProviderAdapter, require_sdk
from .openai_compat import OpenAICompatibleProvider, is_openai_host
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
