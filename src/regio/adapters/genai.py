"""``google.genai`` contents <-> regio messages, for the Google ADK callbacks
(:mod:`regio.adapters.google_adk`).

A content's parts (https://ai.google.dev/api/caching#Part): ``text`` parts become text blocks
(``thought`` parts, the model's thinking summaries, are skipped); ``function_call`` /
``function_response`` parts tool calls and their results (a result's text is its response's
``result`` or ``output`` when that is the one string in it, else the response as JSON; its
``parts``' inline data and files are the result's media); ``inline_data`` (bytes) and
``file_data`` (a URI) parts of a user content images (JPEG, PNG, GIF, WebP) or documents (PDF,
plain text), as :class:`regio.media.Image` / :class:`regio.media.Document` blocks in their place.
Any other part (audio, video, executable code, media in a model content) raises
:class:`regio.sdk._objects.SDKInputError` naming the content and the part. Back to the model
(:func:`to_contents`), media are ``inline_data`` / ``file_data`` parts, a result's in the user
turn after the responses (where regio's Chat Completions layout puts them: not every Gemini
model reads media inside a function response).

**Calls without ids.** The Gemini API sends function calls without ids and pairs the responses
with the calls of the model content before them by order and name (ADK gives such calls ids of
its own, ``adk-...``, and strips them again from the contents of every request,
https://google.github.io/adk-docs/). regio needs an id on every call, so :func:`to_regio` gives
each call without one an id (:data:`CLIENT_ID_PREFIX` and a number kept in the adapter's
cursor: unique in the session, accepted by every provider) and each response without one the id
of the open call it answers: the first not yet answered with its function's name, else the
first not yet answered; a response with nothing left to answer gets an id of its own (an
orphaned result, which the window's repair leaves out). :func:`to_contents` sends those ids as
ADK does: not at all.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.genai import types

from regio.content import Block, Document, Image, Message, Text, ToolResult, ToolUse
from regio.media import Base64Source, TextSource, URLSource
from regio.sdk._objects import SDKInputError
from regio.session._state import AdapterCursor

from .chat import chat_messages, content_text

__all__ = ["CLIENT_ID_PREFIX", "to_contents", "to_regio"]

#: The prefix of the ids the adapter gives calls without one: ADK's own (``adk-``), so they
#: are never sent to the model, as ADK never sends its ids.
CLIENT_ID_PREFIX = "adk-regio-"


def _response_text(response: dict[str, Any] | None) -> str:
    """The text of a ``FunctionResponse.response``: its ``result`` (or ``output``) when that is
    the one string in it, else the whole value as JSON."""
    if isinstance(response, dict) and len(response) == 1:
        (value,) = response.values()
        if isinstance(value, str):
            return value
    return json.dumps(response, sort_keys=True, default=str)


def _media(mime: str | None, data: bytes | None, uri: str | None, where: str) -> Image | Document:
    """The image or document block of inline bytes (``data``) or a file URI."""
    mime = (mime or "").lower()
    if uri is not None:
        source = URLSource(uri, mime)
        return Image(source) if mime.startswith("image/") else Document(source)
    raw = data or b""
    if mime.startswith("image/"):
        return Image.from_bytes(raw, mime)
    if mime == "application/pdf":
        return Document.pdf(raw)
    if mime.startswith("text/"):
        return Document.text(raw.decode("utf-8", "replace"))
    raise SDKInputError(
        f"{where}: cannot read inline data of type {mime!r}; regio reads images (JPEG, PNG, GIF, "
        "WebP), PDFs and plain text"
    )


def _part_media(
    part: types.Part | types.FunctionResponsePart, where: str
) -> Image | Document | None:
    """The block of an ``inline_data`` or ``file_data`` part (a ``Part`` or a
    ``FunctionResponsePart``), ``None`` for any other part."""
    if part.inline_data is not None:
        blob = part.inline_data
        return _media(blob.mime_type, blob.data, None, where)
    if part.file_data is not None:
        found = part.file_data
        return _media(found.mime_type, None, found.file_uri or "", where)
    return None


def _new_id(at: AdapterCursor) -> str:
    at.assigned += 1
    return f"{CLIENT_ID_PREFIX}{at.assigned}"


def _answered(at: AdapterCursor, call_id: str | None, name: str | None) -> str:
    """The id of the call a response answers (module doc), taken off ``at.open_calls``."""
    if call_id:
        at.open_calls = [c for c in at.open_calls if c[0] != call_id]
        return call_id
    if not at.open_calls:
        return _new_id(at)
    index = next((i for i, c in enumerate(at.open_calls) if c[1] == name), 0)
    found = at.open_calls.pop(index)
    return found[0]


def _result(answer: types.FunctionResponse, at: AdapterCursor, where: str) -> ToolResult:
    found = (_part_media(p, f"{where}.parts[{n}]") for n, p in enumerate(answer.parts or []))
    media = tuple(m for m in found if m is not None)
    call_id = _answered(at, answer.id, answer.name)
    return ToolResult(call_id, _response_text(answer.response), media=media)


def to_regio(content: types.Content, where: str, at: AdapterCursor) -> list[Message]:
    """The regio messages of one ``google.genai`` content (module doc): a model content's
    text and calls as one assistant message (its calls become ``at.open_calls``); a user
    content's function responses as one tool message each, then its text and media as one user
    message. Raises :class:`SDKInputError` naming ``where`` and the part for a part regio has
    no block for, :class:`regio.media.MediaError` for bad media data."""
    model = content.role == "model"
    blocks: list[Block] = []
    results: list[ToolResult] = []
    calls: list[tuple[str, str]] = []
    for n, part in enumerate(content.parts or []):
        at_part = f"{where}.parts[{n}]"
        if part.thought:
            continue
        if part.text is not None:
            if part.text:
                blocks.append(Text(part.text))
        elif part.function_call is not None:
            call = part.function_call
            call_id = call.id or _new_id(at)
            calls.append((call_id, str(call.name)))
            blocks.append(ToolUse(call_id, str(call.name), dict(call.args or {})))
        elif part.function_response is not None:
            results.append(_result(part.function_response, at, at_part))
        elif not model and (media := _part_media(part, at_part)) is not None:
            blocks.append(media)
        else:
            raise SDKInputError(
                f"{at_part}: cannot read this part; regio reads text, function calls, function "
                "responses, and images and documents (inline data or a file) in a user content"
            )
    if model:
        if calls:
            at.open_calls = calls
        return [Message("assistant", tuple(blocks))] if blocks else []
    out = [Message.tool((r,)) for r in results]
    if blocks:
        out.append(Message("user", tuple(blocks)))
    return out


def _client_id(call_id: str) -> str | None:
    """``call_id`` as sent to the model: ``None`` for an id the model did not make."""
    return None if call_id.startswith("adk-") else call_id


def _media_part(block: Image | Document) -> types.Part:
    source = block.source
    if isinstance(source, URLSource):
        uri = types.FileData(file_uri=source.url, mime_type=source.media_type or None)
        return types.Part(file_data=uri)
    if isinstance(source, TextSource):
        return types.Part(text=source.data)
    assert isinstance(source, Base64Source)
    blob = types.Blob(data=base64.b64decode(source.data), mime_type=source.media_type)
    return types.Part(inline_data=blob)


def _user_parts(message: Message) -> list[types.Part]:
    parts: list[types.Part] = []
    for b in message.blocks:
        if isinstance(b, Text) and b.text:
            parts.append(types.Part(text=b.text))
        elif isinstance(b, Image | Document):
            parts.append(_media_part(b))
    return parts


def to_contents(messages: list[dict[str, Any]]) -> tuple[str, list[types.Content]]:
    """(regio's system text, the window as ``google.genai`` contents) of regio's Chat
    Completions payload: tool results answering one assistant turn join one user content, with
    the user text and media that follow them (the layout's tail, and a result's images and
    documents, which the payload carries in the user message after the results); call ids the
    adapter made are not sent (module doc)."""
    system = "\n\n".join(
        content_text(m.get("content")) for m in messages if m.get("role") == "system"
    )
    names: dict[str, str] = {}
    out: list[types.Content] = []
    for message in chat_messages(messages):
        parts: list[types.Part] = []
        if message.role == "assistant":
            parts = [types.Part(text=b.text) for b in message.blocks if isinstance(b, Text)]
            for call in message.tool_calls:
                names[call.id] = call.name
                fc = types.FunctionCall(
                    id=_client_id(call.id), name=call.name, args=dict(call.input)
                )
                parts.append(types.Part(function_call=fc))
            out.append(types.Content(role="model", parts=parts))
            continue
        for r in message.tool_results:
            answer = types.FunctionResponse(
                id=_client_id(r.tool_use_id),
                name=names.get(r.tool_use_id, "tool"),
                response={"result": r.content},
            )
            parts.append(types.Part(function_response=answer))
        parts.extend(_user_parts(message))
        if out and out[-1].role == "user":  # one user turn: the results, then the tail
            out[-1].parts = [*(out[-1].parts or []), *parts]
        else:
            out.append(types.Content(role="user", parts=parts))
    return system, out
