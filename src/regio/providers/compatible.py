"""Servers that speak the OpenAI Chat Completions API: ``openai_compatible`` (any such
endpoint), ``llamacpp``, ``vllm``, ``sglang``, ``deepseek`` and ``google`` (Gemini's
OpenAI-compatible endpoint, https://ai.google.dev/gemini-api/docs/openai).

Each is rendered, framed, counted and read as Chat Completions (the parts of
:mod:`regio.providers.openai`); what differs is its cache rule in the cache rules data and its
default model. A server whose own framing is known would give its own :class:`ToolFraming`.
"""

from __future__ import annotations

from regio.layout.render.openai import OPENAI_CHAT
from regio.tokens.overhead import CHAT_FORMATS

from .base import CacheRuleKey, Provider
from .openai import CHAT_RESPONSES, CHAT_TOOLS, CHAT_USAGE
from .registry import register_provider

__all__ = ["DEEPSEEK", "GOOGLE", "LLAMACPP", "OPENAI_COMPATIBLE", "SGLANG", "VLLM"]


def _chat_server(
    name: str, rule: CacheRuleKey, model: str, aliases: tuple[str, ...] = ()
) -> Provider:
    """A provider speaking Chat Completions, registered as ``name``."""
    return register_provider(
        Provider(
            name=name,
            renderer=OPENAI_CHAT,
            tool_framing=CHAT_TOOLS,
            chat_overhead=CHAT_FORMATS["openai_chat"],
            usage=CHAT_USAGE,
            responses=CHAT_RESPONSES,
            cache_rule=rule,
            default_model=model,
            aliases=aliases,
            agent_client="openai-compatible",
        )
    )


#: Any Chat Completions server; cached as vLLM caches (paged prefix blocks).
OPENAI_COMPATIBLE = _chat_server(
    "openai_compatible", CacheRuleKey("vllm"), "any", ("openai-compatible",)
)
LLAMACPP = _chat_server("llamacpp", CacheRuleKey("llamacpp"), "any", ("llama.cpp", "llama-cpp"))
VLLM = _chat_server("vllm", CacheRuleKey("vllm"), "any")
SGLANG = _chat_server("sglang", CacheRuleKey("sglang"), "any")
DEEPSEEK = _chat_server("deepseek", CacheRuleKey("deepseek"), "deepseek-chat")
#: Gemini through its OpenAI-compatible endpoint; implicit caching (``auto_prefix``) unless a
#: cache model asks for the explicit cached contents.
GOOGLE = _chat_server(
    "google", CacheRuleKey("google", "auto_prefix"), "gemini-2.5-flash", ("gemini",)
)
