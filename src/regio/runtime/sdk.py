"""Provider SDK objects in and out of the engine.

Three readers, each taking an SDK object (a pydantic model with ``model_dump``) or the plain
dict of one (``model_dump()`` / the JSON body):

* :func:`response_message` reads a response into a :class:`regio.content.Message` with the
  response reader of the registered provider that recognizes it
  (:class:`regio.providers.ResponseReader`). The built-in ones: an Anthropic Messages
  ``Message`` (``{"type": "message", "content": [...]}``), an OpenAI Chat Completions
  ``ChatCompletion`` (``{"object": "chat.completion", "choices": [...]}``, first choice) or an
  OpenAI Responses ``Response`` (``{"object": "response", "output": [...]}``, read by
  :func:`responses_message`). The first two go through
  :func:`regio.agent.providers.anthropic_completion` /
  :func:`regio.agent.providers.openai_chat_completion` (one converter each, shared with the
  agent loop's providers).
* :func:`tool_specs` reads tool definitions into :class:`regio.layout.ToolSpec`: Anthropic
  ``{"name", "description", "input_schema"}``
  (https://docs.anthropic.com/en/docs/build-with-claude/tool-use), Chat Completions
  ``{"type": "function", "function": {"name", "description", "parameters"}}``
  (https://platform.openai.com/docs/guides/function-calling) and Responses
  ``{"type": "function", "name", "description", "parameters"}``.
* :func:`message_of` (:mod:`regio.runtime.sdk_media`) reads a request-side message of any of
  the three APIs, images and documents included, for :meth:`regio.Engine.add_message`.
* :func:`usage_of` reads a usage report: the SDK's usage object or dict of any registered
  provider's API, or a whole response (its ``usage``), or ``None``.

Anything else raises :class:`SDKInputError` naming the type and the accepted shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from regio.callargs import function_arguments
from regio.content import Block, Message, Text, Thinking, ToolUse
from regio.layout import ToolSpec
from regio.providers.registry import response_reader_for, response_readers, usage_parsers
from regio.responses_items import ToolItemError, call_block, is_call
from regio.textrepair import UnencodableValueError, describe_repairs, repair_value

from .errors import SDKInputError
from .sdk_media import message_of
from .sdk_read import plain_dict

__all__ = [
    "ACCEPTED_RESPONSES",
    "ACCEPTED_TOOLS",
    "ACCEPTED_USAGE",
    "SDKInputError",
    "message_of",
    "response_message",
    "tool_specs",
    "usage_of",
]

ACCEPTED_RESPONSES = (
    "anthropic.types.Message, openai.types.chat.ChatCompletion, "
    "openai.types.responses.Response, or the dict of one (model_dump())"
)
ACCEPTED_TOOLS = (
    "regio.layout.ToolSpec, an Anthropic tool dict {name, description, input_schema}, a Chat "
    "Completions tool {type: 'function', function: {name, description, parameters}} or a "
    "Responses tool {type: 'function', name, description, parameters}"
)
ACCEPTED_USAGE = (
    "None, a usage object or dict of the Anthropic Messages API (input_tokens, "
    "cache_read_input_tokens, ...), Chat Completions (prompt_tokens, completion_tokens) or "
    "Responses (input_tokens, input_tokens_details), or a response carrying one in .usage"
)


def _as_dict(obj: Any, what: str, accepted: str) -> dict[str, Any]:
    out = plain_dict(obj, exclude_none=False)
    if out is None:
        raise SDKInputError(f"{what}: cannot read a {type(obj).__name__}; expected {accepted}")
    return out


def response_message(response: Any) -> tuple[Message, Any]:
    """``(message, usage)`` of an SDK response (module doc): the registered provider whose
    response reader recognizes it reads it (:func:`regio.providers.response_reader_for`);
    ``usage`` is the response's usage report or ``None``. Raises :class:`SDKInputError` for
    another type or shape and :class:`regio.agent.errors.ProviderResponseError` for a response
    without content."""
    data = _as_dict(response, "add_response", ACCEPTED_RESPONSES)
    reader = response_reader_for(data)
    if reader is not None:
        return reader.message(data), data.get(reader.usage_key)
    keys = ", ".join(sorted(data)[:8]) or "no keys"
    accepted = ", ".join(r.describes for r in response_readers())
    raise SDKInputError(
        f"add_response: a {type(response).__name__} with {keys} is not a provider response; "
        f"expected {accepted}, or the dict of one (model_dump())"
    )


def _items(value: Any, where: str) -> list[Any]:
    """``value`` as a list (``[]`` for ``None``), else :class:`SDKInputError` naming
    ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise SDKInputError(f"add_response: {where} is a {type(value).__name__}, not a list")
    return value


def _part(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SDKInputError(f"add_response: {where} is a {type(value).__name__}, not an object")
    return value


def _part_text(value: Any, where: str) -> str:
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
    ``local_shell_call`` items too, keeping their fields (:mod:`regio.responses_items`). Other items
    (built-in tool calls) are skipped. Raises :class:`SDKInputError` naming the place for an
    item or part of the wrong shape (not an object, text that is not a string, a call without
    a name). Source:
    https://platform.openai.com/docs/api-reference/responses/object."""
    blocks: list[Block] = []
    for index, item in enumerate(_items(data.get("output"), "output")):
        blocks.extend(_responses_item(_part(item, f"output[{index}]"), index))
    return Message("assistant", tuple(blocks))


def _encodable(spec: ToolSpec, index: int) -> ToolSpec:
    """``spec`` when every value of it can be sent; a tool definition with a lone surrogate or
    an unsendable number is refused (renaming a tool would break the application's
    dispatch)."""
    try:
        _fixed, repairs = repair_value(spec)
    except UnencodableValueError as exc:
        raise SDKInputError(f"tools[{index}] ({spec.name!r}): {exc}") from exc
    if repairs:
        raise SDKInputError(
            f"tools[{index}]: {describe_repairs(repairs)}: no provider accepts this tool "
            "definition (a lone UTF-16 surrogate has no UTF-8 encoding, and JSON holds no NaN, "
            "infinity or integer past 64 bits); fix it"
        )
    return spec


def _tool(tool: Any, index: int) -> ToolSpec:
    if isinstance(tool, ToolSpec):
        return _encodable(tool, index)
    data = _as_dict(tool, f"tools[{index}]", ACCEPTED_TOOLS)
    if data.get("type") == "function" and isinstance(data.get("function"), Mapping):
        data = dict(data["function"])
    schema = data.get("input_schema", data.get("parameters"))
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise SDKInputError(
            f"tools[{index}]: a {type(tool).__name__} with keys {sorted(data)} has no tool name "
            f"(server tools such as web_search are not supported); expected {ACCEPTED_TOOLS}"
        )
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, Mapping):
        raise SDKInputError(
            f"tools[{index}] ({name!r}): the schema is a {type(schema).__name__}, not a JSON "
            "Schema object"
        )
    spec = ToolSpec(name, str(data.get("description") or ""), dict(schema))
    try:
        spec.validate()
    except ValueError as exc:
        raise SDKInputError(f"tools[{index}]: {exc}") from exc
    return _encodable(spec, index)


def tool_specs(tools: Iterable[Any]) -> tuple[ToolSpec, ...]:
    """The :class:`ToolSpec` of every tool in ``tools`` (module doc). Raises
    :class:`SDKInputError` naming the index for a tool regio cannot read."""
    if isinstance(tools, (str, bytes, Mapping)):
        raise SDKInputError(
            f"tools: expected a list of tools, got a {type(tools).__name__}; wrap one in a list"
        )
    return tuple(_tool(tool, index) for index, tool in enumerate(tools))


def usage_of(usage: Any) -> Any:
    """``usage`` as the engine's usage ledger reads it: ``None``, a dict, or an SDK usage object
    turned into its dict; a whole response gives its usage report (where its provider's
    response reader says it is). Raises :class:`SDKInputError` naming the type otherwise."""
    if usage is None:
        return None
    if not isinstance(usage, Mapping):
        usage = _as_dict(usage, "observe", ACCEPTED_USAGE)
    if not usage or any(k in usage for p in usage_parsers() for k in p.keys):
        return dict(usage)
    reader = response_reader_for(usage)
    inner = usage.get(reader.usage_key if reader is not None else "usage")
    if inner is not None or reader is not None:
        return usage_of(inner)
    raise SDKInputError(
        f"observe: a mapping with keys {sorted(usage)[:8]} is not a usage report; expected "
        f"{ACCEPTED_USAGE}"
    )
