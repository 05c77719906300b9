"""Reading provider responses (as JSON dicts) into regio's content and usage types.

* :func:`openai_chat_completion` reads an OpenAI Chat Completions response (also vLLM and
  llama.cpp server, whose extra ``timings`` object carries ``cache_n``, ``prompt_n`` and
  ``prompt_ms``);
* :func:`anthropic_completion` reads an Anthropic Messages response;
* :func:`responses_message` reads the assistant message of an OpenAI Responses ``Response``.

Usage fields follow the providers' documentation: OpenAI ``usage.prompt_tokens`` (whole prompt)
and ``usage.prompt_tokens_details.cached_tokens``; Anthropic ``usage.input_tokens`` (uncached
part only), ``cache_read_input_tokens`` and ``cache_creation_input_tokens``. A count whose
field is absent (or not a number) is 0 and named in ``ProviderUsage.unreported``: unknown, not
zero.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, TypeGuard

from regio.callargs import INVALID_ARGUMENTS_KEY, function_arguments, invalid_arguments
from regio.content import (
    ANTHROPIC_PROVIDER_BLOCKS,
    Block,
    Message,
    ProviderBlock,
    Text,
    Thinking,
    ToolUse,
)
from regio.errors import ProviderResponseError, SDKInputError
from regio.responses_items import ToolItemError, call_block, is_call

from .completion import USAGE_COUNTS, Completion, ProviderUsage

#: The largest count read from a usage report (2**53 - 1, exact in every JSON reader); a larger
#: or negative one is unreported.
MAX_COUNT = 2**53 - 1

#: The prefix of the ids :func:`legacy_call_id` gives legacy ``function_call`` s.
LEGACY_CALL_PREFIX = "call_legacy_"

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "LEGACY_CALL_PREFIX",
    "anthropic_completion",
    "anthropic_usage",
    "legacy_call_id",
    "openai_chat_completion",
    "openai_usage",
    "responses_message",
]


def _int(value: object) -> int:
    return int(value) if _reported(value) else 0


def _reported(value: object) -> TypeGuard[int | float]:
    """A count a provider reported: a finite, non-negative number (not a bool)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= MAX_COUNT
    )


def _fields(value: object) -> dict[str, Any]:
    """A usage object or one of its ``*_details``: the dict itself, ``{}`` for anything else
    (an absent or malformed object reports nothing; its counts are named unreported)."""
    return value if isinstance(value, dict) else {}


def _object(value: object, where: str, data: dict[str, Any]) -> dict[str, Any]:
    """``value`` when it is a JSON object, else :class:`ProviderResponseError` naming
    ``where``."""
    if not isinstance(value, dict):
        raise ProviderResponseError(
            f"the response's {where} is a {type(value).__name__}, not an object", raw=data
        )
    return value


def _text(value: object, where: str, data: dict[str, Any], default: str = "") -> str:
    """``value`` when it is text (``default`` for ``None``), else
    :class:`ProviderResponseError` naming ``where``."""
    if value is None:
        return default
    if not isinstance(value, str):
        raise ProviderResponseError(
            f"the response's {where} is a {type(value).__name__}, not text", raw=data
        )
    return value


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
    usage = _fields(usage)
    details = _fields(usage.get("prompt_tokens_details"))
    cached: Any = details.get("cached_tokens")
    prompt_ms = None
    raw = dict(usage)
    if timings:
        raw["timings"] = dict(timings)
        if cached is None and "cache_n" in timings:
            cached = timings.get("cache_n")
        if _reported(timings.get("prompt_ms")):
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


def legacy_call_id(data: dict[str, Any], name: str, arguments: object) -> str:
    """The call id given to a Chat Completions legacy ``message.function_call`` (which has
    none): ``call_legacy_`` and 24 hex digits of the sha256 of the response's ``id`` and
    ``created`` and the call's name and arguments, so the same response always gives the same
    id, and the id is valid in every API (Anthropic's ``tool_use.id`` is ``[A-Za-z0-9_-]+``).
    Answer the call with this id (``Engine.add_tool_result(entry.blocks[-1].id, ...)``)."""
    try:
        seed = json.dumps([data.get("id"), data.get("created"), name, arguments], default=str)
    except (ValueError, RecursionError):  # arguments nested past the stack
        seed = json.dumps([data.get("id"), data.get("created"), name], default=str)
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{LEGACY_CALL_PREFIX}{digest}"


def _chat_content(content: object, data: dict[str, Any]) -> str:
    """The text of a Chat Completions ``message.content``: a string, or the text of its
    parts (some servers return a part list)."""
    if isinstance(content, list):
        texts = []
        for n, part in enumerate(content):
            part = _object(part, f"choices[0].message.content[{n}]", data)
            texts.append(_text(part.get("text"), f"choices[0].message.content[{n}].text", data))
        return "".join(texts)
    return _text(content, "choices[0].message.content", data)


def _name(value: object, missing: str, data: dict[str, Any]) -> str:
    """A tool call's name; :class:`ProviderResponseError` ``missing`` when absent or not text."""
    if not isinstance(value, str) or not value:
        raise ProviderResponseError(missing, raw=data)
    return value


def _call_id(value: object, default: str, where: str, data: dict[str, Any]) -> str:
    """A tool call's id as text (``default`` when absent); :class:`ProviderResponseError` for
    an id that is neither text nor a number."""
    value = value or default
    if not isinstance(value, str | int):
        raise ProviderResponseError(f"{where}.id is a {type(value).__name__}", raw=data)
    return str(value)


def _chat_call(call: object, index: int, data: dict[str, Any]) -> ToolUse:
    where = f"choices[0].message.tool_calls[{index}]"
    call = _object(call, where, data)
    function = _object(call.get("function") or {}, f"{where}.function", data)
    name = _name(function.get("name"), f"tool_calls[{index}] has no function name", data)
    call_id = _call_id(call.get("id"), f"call_{index}", where, data)
    return ToolUse(id=call_id, name=name, input=function_arguments(function.get("arguments")))


def openai_chat_completion(data: dict[str, Any]) -> Completion:
    """A :class:`Completion` from a Chat Completions response dict (first choice).

    ``reasoning_content`` (DeepSeek, vLLM) becomes thinking, ``content`` text, ``tool_calls``
    tool calls, and a legacy ``function_call`` (the deprecated single-call form some servers
    still send) a tool call with the id :func:`legacy_call_id`. Raises
    :class:`ProviderResponseError` naming the place when there is no choice or no message, or a
    part of it has the wrong shape (a part or call that is not an object, text that is not a
    string, a call without a function name).
    """
    choices = data.get("choices") or []
    if (
        not isinstance(choices, list)
        or not choices
        or not isinstance(choices[0], dict)
        or "message" not in choices[0]
    ):
        raise ProviderResponseError(
            "the Chat Completions response has no choices[0].message; check the server and "
            "the model name",
            raw=data,
        )
    choice = choices[0]
    message = _object(choice["message"] or {}, "choices[0].message", data)
    blocks: list[Block] = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        blocks.append(Thinking(reasoning))
    content = _chat_content(message.get("content"), data)
    if content:
        blocks.append(Text(content))
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ProviderResponseError(
            f"the response's choices[0].message.tool_calls is a {type(calls).__name__}, not a list",
            raw=data,
        )
    blocks.extend(_chat_call(call, index, data) for index, call in enumerate(calls))
    legacy = message.get("function_call")
    if legacy is not None:
        legacy = _object(legacy, "choices[0].message.function_call", data)
        name = _name(legacy.get("name"), "function_call has no function name", data)
        arguments = legacy.get("arguments")
        blocks.append(
            ToolUse(legacy_call_id(data, name, arguments), name, function_arguments(arguments))
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
    usage = _fields(usage)
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


def _anthropic_block(item: object, index: int, data: dict[str, Any]) -> Block | None:
    """The block of ``content[index]`` (``None`` for an empty text or a type regio does not
    keep); ``redacted_thinking`` and server tool blocks as received (:class:`ProviderBlock`)."""
    where = f"content[{index}]"
    item = _object(item, where, data)
    kind = item.get("type")
    if kind == "text":
        text = _text(item.get("text"), f"{where}.text", data)
        return Text(text) if text else None
    if kind == "tool_use":
        arguments = item.get("input")
        if not isinstance(arguments, dict):
            try:
                arguments = {INVALID_ARGUMENTS_KEY: json.dumps(arguments, default=str)}
            except (ValueError, RecursionError):  # nested past the stack, a circular list
                arguments = invalid_arguments(arguments)
        name = _name(item.get("name"), f"{where} (tool_use) has no name", data)
        call_id = _call_id(item.get("id"), f"toolu_{index}", where, data)
        return ToolUse(id=call_id, name=name, input=arguments)
    if kind == "thinking":
        return Thinking(
            _text(item.get("thinking"), f"{where}.thinking", data),
            _text(item.get("signature"), f"{where}.signature", data),
        )
    if isinstance(kind, str) and kind in ANTHROPIC_PROVIDER_BLOCKS:
        return ProviderBlock.received("anthropic", item)
    return None


def anthropic_completion(data: dict[str, Any]) -> Completion:
    """A :class:`Completion` from a Messages API response dict.

    Text, ``tool_use`` and ``thinking`` blocks are kept in order, and so are
    ``redacted_thinking`` and server tool blocks, as received (:class:`ProviderBlock`). Raises
    :class:`ProviderResponseError` when ``content`` is missing or a block has the wrong shape
    (not an object, text that is not a string, a ``tool_use`` without a name), naming it.
    """
    content = data.get("content")
    if not isinstance(content, list):
        raise ProviderResponseError("the Messages response has no content list", raw=data)
    blocks = [_anthropic_block(item, index, data) for index, item in enumerate(content)]
    return Completion(
        message=Message("assistant", tuple(b for b in blocks if b is not None)),
        usage=anthropic_usage(data.get("usage")),
        stop_reason=str(data.get("stop_reason") or ""),
        model=str(data.get("model") or ""),
        raw=data,
    )


def _items(value: object, where: str) -> list[Any]:
    """``value`` as a list (``[]`` for ``None``), else :class:`SDKInputError` naming
    ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise SDKInputError(f"add_response: {where} is a {type(value).__name__}, not a list")
    return value


def _part(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SDKInputError(f"add_response: {where} is a {type(value).__name__}, not an object")
    return value


def _part_text(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SDKInputError(f"add_response: {where} is a {type(value).__name__}, not text")
    return value


def _responses_item(item: dict[str, Any], index: int) -> list[Block]:
    """The blocks of ``output[index]`` (module doc of :func:`responses_message`)."""
    where = f"output[{index}]"
    kind = item.get("type")
    if kind == "reasoning":
        parts = _items(item.get("summary"), f"{where}.summary")
        summary = "".join(
            _part_text(_part(s, f"{where}.summary[{n}]").get("text"), f"{where}.summary[{n}]")
            for n, s in enumerate(parts)
        )
        return [Thinking(summary)] if summary else []
    if kind == "message":
        blocks: list[Block] = []
        for n, raw in enumerate(_items(item.get("content"), f"{where}.content")):
            part = _part(raw, f"{where}.content[{n}]")
            field = {"output_text": "text", "refusal": "refusal"}.get(str(part.get("type")))
            text = _part_text(part.get(field), f"{where}.content[{n}].{field}") if field else ""
            if text:
                blocks.append(Text(text))
        return blocks
    if kind == "function_call":
        call_id = item.get("call_id") or item.get("id") or f"call_{index}"
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise SDKInputError(f"add_response: {where} (function_call) has no name")
        if not isinstance(call_id, str | int):
            raise SDKInputError(f"add_response: {where}.call_id is a {type(call_id).__name__}")
        return [ToolUse(str(call_id), name, function_arguments(item.get("arguments")))]
    if is_call(kind):
        try:
            return [call_block(item, where)]
        except ToolItemError as exc:
            raise SDKInputError(f"add_response: {exc}") from exc
    return []


def responses_message(data: dict[str, Any]) -> Message:
    """The assistant :class:`Message` of a Responses API ``Response`` dict: ``reasoning`` items
    become thinking (their summary text), ``message`` items text (``output_text`` parts; a
    ``refusal`` part is kept as text), ``function_call`` items tool_use blocks (``call_id``
    is the id a ``function_call_output`` answers), ``custom_tool_call`` and
    ``local_shell_call`` items too, keeping their fields (:mod:`regio.responses_items`). Other
    items (built-in tool calls) are skipped. Raises :class:`SDKInputError` naming the place for
    an item or part of the wrong shape (not an object, text that is not a string, a call
    without a name). Source:
    https://platform.openai.com/docs/api-reference/responses/object."""
    blocks: list[Block] = []
    for index, item in enumerate(_items(data.get("output"), "output")):
        blocks.extend(_responses_item(_part(item, f"output[{index}]"), index))
    return Message("assistant", tuple(blocks))
