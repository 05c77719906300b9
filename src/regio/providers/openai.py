"""The OpenAI providers: Chat Completions (``openai``) and Responses (``openai_responses``).

https://platform.openai.com/docs/api-reference/chat and
https://platform.openai.com/docs/api-reference/responses. Both take function tools framed as
OpenAI's tokenizer guide counts them, use the ``openai_chat`` chat format and the cache rules
of provider ``openai``. The Chat Completions parts (:data:`CHAT_TOOLS`, :data:`CHAT_USAGE`,
:data:`CHAT_RESPONSES`) are also those of the OpenAI-compatible servers
(:mod:`regio.providers.compatible`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from regio.content import Message
from regio.layout.render.openai import (
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    chat_function_tool,
    responses_function_tool,
)
from regio.tokens.overhead import CHAT_FORMATS
from regio.tokens.tooldefs import ToolFraming

from .base import CacheRuleKey, Provider, ResponseReader, UsageFields, UsageParser
from .fields import count, field, has
from .registry import register_provider

__all__ = [
    "CHAT_RESPONSES",
    "CHAT_TOOLS",
    "CHAT_USAGE",
    "OPENAI",
    "OPENAI_RESPONSES_PROVIDER",
    "RESPONSES_READER",
    "RESPONSES_TOOLS",
    "RESPONSES_USAGE",
    "openai_usage_fields",
]

_FRAMING_SOURCE = (
    "OpenAI Cookbook, 'How to count tokens with tiktoken', num_tokens_for_tools: "
    "7 tokens open each function (func_init) and 12 close the list (func_end) for "
    "gpt-4o / gpt-4o-mini; the definitions themselves are counted as their JSON"
)


def _framing(name: str, definition: Callable[[Any], Any]) -> ToolFraming:
    return ToolFraming(name, definition, 12, 7, False, _FRAMING_SOURCE)


#: Chat Completions function tools (``{type: function, function: {...}}``) and their framing.
CHAT_TOOLS = _framing("openai_chat", chat_function_tool)
#: Responses function tools (``{type: function, name, ..., strict}``) with the same framing.
RESPONSES_TOOLS = _framing("openai_responses", responses_function_tool)


def openai_usage_fields(usage: object, side: str, output_key: str) -> UsageFields:
    """The token fields of an OpenAI ``usage``: ``<side>_tokens`` (the whole prompt) with its
    ``<side>_tokens_details.cached_tokens`` (``side``: ``prompt`` for Chat Completions,
    ``input`` for Responses) and ``output_key``."""
    total = count(field(usage, f"{side}_tokens"), f"{side}_tokens")
    details = field(usage, f"{side}_tokens_details")
    cached = count(field(details, "cached_tokens"), f"{side}_tokens_details.cached_tokens")
    return {
        "prompt_tokens": total,
        "cache_read_tokens": cached,
        "uncached_tokens": max(0, total - cached),
        "output_tokens": count(field(usage, output_key), output_key),
    }


def _is_chat_usage(usage: object) -> bool:
    return has(usage, "prompt_tokens")


def _is_responses_usage(usage: object) -> bool:
    """``input_tokens`` with ``input_tokens_details`` and none of Anthropic's cache fields."""
    if has(usage, "prompt_tokens") or not has(usage, "input_tokens"):
        return False
    cache = ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation")
    return has(usage, "input_tokens_details") and not any(has(usage, k) for k in cache)


_CHAT_USAGE_EXAMPLE = {
    "prompt_tokens": 2006,
    "completion_tokens": 300,
    "total_tokens": 2306,
    "prompt_tokens_details": {"cached_tokens": 1920},
}
_RESPONSES_USAGE_EXAMPLE = {
    "input_tokens": 2006,
    "input_tokens_details": {"cached_tokens": 1920},
    "output_tokens": 300,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 2306,
}

CHAT_USAGE = UsageParser(
    api="openai_chat",
    recognizes=_is_chat_usage,
    parse=lambda usage: openai_usage_fields(usage, "prompt", "completion_tokens"),
    keys=("prompt_tokens", "completion_tokens"),
    describes="OpenAI Chat Completions (prompt_tokens, prompt_tokens_details, ...)",
    example=_CHAT_USAGE_EXAMPLE,
)
RESPONSES_USAGE = UsageParser(
    api="openai_responses",
    recognizes=_is_responses_usage,
    parse=lambda usage: openai_usage_fields(usage, "input", "output_tokens"),
    keys=("input_tokens", "output_tokens"),
    describes="OpenAI Responses (input_tokens, input_tokens_details, ...)",
    example=_RESPONSES_USAGE_EXAMPLE,
)


def _is_chat_completion(data: Mapping[str, Any]) -> bool:
    return data.get("object") == "chat.completion" or "choices" in data


def _is_response(data: Mapping[str, Any]) -> bool:
    return data.get("object") == "response" or "output" in data


def _chat_message(data: dict[str, Any]) -> Message:
    from regio.providers.wire import openai_chat_completion

    return openai_chat_completion(data).message


def _responses_message(data: dict[str, Any]) -> Message:
    from regio.providers.wire import responses_message

    return responses_message(data)


CHAT_RESPONSES = ResponseReader(
    api="openai_chat",
    recognizes=_is_chat_completion,
    message=_chat_message,
    usage_key="usage",
    describes="openai.types.chat.ChatCompletion",
    example={
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Done."},
                "finish_reason": "stop",
            }
        ],
        "usage": _CHAT_USAGE_EXAMPLE,
    },
)
RESPONSES_READER = ResponseReader(
    api="openai_responses",
    recognizes=_is_response,
    message=_responses_message,
    usage_key="usage",
    describes="openai.types.responses.Response",
    example={
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Done."}],
            }
        ],
        "usage": _RESPONSES_USAGE_EXAMPLE,
    },
)

OPENAI = register_provider(
    Provider(
        name="openai",
        renderer=OPENAI_CHAT,
        tool_framing=CHAT_TOOLS,
        chat_overhead=CHAT_FORMATS["openai_chat"],
        usage=CHAT_USAGE,
        responses=CHAT_RESPONSES,
        cache_rule=CacheRuleKey("openai"),
        default_model="gpt-5",
        agent_client="openai",
    )
)
OPENAI_RESPONSES_PROVIDER = register_provider(
    Provider(
        name="openai_responses",
        renderer=OPENAI_RESPONSES,
        tool_framing=RESPONSES_TOOLS,
        chat_overhead=CHAT_FORMATS["openai_chat"],
        usage=RESPONSES_USAGE,
        responses=RESPONSES_READER,
        cache_rule=CacheRuleKey("openai"),
        default_model="gpt-5",
        agent_client="openai",
    )
)
