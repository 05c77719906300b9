"""Reading provider responses (as JSON dicts) into regio's content and usage types.

* :func:`openai_chat_completion` reads an OpenAI Chat Completions response (also vLLM and
  llama.cpp server, whose extra ``timings`` object carries ``cache_n``, ``prompt_n`` and
  ``prompt_ms``);
* :func:`anthropic_completion` reads an Anthropic Messages response.

Usage fields follow the providers' documentation: OpenAI ``usage.prompt_tokens`` (whole prompt)
and ``usage.prompt_tokens_details.cached_tokens``; Anthropic ``usage.input_tokens`` (uncached
part only), ``cache_read_input_tokens`` and ``cache_creation_input_tokens``. A count whose
field is absent (or not a number) is 0 and named in ``ProviderUsage.unreported``: unknown, not
zero.
"""

from __future__ import annotations

import json
from typing import Any

from regio.callargs import INVALID_ARGUMENTS_KEY, function_arguments
from regio.content import Block, Message, Text, Thinking, ToolUse

from ..errors import ProviderResponseError
from ..types import USAGE_COUNTS, Completion, ProviderUsage

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "anthropic_completion",
    "anthropic_usage",
    "openai_chat_completion",
    "openai_usage",
]


def _int(value: Any) -> int:
    return int(value) if _reported(value) else 0


def _reported(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _unreported(usage: dict[str, Any], fields: dict[str, Any]) -> tuple[str, ...]:
    """The counts (of :data:`USAGE_COUNTS`) whose source value in ``fields`` is not a number;
    every count when there is no usage object at all."""
    if not usage:
        return USAGE_COUNTS
    return tuple(name for name, value in fields.items() if not _reported(value))


def openai_usage(
    usage: dict[str, Any] | None, timings: dict[str, Any] | None = None
) -> ProviderUsage:
    """:class:`ProviderUsage` from an OpenAI ``usage`` object (and llama.cpp ``timings``).

    When ``usage.prompt_tokens_details.cached_tokens`` is absent but llama.cpp ``timings``
    are present, ``timings.cache_n`` is the cached count.
    """
    usage = usage or {}
    details = usage.get("prompt_tokens_details") or {}
    cached: Any = details.get("cached_tokens")
    prompt_ms = None
    raw = dict(usage)
    if timings:
        raw["timings"] = dict(timings)
        if cached is None and "cache_n" in timings:
            cached = timings.get("cache_n")
        if isinstance(timings.get("prompt_ms"), (int, float)):
            prompt_ms = float(timings["prompt_ms"])
    prompt, output = usage.get("prompt_tokens"), usage.get("completion_tokens")
    fields = {"prompt_tokens": prompt, "cached_tokens": cached, "output_tokens": output}
    return ProviderUsage(
        prompt_tokens=_int(prompt),
        cached_tokens=_int(cached),
        cache_write_tokens=0,
        output_tokens=_int(output),
        prompt_ms=prompt_ms,
        raw=raw,
        unreported=_unreported(usage, fields),
    )


def openai_chat_completion(data: dict[str, Any]) -> Completion:
    """A :class:`Completion` from a Chat Completions response dict (first choice).

    Raises :class:`ProviderResponseError` when there is no choice or no message.
    """
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict) or "message" not in choices[0]:
        raise ProviderResponseError(
            "the Chat Completions response has no choices[0].message; check the server and "
            "the model name",
            raw=data,
        )
    choice = choices[0]
    message = choice["message"] or {}
    blocks: list[Block] = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        blocks.append(Thinking(reasoning))
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if isinstance(content, str) and content:
        blocks.append(Text(content))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ProviderResponseError(f"tool_calls[{index}] has no function name", raw=data)
        call_id = call.get("id") or f"call_{index}"
        blocks.append(
            ToolUse(
                id=str(call_id),
                name=name,
                input=function_arguments((call.get("function") or {}).get("arguments")),
            )
        )
    timings = data.get("timings") if isinstance(data.get("timings"), dict) else None
    return Completion(
        message=Message("assistant", tuple(blocks)),
        usage=openai_usage(data.get("usage"), timings),
        stop_reason=str(choice.get("finish_reason") or ""),
        model=str(data.get("model") or ""),
        raw=data,
    )


def anthropic_usage(usage: dict[str, Any] | None) -> ProviderUsage:
    """:class:`ProviderUsage` from an Anthropic ``usage`` object.

    prompt = ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` (the
    Messages API reports ``input_tokens`` net of the cache).
    """
    usage = usage or {}
    read = _int(usage.get("cache_read_input_tokens"))
    write = _int(usage.get("cache_creation_input_tokens"))
    plain = _int(usage.get("input_tokens"))
    fields = {
        "prompt_tokens": usage.get("input_tokens"),
        "cached_tokens": usage.get("cache_read_input_tokens"),
        "cache_write_tokens": usage.get("cache_creation_input_tokens"),
        "output_tokens": usage.get("output_tokens"),
    }
    return ProviderUsage(
        prompt_tokens=plain + read + write,
        cached_tokens=read,
        cache_write_tokens=write,
        output_tokens=_int(usage.get("output_tokens")),
        raw=dict(usage),
        unreported=_unreported(usage, fields),
    )


def anthropic_completion(data: dict[str, Any]) -> Completion:
    """A :class:`Completion` from a Messages API response dict.

    Text, ``tool_use`` and ``thinking`` blocks are kept in order (``redacted_thinking`` is kept
    as a thinking block whose signature holds the opaque data). Raises
    :class:`ProviderResponseError` when ``content`` is missing.
    """
    content = data.get("content")
    if not isinstance(content, list):
        raise ProviderResponseError("the Messages response has no content list", raw=data)
    blocks: list[Block] = []
    for index, item in enumerate(content):
        kind = item.get("type")
        if kind == "text":
            if item.get("text"):
                blocks.append(Text(item["text"]))
        elif kind == "tool_use":
            arguments = item.get("input")
            if not isinstance(arguments, dict):
                arguments = {INVALID_ARGUMENTS_KEY: json.dumps(arguments)}
            blocks.append(
                ToolUse(
                    id=str(item.get("id") or f"toolu_{index}"),
                    name=str(item.get("name")),
                    input=arguments,
                )
            )
        elif kind == "thinking":
            blocks.append(Thinking(str(item.get("thinking", "")), str(item.get("signature", ""))))
        elif kind == "redacted_thinking":
            blocks.append(Thinking("", str(item.get("data", ""))))
    return Completion(
        message=Message("assistant", tuple(blocks)),
        usage=anthropic_usage(data.get("usage")),
        stop_reason=str(data.get("stop_reason") or ""),
        model=str(data.get("model") or ""),
        raw=data,
    )
