"""Request-side SDK messages (with images and documents) into :class:`regio.content.Message`.

:func:`message_of` reads one message as an agent already holds it for a provider SDK, an SDK
param object or its dict:

* Anthropic Messages ``{"role": "user" | "assistant", "content": str | [blocks]}`` with
  ``text``, ``image``, ``document``, ``tool_use``, ``tool_result`` (its ``content`` a string or
  text / image / document blocks) and ``thinking`` blocks
  (https://docs.anthropic.com/en/api/messages); ``redacted_thinking`` and server tool blocks
  (:data:`regio.content.ANTHROPIC_PROVIDER_BLOCKS`) are kept as received, as
  :class:`regio.content.ProviderBlock`;
* OpenAI Chat Completions ``{"role": "user" | "assistant" | "tool" | "system", ...}`` with
  ``text``, ``image_url`` and ``file`` parts, ``tool_calls`` and ``tool_call_id``
  (https://platform.openai.com/docs/api-reference/chat/create);
* OpenAI Responses input items: ``{"role": ..., "content": [input_text | input_image |
  input_file]}``, ``function_call`` and ``function_call_output`` (its ``output`` a string or a
  list of those parts) (https://platform.openai.com/docs/api-reference/responses/create).

Images and documents become :class:`regio.media.Image` / :class:`regio.media.Document`
(``data:`` URLs are split into media type and base64 data). Anything else raises
:class:`regio.sdk._objects.SDKInputError` naming the place and the accepted shapes; bad media
data raises :class:`regio.media.MediaError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from regio.callargs import function_arguments
from regio.content import (
    ANTHROPIC_PROVIDER_BLOCKS,
    Block,
    Document,
    Image,
    Message,
    ProviderBlock,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from regio.errors import SDKInputError
from regio.media import Base64Source, TextSource, URLSource

from ._read import plain_dict

__all__ = ["ACCEPTED_MESSAGES", "media_of_part", "message_of"]

ACCEPTED_MESSAGES = (
    "an Anthropic message {role, content}, an OpenAI Chat message {role, content, tool_calls?, "
    "tool_call_id?}, a Responses input item (message, function_call, function_call_output), "
    "or the SDK param object of one"
)


def _error(where: str, what: str) -> Exception:
    return SDKInputError(f"{where}: {what}; expected {ACCEPTED_MESSAGES}")


def _field(data: Mapping[str, Any], key: str, where: str) -> str:
    """The text (or integer id) ``data[key]``; :class:`SDKInputError` naming ``where`` when it
    is missing or of another type."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise _error(where, f"{key!r} is missing or not text (got {type(value).__name__})")
    return str(value)


def _text(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _error(where, f"a {type(value).__name__} where text belongs")
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _error(where, f"a {type(value).__name__} is not an object")
    return value


def _source_of_url(url: str, media_type: str = "") -> Base64Source | URLSource:
    """A ``data:<type>;base64,<data>`` URL as inline bytes, any other URL as a URL source."""
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Base64Source(head or media_type, data)
    return URLSource(url, media_type)


def _anthropic_source(src: object, where: str) -> Base64Source | URLSource | TextSource:
    src = _mapping(src, f"{where}.source")
    kind = src.get("type")
    if kind == "base64":
        return Base64Source(str(src.get("media_type", "")), str(src.get("data", "")))
    if kind == "url":
        return URLSource(str(src.get("url", "")))
    if kind == "text":
        return TextSource(str(src.get("data", "")))
    raise _error(
        where, f"source type {kind!r} is not base64, url or text (file ids need the Files API)"
    )


def media_of_part(part: Mapping[str, Any], where: str) -> Image | Document | None:
    """The image or document of one content part of any of the three APIs, else ``None``."""
    kind = part.get("type")
    if kind == "image":
        src = _anthropic_source(part.get("source") or {}, where)
        if isinstance(src, TextSource):
            raise _error(where, "an image cannot have a text source")
        return Image(src)
    if kind == "document":
        return Document(_anthropic_source(part.get("source") or {}, where), part.get("title"))
    if kind in ("image_url", "input_image"):
        raw = part.get("image_url")
        url = raw.get("url") if isinstance(raw, Mapping) else raw
        detail = (raw.get("detail") if isinstance(raw, Mapping) else None) or part.get("detail")
        if not isinstance(url, str):
            raise _error(where, f"{kind} without an image URL (file ids need the Files API)")
        return Image(_source_of_url(url), detail=detail or "auto")
    if kind in ("file", "input_file"):
        f = part.get("file") if kind == "file" else part
        f = f if isinstance(f, Mapping) else {}
        title = f.get("filename")
        if isinstance(f.get("file_data"), str):
            src = _source_of_url(f["file_data"], "application/pdf")
            if isinstance(src, URLSource):  # bare base64 without a data: prefix
                src = Base64Source("application/pdf", f["file_data"])
            return Document(src, title)
        if isinstance(f.get("file_url"), str):
            return Document(URLSource(f["file_url"]), title)
        raise _error(where, f"{kind} part without file_data or file_url (file ids are not read)")
    return None


def _text_of_part(part: object) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
        return str(part.get("text", ""))
    return None


def _parts(content: object, where: str) -> list[Block]:
    """Text, image and document blocks of a ``content`` string or part list."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content else []
    if not isinstance(content, list | tuple):
        raise _error(where, f"content is a {type(content).__name__}, not text or a list of parts")
    blocks: list[Block] = []
    for n, part in enumerate(content):
        at = f"{where}[{n}]"
        text = _text_of_part(part)
        if text is not None:
            blocks.append(Text(text))
            continue
        if not isinstance(part, Mapping):
            raise _error(at, f"a {type(part).__name__} is not a content part")
        media = media_of_part(part, at)
        if media is None:
            raise _error(at, f"content part type {part.get('type')!r} is not read")
        blocks.append(media)
    return blocks


def _tool_result(call_id: str, content: object, where: str, is_error: bool = False) -> ToolResult:
    blocks = _parts(content, where)
    text = "\n".join(b.text for b in blocks if isinstance(b, Text))
    media = tuple(b for b in blocks if isinstance(b, Image | Document))
    return ToolResult(call_id, text, is_error=is_error, media=media)


def _anthropic_block(part: object, where: str) -> Block:
    part = _mapping(part, where)
    kind = part.get("type")
    if kind == "tool_use":
        arguments = part.get("input") or {}
        return ToolUse(
            _field(part, "id", where),
            _field(part, "name", where),
            dict(arguments) if isinstance(arguments, Mapping) else function_arguments(arguments),
        )
    if kind == "tool_result":
        return _tool_result(
            _field(part, "tool_use_id", where),
            part.get("content"),
            where,
            bool(part.get("is_error")),
        )
    if kind == "thinking":
        return Thinking(_text(part.get("thinking"), where), _text(part.get("signature"), where))
    if isinstance(kind, str) and kind in ANTHROPIC_PROVIDER_BLOCKS:
        return ProviderBlock.received("anthropic", part)
    blocks = _parts([part], where)
    return blocks[0]


def _as_mapping(obj: object) -> dict[str, Any]:
    out = plain_dict(obj, exclude_none=True)
    if out is None:
        raise _error("add_message", f"cannot read a {type(obj).__name__}")
    return out


def message_of(message: object) -> Message:
    """The :class:`Message` of one SDK message or input item (module doc)."""
    data = _as_mapping(message)
    kind = data.get("type")
    if kind == "function_call":
        return Message(
            "assistant",
            (
                ToolUse(
                    _field(data, "call_id", "function_call"),
                    _field(data, "name", "function_call"),
                    function_arguments(data.get("arguments")),
                ),
            ),
        )
    if kind == "function_call_output":
        call_id = _field(data, "call_id", "function_call_output")
        return Message("tool", (_tool_result(call_id, data.get("output"), "output"),))
    role = data.get("role")
    if role not in ("user", "assistant", "system", "tool", "developer"):
        raise _error("add_message", f"a message with role {role!r} and keys {sorted(data)[:6]}")
    if role == "tool":
        return Message(
            "tool", (_tool_result(str(data.get("tool_call_id")), data.get("content"), "content"),)
        )
    content = data.get("content")
    blocks: list[Block] = []
    if isinstance(content, list) and any(
        isinstance(p, Mapping)
        and (
            p.get("type") in ("tool_use", "tool_result", "thinking")
            or (isinstance(p.get("type"), str) and p.get("type") in ANTHROPIC_PROVIDER_BLOCKS)
        )
        for p in content
    ):
        blocks = [_anthropic_block(p, f"content[{n}]") for n, p in enumerate(content)]
    else:
        blocks = _parts(content, "content")
    calls = data.get("tool_calls") or []
    if not isinstance(calls, list | tuple):
        raise _error("tool_calls", f"a {type(calls).__name__} is not a list of calls")
    for n, raw in enumerate(calls):
        call = _mapping(raw, f"tool_calls[{n}]")
        fn = _mapping(call.get("function") or {}, f"tool_calls[{n}].function")
        blocks.append(
            ToolUse(
                _field(call, "id", f"tool_calls[{n}]"),
                _field(fn, "name", f"tool_calls[{n}].function"),
                function_arguments(fn.get("arguments")),
            )
        )
    out_role = "system" if role == "developer" else role
    if out_role == "user" and blocks and all(isinstance(b, ToolResult) for b in blocks):
        out_role = "tool"
    return Message(out_role, tuple(blocks))  # type: ignore[arg-type]
