"""The Anthropic Messages API provider (``anthropic``): https://docs.anthropic.com/en/api/messages.

Renderer :data:`regio.layout.render.anthropic.ANTHROPIC`; tools framed by the tool-use system
prompt; the ``anthropic`` chat format; usage with the cache reads and writes beside
``input_tokens``; responses read by :func:`regio.agent.providers.anthropic_completion`; cache
rules of provider ``anthropic``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from regio.content import Message
from regio.layout.render.anthropic import ANTHROPIC as ANTHROPIC_RENDERER
from regio.layout.render.anthropic import anthropic_tool
from regio.tokens.overhead import CHAT_FORMATS
from regio.tokens.tooldefs import ToolFraming

from .base import CacheRuleKey, Provider, ResponseReader, UsageFields, UsageParser
from .fields import count, field, has
from .registry import register_provider

__all__ = ["ANTHROPIC", "ANTHROPIC_TOOLS", "ANTHROPIC_USAGE", "anthropic_usage_fields"]

#: Tool definitions as ``{name, description, input_schema}`` plus the tool-use system prompt.
ANTHROPIC_TOOLS = ToolFraming(
    name="anthropic",
    definition=anthropic_tool,
    per_request=346,
    per_tool=0,
    exact=False,
    source=(
        "Anthropic, 'Tool use with Claude', pricing: a request with tools carries a "
        "tool-use system prompt of 346 tokens for Claude Opus 4 / Sonnet 4 / Sonnet 3.7 "
        "(tool_choice auto or none; 313 for any / tool; older models list fewer), "
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/overview#pricing"
    ),
)

_CACHE_KEYS = ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation")


def _is_anthropic_usage(usage: object) -> bool:
    """``input_tokens`` with Anthropic's cache fields, or without OpenAI Responses'
    ``input_tokens_details`` (a Messages usage need not carry the cache fields)."""
    if usage is None or has(usage, "prompt_tokens") or not has(usage, "input_tokens"):
        return False
    return any(has(usage, k) for k in _CACHE_KEYS) or not has(usage, "input_tokens_details")


def anthropic_usage_fields(usage: object) -> UsageFields:
    """The token fields of a Messages ``usage``: ``input_tokens`` is the uncached part, the
    prompt the sum of it, ``cache_read_input_tokens`` and the cache writes, split by TTL with
    ``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens`` (all 5m
    without the breakdown: the default TTL). Source: Anthropic, "Prompt caching: tracking
    cache performance"."""
    uncached = count(field(usage, "input_tokens"), "input_tokens")
    read = count(field(usage, "cache_read_input_tokens"), "cache_read_input_tokens")
    created = count(field(usage, "cache_creation_input_tokens"), "cache_creation_input_tokens")
    breakdown = field(usage, "cache_creation")
    w5 = count(
        field(breakdown, "ephemeral_5m_input_tokens") or field(breakdown, "ephemeral_5m"),
        "cache_creation.ephemeral_5m_input_tokens",
    )
    w1 = count(
        field(breakdown, "ephemeral_1h_input_tokens") or field(breakdown, "ephemeral_1h"),
        "cache_creation.ephemeral_1h_input_tokens",
    )
    if w5 + w1 == 0:
        w5 = created  # no breakdown: Anthropic's default TTL is 5 minutes
    return {
        "prompt_tokens": uncached + read + w5 + w1,
        "uncached_tokens": uncached,
        "cache_read_tokens": read,
        "cache_write_5m_tokens": w5,
        "cache_write_1h_tokens": w1,
        "output_tokens": count(field(usage, "output_tokens"), "output_tokens"),
    }


_USAGE_EXAMPLE = {
    "input_tokens": 50,
    "cache_read_input_tokens": 1800,
    "cache_creation_input_tokens": 248,
    "output_tokens": 503,
}

ANTHROPIC_USAGE = UsageParser(
    api="anthropic",
    recognizes=_is_anthropic_usage,
    parse=anthropic_usage_fields,
    keys=("input_tokens", "output_tokens"),
    describes="Anthropic (input_tokens, cache_read_input_tokens, ...)",
    example=_USAGE_EXAMPLE,
)


def _is_message(data: Mapping[str, Any]) -> bool:
    return data.get("type") == "message" or (
        "content" in data and data.get("role") == "assistant" and "stop_reason" in data
    )


def _message(data: dict[str, Any]) -> Message:
    from regio.providers.wire import anthropic_completion

    return anthropic_completion(data).message


ANTHROPIC_RESPONSES = ResponseReader(
    api="anthropic",
    recognizes=_is_message,
    message=_message,
    usage_key="usage",
    describes="anthropic.types.Message",
    example={
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Done."}],
        "stop_reason": "end_turn",
        "usage": _USAGE_EXAMPLE,
    },
)

ANTHROPIC = register_provider(
    Provider(
        name="anthropic",
        renderer=ANTHROPIC_RENDERER,
        tool_framing=ANTHROPIC_TOOLS,
        chat_overhead=CHAT_FORMATS["anthropic"],
        usage=ANTHROPIC_USAGE,
        responses=ANTHROPIC_RESPONSES,
        cache_rule=CacheRuleKey("anthropic"),
        default_model="claude-sonnet-4-6",
        aliases=("claude",),
        agent_client="anthropic",
    )
)
