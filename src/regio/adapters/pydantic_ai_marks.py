"""regio's Anthropic window as pydantic-ai messages, its cache marks as pydantic-ai's own
(extra ``regio[pydantic-ai]``).

For a model pydantic-ai sends to Anthropic's Messages API (``AnthropicModel``: the agent's
``"anthropic:..."`` models, also through a ``WrapperModel`` such as instrumentation;
:func:`anthropic_bound`) :class:`regio.adapters.pydantic_ai.RegioCapability` lays the window
out as regio's Anthropic payload and hands it to pydantic-ai with every ``cache_control`` mark
the layout planned in pydantic-ai's own terms (``CachePoint``, ``AnthropicModelSettings``:
https://ai.pydantic.dev/api/messages/), so the marks reach the HTTP request
(:func:`marked_window`):

* **a mark in the conversation** becomes a ``CachePoint`` in a ``UserPromptPart``: after the
  text, image or document it marks; at the start of the message's user content for a mark on
  its last ``tool_result`` (pydantic-ai sends a request's tool results first and attaches a
  ``CachePoint`` to the block before it). A mark on an earlier result of the same message goes
  to its last result: consecutive ``tool_result`` blocks are one position of Anthropic's
  20-block lookback (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching), so
  the cached prefix ends at the same place for a later read. A mark on a block of an assistant
  message goes to the end of that message, or, when tool results answer it, to the last of
  them (a pydantic-ai response carries no marks);
* **a mark in the system prompt** becomes the ``anthropic_cache_instructions`` setting (its
  TTL): pydantic-ai sends the system prompt (the agent's ``system_prompt`` and regio's pinned
  regions) as one block and marks the end of it, or of the agent's static ``instructions``
  after it. Several marks regio planned inside the system prompt become that one;
* pydantic-ai's other cache settings (``anthropic_cache``, ``anthropic_cache_messages``,
  ``anthropic_cache_tool_definitions``, and the unified ``cache`` they take precedence over) are
  turned off for the request (:func:`cache_settings`): they would add marks the layout did not
  plan and push planned ones out of Anthropic's four (pydantic-ai drops the oldest message
  marks past four). A system mark covers the tools before it.

A mark regio planned on one of its own tool definitions (its context tools, which pydantic-ai
does not send) has nowhere to go and is left out.

Anthropic refuses a tool id outside ``^[a-zA-Z0-9_-]+$`` (a 400, "String should match
pattern"), and pydantic-ai sends ids as they are: an id minted by another provider, or one the
history repair renamed (``<id>~<n>``), goes out as :func:`anthropic_tool_id` of it, the same for
the call and its result, and the same on every request (so the cached prefix holds).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import (
    BinaryContent,
    CachePoint,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from regio.content import Block, Document, Image, Text, ToolResult, ToolUse
from regio.media import Base64Source, TextSource, URLSource
from regio.sdk._media import message_of

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.models.anthropic import AnthropicModelSettings
    from pydantic_ai.settings import ModelSettings

    from regio.layout.model import Ttl

__all__ = [
    "CACHE_SETTINGS",
    "REGIO_SYSTEM",
    "anthropic_bound",
    "anthropic_tool_id",
    "cache_settings",
    "marked_window",
    "user_item",
]

#: ``SystemPromptPart.metadata`` of the system part the adapters build: a history that carries
#: an earlier window (as :class:`regio.adapters.pydantic_ai.RegioHistory` leaves it) is not read
#: as the agent's prompt.
REGIO_SYSTEM = {"regio": "window"}

#: The ``AnthropicModelSettings`` keys :func:`cache_settings` sets (pydantic-ai's own marks).
CACHE_SETTINGS = (
    "anthropic_cache",
    "anthropic_cache_messages",
    "anthropic_cache_tool_definitions",
    "anthropic_cache_instructions",
)


_OUTSIDE_TOOL_ID = re.compile(r"[^a-zA-Z0-9_-]")


def anthropic_tool_id(tool_id: str) -> str:
    """``tool_id`` as Anthropic accepts it (module doc): unchanged when it matches
    ``^[a-zA-Z0-9_-]+$``, else each other character replaced by ``_`` and ``_`` plus the first
    8 hex digits of the id's sha256 appended (two ids never become one)."""
    if tool_id and not _OUTSIDE_TOOL_ID.search(tool_id):
        return tool_id
    digest = hashlib.sha256(tool_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_OUTSIDE_TOOL_ID.sub('_', tool_id)}_{digest}"


def anthropic_bound(model: Model) -> bool:
    """Whether pydantic-ai sends ``model``'s requests to Anthropic's Messages API: a class of
    ``pydantic_ai.models.anthropic`` (``AnthropicModel``, whichever provider's client it talks
    through: Anthropic's API, Bedrock, Vertex AI, a gateway), or a ``system`` of
    ``"anthropic"``; looked up through ``WrapperModel`` s (``wrapped``)."""
    for _ in range(8):
        inner = getattr(model, "wrapped", None)
        if inner is None:
            break
        model = inner
    modules = (c.__module__ for c in type(model).__mro__)
    if any(m.startswith("pydantic_ai.models.anthropic") for m in modules):
        return True
    try:
        return getattr(model, "system", None) == "anthropic"
    except Exception:  # a model whose system property needs configuration
        return False


def user_item(block: Block) -> Any:
    """The pydantic-ai user content item of a regio text, image or document block (``None``
    for empty text and for any other block): a ``str``, an ``ImageUrl`` / ``DocumentUrl``, or
    ``BinaryContent`` with the inline bytes."""
    if isinstance(block, Text):
        return block.text or None
    if not isinstance(block, Image | Document):
        return None
    if isinstance(block.source, URLSource):
        kind = ImageUrl if isinstance(block, Image) else DocumentUrl
        return kind(block.source.url, media_type=block.source.media_type or None)
    title = block.title if isinstance(block, Document) else None
    if isinstance(block.source, Base64Source):
        data = base64.b64decode(block.source.data)
        return BinaryContent(data, media_type=block.source.media_type, identifier=title)
    if isinstance(block.source, TextSource):  # a plain-text document
        data = block.source.data.encode("utf-8", "replace")
        return BinaryContent(data, media_type="text/plain", identifier=title)
    return None


def _ttl(block: Mapping[str, Any]) -> Ttl | None:
    """The TTL of ``block``'s ``cache_control`` mark (``5m`` unless it says ``1h``), ``None``
    when it has none."""
    mark = block.get("cache_control")
    if not isinstance(mark, Mapping):
        return None
    return "1h" if mark.get("ttl") == "1h" else "5m"


def _longest(*ttls: Ttl | None) -> Ttl | None:
    """The longest of ``ttls`` (``None`` when all are): one mark standing for several keeps
    the longest, as Anthropic wants longer TTLs first."""
    marks = [t for t in ttls if t is not None]
    return ("1h" if "1h" in marks else "5m") if marks else None


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(b) for b in content or []]


def _return_part(result: ToolResult, name: str) -> ToolReturnPart:
    """A ``ToolReturnPart`` of a regio result: its text, with its images and documents."""
    media = [item for item in (user_item(m) for m in result.media) if item is not None]
    content: Any = [result.content, *media] if media else result.content
    return ToolReturnPart(name, content, tool_call_id=anthropic_tool_id(result.tool_use_id))


class _Builder:
    """The pydantic-ai messages of one Anthropic payload, built message by message."""

    def __init__(self, system: str) -> None:
        self.out: list[ModelMessage] = []
        self.request: list[Any] = []
        if system:
            self.request.append(SystemPromptPart(system, metadata=dict(REGIO_SYSTEM)))
        self.names: dict[str, str] = {}
        self.carried: Ttl | None = None  # a mark of the assistant message before

    def assistant(self, blocks: list[dict[str, Any]]) -> None:
        if self.request:
            self.out.append(ModelRequest(parts=self.request))
            self.request = []
        parts: list[Any] = []
        for b in message_of({"role": "assistant", "content": blocks}).blocks:
            if isinstance(b, Text) and b.text:
                parts.append(TextPart(b.text))
            elif isinstance(b, ToolUse):
                self.names[b.id] = b.name
                call_id = anthropic_tool_id(b.id)
                parts.append(ToolCallPart(b.name, json.dumps(b.input), tool_call_id=call_id))
        self.out.append(ModelResponse(parts=parts))
        self.carried = _longest(*(_ttl(b) for b in blocks))

    def user(self, blocks: list[dict[str, Any]]) -> None:
        regio_blocks = message_of({"role": "user", "content": blocks}).blocks
        returns: list[ToolReturnPart] = []
        items: list[Any] = []
        lead = self.carried  # lands on the last result, or the assistant's last block
        self.carried = None
        for raw, block in zip(blocks, regio_blocks, strict=True):
            ttl = _ttl(raw)
            if isinstance(block, ToolResult):
                returns.append(_return_part(block, self.names.get(block.tool_use_id, "tool")))
                lead = _longest(lead, ttl)
                continue
            item = user_item(block)
            if item is not None:
                items.append(item)
            if ttl is not None and items:
                items.append(CachePoint(ttl=ttl))
        if lead is not None and (returns or self.out):
            items.insert(0, CachePoint(ttl=lead))
        self.request.extend(returns)
        if items:
            self.request.append(UserPromptPart(items))

    def finish(self) -> list[ModelMessage]:
        if self.request:
            self.out.append(ModelRequest(parts=self.request))
            self.request = []
        return self.out


def marked_window(
    body: Mapping[str, Any], caller: str = ""
) -> tuple[list[ModelMessage], Ttl | None]:
    """(pydantic-ai messages of regio's Anthropic payload ``body``, the TTL of the system
    prompt's mark or ``None``) (module doc): the caller's system text and regio's system blocks
    in one ``SystemPromptPart`` (joined by a blank line), tool results as ``ToolReturnPart`` s,
    every message mark as a ``CachePoint``. Raises
    :class:`regio.sdk._objects.SDKInputError` for a block regio cannot read."""
    system_blocks = [dict(b) for b in body.get("system") or []]
    texts = [str(b.get("text") or "") for b in system_blocks]
    builder = _Builder("\n\n".join(t for t in (caller, *texts) if t))
    for message in body.get("messages") or []:
        if message.get("role") == "assistant":
            builder.assistant(_blocks(message))
        else:
            builder.user(_blocks(message))
    return builder.finish(), _longest(*(_ttl(b) for b in system_blocks))


def cache_settings(
    settings: ModelSettings | None, system_ttl: Ttl | None
) -> AnthropicModelSettings:
    """``settings`` with pydantic-ai's Anthropic cache settings set for regio's marks (module
    doc): ``anthropic_cache_instructions`` the system prompt's TTL (``False`` without a system
    mark), the other :data:`CACHE_SETTINGS` off."""
    return {
        **(settings or {}),
        "anthropic_cache": False,
        "anthropic_cache_messages": False,
        "anthropic_cache_tool_definitions": False,
        "anthropic_cache_instructions": system_ttl or False,
    }
