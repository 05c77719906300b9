"""Image and document blocks in each API's shape (used by the Anthropic and OpenAI renderers).

* Anthropic Messages: ``{"type": "image", "source": {...}}`` and ``{"type": "document",
  "source": {...}, "title": ...}`` with ``base64``, ``url`` or ``text`` sources, in user
  messages and inside ``tool_result`` content
  (https://platform.claude.com/docs/en/build-with-claude/vision,
  https://platform.claude.com/docs/en/build-with-claude/pdf-support);
* OpenAI Chat Completions: ``image_url`` parts (a ``data:`` URL for inline bytes) and
  ``file`` parts (``file_data`` data URL) for PDFs. A PDF URL has no Chat form and a plain-text
  document is its text: both become ``text`` parts. ``role: tool`` messages take text only, so
  a tool result's media travel in a ``user`` message placed after the tool messages of that
  turn (:func:`hold_tool_media`), the text part naming where they went
  (https://platform.openai.com/docs/guides/images-vision,
  https://platform.openai.com/docs/guides/pdf-files);
* OpenAI Responses: ``input_image`` (``image_url``, ``detail``) and ``input_file``
  (``file_data`` + ``filename``, or ``file_url``); ``function_call_output`` takes a list of
  those after an ``input_text`` part.
"""

from __future__ import annotations

from typing import Any

from regio.content import Document, Image
from regio.media import Base64Source, TextSource, URLSource, describe
from regio.tokens.media import (
    CHAT_MEDIA_CARRIER_PREFIX,
    CHAT_MEDIA_FOLLOWS,
    chat_media_carrier_text,
)

__all__ = [
    "MEDIA_FOLLOWS",
    "anthropic_media",
    "chat_media_part",
    "hold_tool_media",
    "responses_media_part",
]

#: Appended to a Chat ``tool`` message whose result carried media (they follow as a user turn);
#: defined with the token rule that counts it (:mod:`regio.tokens.media`).
MEDIA_FOLLOWS = CHAT_MEDIA_FOLLOWS


def _filename(doc: Document) -> str:
    title = doc.title or "document"
    return title if title.lower().endswith(".pdf") else f"{title}.pdf"


def anthropic_media(block: Image | Document) -> dict[str, Any]:
    """The Anthropic content block of an image or document."""
    src = block.source
    source: dict[str, Any]
    if isinstance(src, URLSource):
        source = {"type": "url", "url": src.url}
    elif isinstance(block, Document) and block.plain_text() is not None:
        source = {"type": "text", "media_type": "text/plain", "data": block.plain_text()}
    else:
        assert isinstance(src, Base64Source)
        source = {"type": "base64", "media_type": src.media_type, "data": src.data}
    if isinstance(block, Image):
        return {"type": "image", "source": source}
    out: dict[str, Any] = {"type": "document", "source": source}
    if block.title:
        out["title"] = block.title
    return out


def _url_of(src: Base64Source | URLSource | TextSource) -> str:
    return src.url if isinstance(src, URLSource) else src.data_url  # type: ignore[union-attr]


def chat_media_part(block: Image | Document) -> dict[str, Any]:
    """The Chat Completions content part of an image or document (see the module docstring)."""
    if isinstance(block, Image):
        return {
            "type": "image_url",
            "image_url": {"url": _url_of(block.source), "detail": block.detail},
        }
    text = block.plain_text()
    if text is not None:
        head = f"{block.title}\n\n" if block.title else ""
        return {"type": "text", "text": head + text}
    if isinstance(block.source, URLSource):
        return {"type": "text", "text": describe(block)}
    return {
        "type": "file",
        "file": {"filename": _filename(block), "file_data": _url_of(block.source)},
    }


def responses_media_part(block: Image | Document) -> dict[str, Any]:
    """The Responses input content of an image or document (see the module docstring)."""
    if isinstance(block, Image):
        return {"type": "input_image", "image_url": _url_of(block.source), "detail": block.detail}
    text = block.plain_text()
    if text is not None:
        head = f"{block.title}\n\n" if block.title else ""
        return {"type": "input_text", "text": head + text}
    if isinstance(block.source, URLSource):
        return {"type": "input_file", "file_url": block.source.url}
    return {"type": "input_file", "filename": _filename(block), "file_data": _url_of(block.source)}


def _is_media_carrier(msg: dict[str, Any]) -> bool:
    content = msg.get("content")
    return (
        msg.get("role") == "user"
        and isinstance(content, list)
        and bool(content)
        and content[0].get("text", "").startswith(CHAT_MEDIA_CARRIER_PREFIX)
    )


def hold_tool_media(
    messages: list[dict[str, Any]], placed: list[dict[str, Any]], held: list[dict[str, Any]]
) -> None:
    """Place the next Chat ``messages`` after ``placed`` with every tool-media ``user``
    message moved after the run of ``tool`` messages it sits in (a user message between two
    tool messages of one turn breaks the pairing rule): it waits in ``held`` until a message
    that is not a ``tool`` message comes, and is placed before it (order among the carriers
    kept). Called piece by piece over a payload's messages; what is still held after the last
    piece goes last."""
    for msg in messages:
        if _is_media_carrier(msg):
            held.append(msg)
            continue
        if held and msg.get("role") != "tool":
            placed.extend(held)
            held.clear()
        placed.append(msg)


def chat_tool_media(tool_use_id: str, media: tuple[Image | Document, ...]) -> dict[str, Any]:
    """The ``user`` message carrying a tool result's media in Chat Completions."""
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": chat_media_carrier_text(tool_use_id)},
            *(chat_media_part(m) for m in media),
        ],
    }
