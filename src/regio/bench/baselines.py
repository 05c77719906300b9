"""The ``recorded`` baseline and the plain request every baseline renders.

A **plain request** is what agent frameworks send: the tool schemas, one system block and the
messages, with one cache breakpoint at the end of the system prompt and one on the last
message block (Anthropic's documented placement for a multi-turn agent: "cache the system
prompt" plus "cache the conversation so far", https://docs.anthropic.com/en/docs/build-with-
claude/prompt-caching; OpenAI caches prefixes automatically and ignores the marks).

``recorded`` (:class:`RecordedBaseline`) is the reference row of every bench table: per model
call of a trace, the request the recorded agent really sent: the trace's own system prompt
and tool schemas, every message recorded before the call untouched, no regions, no capture.
The peers (:mod:`regio.bench.peers`) render their kept messages with the same
:func:`plain_request`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from regio.cache.types import CacheBlock, CacheRequest, Mark
from regio.content import (
    Block,
    Entry,
    Message,
    ToolResult,
    ToolUse,
    block_text,
    canonical_json,
    content_hash,
)

if TYPE_CHECKING:
    from regio.tokens import TokenCounter

__all__ = [
    "MessageCounts",
    "PlainMessage",
    "RecordedBaseline",
    "plain_message",
    "plain_request",
    "split_tokens",
    "tools_text",
]


class MessageCounts:
    """Token counts of messages for one replay (state of that run only): ``count(message)``
    counts with ``counter.count_entry`` once per distinct content (canonical JSON of role and
    blocks), so a message seen by several strategies is counted once."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._seen: dict[bytes, int] = {}

    def __call__(self, message: Message) -> int:
        key = canonical_json([message.role, list(message.blocks)])
        found = self._seen.get(key)
        if found is None:
            entry = Entry(id="", blocks=message.blocks, role=message.role)
            found = int(self.counter.count_entry(entry))
            self._seen[key] = found
        return found


def tools_text(tools: Sequence[Any], count: Callable[[str], int]) -> tuple[str, int]:
    """(canonical JSON of the recorded tool schemas, tokens); ``("", 0)`` without tools."""
    if not tools:
        return "", 0
    text = canonical_json(list(tools)).decode()
    return text, int(count(text))


def split_tokens(tokens: int, blocks: Sequence[Block]) -> list[int]:
    """Share a message's token count over its blocks by text length (the sum is kept), the
    same rule the layout uses."""
    if not blocks:
        return []
    lengths = [max(1, len(block_text(b))) for b in blocks]
    total = sum(lengths)
    out = [tokens * n // total for n in lengths]
    out[-1] += tokens - sum(out)
    return out


def _kind(block: Block) -> Any:
    if isinstance(block, ToolUse):
        return "tool_use"
    if isinstance(block, ToolResult):
        return "tool_result"
    return "text"


class PlainMessage(msgspec.Struct, frozen=True):
    """A message ready for :func:`plain_request`: the message, its tokens and its cache
    blocks (digests of level, role and content, computed once; ``message`` index unset)."""

    message: Message
    tokens: int
    blocks: tuple[CacheBlock, ...]


def plain_message(message: Message, tokens: int) -> PlainMessage:
    """:class:`PlainMessage` of ``message`` (``tokens`` shared over its blocks by length)."""
    blocks = tuple(
        CacheBlock(
            k,
            content_hash(["messages", message.role, block]),
            _kind(block),
            "messages",
            role=message.role,
        )
        for block, k in zip(message.blocks, split_tokens(tokens, message.blocks), strict=True)
    )
    return PlainMessage(message, tokens, blocks)


def plain_request(
    system: tuple[str, int],
    messages: Sequence[PlainMessage],
    *,
    id: str,
    t_start: float,
    t_end: float | None = None,
    output_tokens: int = 0,
    scope: str = "default",
    model: str = "",
    ttl: Mark = "5m",
    tools: tuple[str, int] = ("", 0),
) -> CacheRequest:
    """A plain [tools] + system + messages request: ``tools`` is (canonical JSON of the tool
    schemas, tokens), ``system`` is (text, tokens), ``messages`` are :class:`PlainMessage` s.
    Breakpoints (``ttl``) on the system block and on the last message block. Digests hash
    level, role and content, so equal content gives equal digests."""
    blocks: list[CacheBlock] = []
    if tools[0]:
        blocks.append(CacheBlock(tools[1], content_hash(["tools", tools[0]]), "text", "tools"))
    text, tokens = system
    if text:
        blocks.append(
            CacheBlock(tokens, content_hash(["system", text]), "text", "system", ttl, role="system")
        )
    replace = msgspec.structs.replace
    for index, pm in enumerate(messages):
        blocks.extend(replace(b, message=index) for b in pm.blocks)
    if messages and blocks and blocks[-1].level == "messages":
        blocks[-1] = replace(blocks[-1], mark=ttl)
    return CacheRequest(
        id=id,
        blocks=tuple(blocks),
        scope=scope,
        model=model,
        t_start=t_start,
        t_end=t_end,
        output_tokens=output_tokens,
    )


@attrs.define
class RecordedBaseline:
    """The requests the recorded agent sent (see module doc), built incrementally: feed every
    recorded message with :meth:`add` and the system prompt with :meth:`set_system`;
    :meth:`view` is the (system, messages) of the next model call. ``count`` counts text in
    tokens."""

    count: Any
    system: tuple[str, int] = ("", 0)
    messages: list[PlainMessage] = attrs.field(factory=list)

    def set_system(self, text: str) -> None:
        """The system prompt was set or replaced."""
        self.system = (text, int(self.count(text)) if text else 0)

    def add(self, message: PlainMessage) -> None:
        """A recorded message."""
        self.messages.append(message)

    def view(self) -> tuple[tuple[str, int], list[PlainMessage]]:
        """(system, messages) of the request sent now (the list is a copy)."""
        return self.system, list(self.messages)
