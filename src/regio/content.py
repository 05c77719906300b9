"""Content model: blocks, messages and entries.

Everything here is data that travels (saved state, traces, snapshots), so it is made of frozen
msgspec Structs. The vocabulary follows the providers' own terms:

* a **block** is one content unit: :class:`Text`, :class:`ToolUse` (a tool call),
  :class:`ToolResult` (the answer to one call), :class:`Thinking` (opaque reasoning that is
  kept with its assistant turn), an :class:`Image` / :class:`Document` (:mod:`regio.media`;
  in user messages and inside a tool result's ``media``), or a :class:`ProviderBlock` (a
  provider's block regio keeps as received without reading it: Anthropic's
  ``redacted_thinking`` and server tool blocks);
* a **message** is a role plus blocks. regio uses the role ``"tool"`` for a message that carries
  only tool results (OpenAI's ``role: tool``; renderers turn it into an Anthropic ``user``
  message);
* an **entry** is what a region holds: an id, blocks, an optional key, a token count measured
  once, the turn it was written in and the turn group it belongs to;
* a **turn group** (:mod:`regio.turngroups`) is an assistant message with tool calls plus every
  tool result that answers one of its call ids: the unit entries are evicted and compacted in.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from regio.errors import RegioError
from regio.media import ANTHROPIC_MAX_PIXELS, Document, Image, anthropic_image_tokens, describe

__all__ = [
    "PROVIDER_BLOCK_TYPES",
    "RESPONSES_PROVIDER_ITEMS",
    "Block",
    "ContentTypeError",
    "Document",
    "Entry",
    "Image",
    "Message",
    "ProviderBlock",
    "Role",
    "Text",
    "Thinking",
    "ToolResult",
    "ToolUse",
    "block_text",
    "canonical_json",
    "content_hash",
    "split_weight",
]

Role = Literal["system", "user", "assistant", "tool"]


class ContentTypeError(RegioError, TypeError):
    """A block was given a value it cannot hold (the message names the block and the type)."""


class Text(msgspec.Struct, frozen=True, tag="text", tag_field="type"):
    """Plain text."""

    text: str


class ToolUse(msgspec.Struct, frozen=True, tag="tool_use", tag_field="type"):
    """A tool call made by the assistant: call ``id``, tool ``name`` and its JSON ``input``.

    ``item``: for a call the provider sent as an item other than a function call (a Responses
    ``custom_tool_call`` or ``local_shell_call``, :mod:`regio.responses_items`), that item's fields
    as sent, its payload ``null`` (``input`` then holds it); unset for every other call, so
    such a call encodes exactly as before the field existed."""

    id: str
    name: str
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    item: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


class ToolResult(
    msgspec.Struct, frozen=True, tag="tool_result", tag_field="type", omit_defaults=True
):
    """The result of one tool call, answering ``tool_use_id``.

    ``content`` is text; structured content (a dict, list, number, ...) is kept as its
    :func:`canonical_json` text, so it is counted, rendered and saved as that text. ``media``:
    images and documents the tool returned (a screenshot, a PDF), after the text. Raises
    :class:`ContentTypeError` for content that is not JSON-able.

    ``final=False`` marks a **progress report** of a long-running or background call
    (``status: running``, a job id to poll; MCP's ``notifications/progress``,
    https://modelcontextprotocol.io/specification/2025-06-18/basic/utilities/progress): it does
    not answer the call, so the call's turn group stays open (never evicted, compacted or cut)
    until a final result arrives, and the latest result of a call is the one rendered. Read
    it with :attr:`is_final`; the field itself holds ``False`` or ``msgspec.UNSET`` (final),
    so a final result encodes exactly as before the field existed.

    ``item``: for a result the provider sent as a Responses ``custom_tool_call_output`` or
    ``local_shell_call_output`` (:mod:`regio.responses_items`), that item's fields as sent, its
    ``output`` ``null`` (``content`` and ``media`` hold it); unset for every other result.
    """

    tool_use_id: str
    content: str
    is_error: bool = False
    final: bool | msgspec.UnsetType = msgspec.UNSET
    media: tuple[Image | Document, ...] = ()
    item: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET

    @property
    def is_final(self) -> bool:
        """False for a progress report (``final=False``), True for a final result."""
        return self.final is not False

    def __post_init__(self) -> None:
        if self.final is True:
            msgspec.structs.force_setattr(self, "final", msgspec.UNSET)
        elif self.final is not False and self.final is not msgspec.UNSET:
            raise ContentTypeError(
                f"tool_result {self.tool_use_id!r}: final must be true or false, got {self.final!r}"
            )
        if not isinstance(self.content, str):
            try:
                text = canonical_json(self.content).decode()
            except (TypeError, ValueError) as exc:
                raise ContentTypeError(
                    f"tool_result {self.tool_use_id!r}: content of type "
                    f"{type(self.content).__name__} is neither text nor JSON-able ({exc})"
                ) from exc
            msgspec.structs.force_setattr(self, "content", text)


class Thinking(msgspec.Struct, frozen=True, tag="thinking", tag_field="type"):
    """Opaque model reasoning. It is never edited and always stays with its assistant message."""

    thinking: str
    signature: str = ""


#: The Anthropic Messages content block types kept as :class:`ProviderBlock`: the response
#: blocks of the official SDK's ``ContentBlock`` union (``anthropic.types.ContentBlock``,
#: anthropic 2.17) that regio has no type for, plus the MCP connector's blocks
#: (https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector). Each must go back in its
#: assistant message as it came (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#thinking-redaction;
#: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool).
ANTHROPIC_PROVIDER_BLOCKS = frozenset(
    {
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "container_upload",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)


#: The :data:`ANTHROPIC_PROVIDER_BLOCKS` that are tool calls the API runs itself: each is
#: answered by a result block (``tool_use_id``) of the same assistant turn, or left open by a
#: ``pause_turn`` stop (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool;
#: https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector). Their streamed ``input``
#: arrives as ``input_json_delta`` like a client tool call's.
ANTHROPIC_SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})


#: The OpenAI Responses input item types kept as :class:`ProviderBlock`: built-in tool calls
#: that carry their own result, so no other item answers them
#: (https://platform.openai.com/docs/api-reference/responses/create, ``input`` item list).
#: ``image_generation_call`` is not among them: its result is the image's base64 text, which
#: would be counted as text.
RESPONSES_PROVIDER_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "mcp_call",
        "mcp_list_tools",
    }
)
#: The block types kept as received, per API: for Responses also the ``reasoning`` item right
#: before a built-in call, which OpenAI requires with it ("Item 'ws_...' of type
#: 'web_search_call' was provided without its required 'reasoning' item").
PROVIDER_BLOCK_TYPES: dict[str, frozenset[str]] = {
    "anthropic": ANTHROPIC_PROVIDER_BLOCKS,
    "openai_responses": RESPONSES_PROVIDER_ITEMS | {"reasoning"},
}


class ProviderBlock(msgspec.Struct, frozen=True, tag="provider_block", tag_field="type"):
    """A provider's content block that regio keeps without reading it: ``block``, the block as
    received (a JSON object), for the API ``api``: ``"anthropic"`` (its ``type`` one of
    :data:`ANTHROPIC_PROVIDER_BLOCKS`) or ``"openai_responses"`` (an input item, its ``type``
    one of :data:`RESPONSES_PROVIDER_ITEMS`, or the ``reasoning`` item right before one, in an
    assistant message of its own). Like :class:`Thinking` it is never edited and always stays
    with its message (an assistant message, but for Anthropic's ``container_upload``, a user
    one); it is rendered back
    as received into that API's payloads and left out of every other API's. It is counted as
    its JSON text and contributes no text to summaries (a redacted thinking block is encrypted;
    a server tool's result holds encrypted page content). Raises :class:`ContentTypeError` for
    another ``api`` or a block whose ``type`` is not one of its API's."""

    api: str
    block: dict[str, Any]

    def __post_init__(self) -> None:
        kinds = PROVIDER_BLOCK_TYPES.get(self.api)
        if kinds is None:
            raise ContentTypeError(
                f"provider_block: api {self.api!r} is not one of "
                f"{', '.join(repr(a) for a in PROVIDER_BLOCK_TYPES)}"
            )
        kind = self.block.get("type") if isinstance(self.block, dict) else None
        if not isinstance(kind, str) or kind not in kinds:
            raise ContentTypeError(
                f"provider_block: type {kind!r} is not one regio keeps as received for "
                f"{self.api} ({', '.join(sorted(kinds))})"
            )

    @classmethod
    def received(cls, api: str, block: Mapping[str, Any]) -> ProviderBlock:
        """The block ``block`` (a mapping) as a client or the provider sent it, without its
        ``cache_control`` marker: markers are the layout's to place, and a stored marker would
        be sent again after the client moved it (Anthropic takes at most 4)."""
        return cls(api, {k: v for k, v in dict(block).items() if k != "cache_control"})

    @property
    def kind(self) -> str:
        """The block's own ``type`` (``"redacted_thinking"``, ``"server_tool_use"``, ...)."""
        return str(self.block["type"])


Block = Text | ToolUse | ToolResult | Thinking | ProviderBlock | Image | Document


class Message(msgspec.Struct, frozen=True):
    """A role and its blocks.

    ``role`` is ``system``, ``user``, ``assistant`` or ``tool`` (a message holding only
    :class:`ToolResult` blocks).
    """

    role: Role
    blocks: tuple[Block, ...]

    @classmethod
    def user(cls, text: str, media: Sequence[Image | Document] = ()) -> Message:
        """A user message: ``media`` (images, documents) first, as the providers advise,
        then one text block."""
        return cls("user", (*media, Text(text)))

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message with one text block."""
        return cls("system", (Text(text),))

    @classmethod
    def assistant(
        cls,
        text: str = "",
        tool_calls: Sequence[ToolUse] = (),
        thinking: Sequence[Thinking] = (),
    ) -> Message:
        """An assistant message: thinking blocks first, then text (when not empty), then calls."""
        blocks: list[Block] = list(thinking)
        if text:
            blocks.append(Text(text))
        blocks.extend(tool_calls)
        return cls("assistant", tuple(blocks))

    @classmethod
    def tool(cls, results: Sequence[ToolResult]) -> Message:
        """A message carrying tool results only."""
        return cls("tool", tuple(results))

    @property
    def tool_calls(self) -> tuple[ToolUse, ...]:
        """The :class:`ToolUse` blocks of this message, in order."""
        return tuple(b for b in self.blocks if isinstance(b, ToolUse))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """The :class:`ToolResult` blocks of this message, in order."""
        return tuple(b for b in self.blocks if isinstance(b, ToolResult))

    @property
    def text(self) -> str:
        """All text of the message (text blocks and tool result content), joined by newlines."""
        return "\n".join(t for t in (block_text(b) for b in self.blocks) if t)


class Entry(msgspec.Struct, frozen=True):
    """What a region holds.

    * ``id``: unique within the window;
    * ``blocks``: the content;
    * ``role``: set when the entry is a conversation message, else ``None``;
    * ``key``: for keyed regions (and checklist item ids);
    * ``tokens``: the token count, measured once when the entry is made;
    * ``turn``: the turn index it was written in;
    * ``group``: the turn group id (conversation entries), else ``None``;
    * ``meta``: small JSON-able annotations (checklist status, summary coverage, ...).
    """

    id: str
    blocks: tuple[Block, ...]
    role: Role | None = None
    key: str | None = None
    tokens: int = 0
    turn: int = 0
    group: str | None = None
    meta: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def message(self) -> Message:
        """This entry as a message (role ``user`` when the entry has none)."""
        return Message(self.role or "user", self.blocks)

    @property
    def text(self) -> str:
        """All text of the entry joined by newlines."""
        return "\n".join(t for t in (block_text(b) for b in self.blocks) if t)

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of role, key and blocks (not id, tokens or turn)."""
        return content_hash([self.role, self.key, list(self.blocks)])


def block_text(block: Block) -> str:
    """The text a block contributes: text, thinking, tool result content, or the call as JSON
    (a :class:`ProviderBlock` none).

    Images and documents contribute their :func:`regio.media.describe` line (never their
    bytes), a plain-text document its text after that line; a tool result's media follow
    its content."""
    if isinstance(block, Text):
        return block.text
    if isinstance(block, ToolResult):
        if block.media:
            return "\n".join([block.content, *(block_text(m) for m in block.media)])
        return block.content
    if isinstance(block, Thinking):
        return block.thinking
    if isinstance(block, ProviderBlock):
        return ""
    if isinstance(block, Image):
        return describe(block)
    if isinstance(block, Document):
        text = block.plain_text()
        return describe(block) if text is None else f"{describe(block)}\n{text}"
    return f"{block.name}({canonical_json(block.input).decode()})"


_encoder = msgspec.json.Encoder(order="sorted")


def canonical_json(value: object) -> bytes:
    """JSON with sorted keys and no whitespace, so equal values give equal bytes."""
    return _encoder.encode(value)


def content_hash(value: object) -> str:
    """Hex sha256 of :func:`canonical_json` of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def split_weight(block: object) -> int:
    """The share weight of ``block`` when an entry's measured tokens are spread over its
    blocks (characters of its text; an image or document weighs four characters per
    estimated token, so a screenshot beside a caption gets the screenshot's share; a
    :class:`ProviderBlock` weighs the characters of its JSON text)."""
    if isinstance(block, Image):
        if block.width is None or block.height is None:
            return 4 * math.ceil(ANTHROPIC_MAX_PIXELS / 750)
        return 4 * anthropic_image_tokens(block.width, block.height)
    if isinstance(block, Document):
        text = block.plain_text()
        return len(text) if text is not None else 4 * 4600 * (block.pages or 10)
    if isinstance(block, ToolResult) and block.media:
        return len(block.content) + sum(split_weight(m) for m in block.media)
    if isinstance(block, ProviderBlock):  # counted as its JSON text, so weighed by it
        return len(canonical_json(block.block))
    return len(block_text(block))  # type: ignore[arg-type]
