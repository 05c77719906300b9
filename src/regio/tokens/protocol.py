"""The :class:`TokenCounter` protocol and the cached base every regio counter builds on.

What each block contributes (the rule every counter follows):

* ``text``: its text;
* ``tool_use``: the tool ``name`` plus the canonical JSON of ``input`` (sorted keys, no spaces,
  :func:`regio.content.canonical_json`);
* ``tool_result``: its ``content`` (structured content is held as its canonical JSON text,
  :class:`regio.content.ToolResult`);
* ``thinking``: its ``thinking`` text (the signature is opaque and not counted);
* ``image`` / ``document``: the provider's documented rule for the counter's chat format and
  ``model`` (:mod:`regio.tokens.media`); a tool result adds its ``media`` to its content, and in
  the ``openai_chat`` format also the wrapper that carries them
  (:func:`regio.tokens.media.chat_media_wrapper_tokens`: a ``tool`` message takes text only,
  so the media travel in one more ``user`` message).

A message adds the per-message overhead of the counter's chat format
(:mod:`regio.tokens.overhead`); an entry with a role counts as a message, an entry without one
(region content placed as text) counts its blocks only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

import attrs

from regio.content import (
    Block,
    Document,
    Entry,
    Image,
    Message,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
    canonical_json,
)

from .countcache import DEFAULT_CACHE_SIZE, CacheStats, CountCache
from .errors import TokenCountError
from .overhead import ChatFormatOverhead, chat_overhead

__all__ = ["CachedCounter", "TokenCounter"]


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that measures content in tokens.

    ``name`` identifies the tokenizer (``o200k_base``, ``cl100k_base``, ``heuristic``, or a
    stub's name). All counts are non-negative ints, in tokens.
    """

    name: str

    def count(self, text: str) -> int:
        """Tokens of ``text``."""
        ...

    def count_blocks(self, blocks: Iterable[Block]) -> int:
        """Tokens of the blocks' content, without message overhead."""
        ...

    def count_message(self, message: Message) -> int:
        """Tokens of the message's blocks plus the chat format's per-message overhead."""
        ...

    def count_entry(self, entry: Entry) -> int:
        """Tokens of an entry: as a message when it has a role, else its blocks."""
        ...


@attrs.define(eq=False)
class CachedCounter:
    """Base of regio's counters: block / message / entry rules plus the count cache.

    Subclasses implement :meth:`_tokenize` (one uncached measurement of a text). ``chat_format``
    picks the overhead row (``openai_chat``, ``anthropic``, ``none``); ``cache_size`` bounds the
    LRU of counts; ``model`` (keyword) picks the OpenAI image rule (``""``: gpt-4o's). Raises
    ``ValueError`` for an unknown chat format.
    """

    name: str
    chat_format: str = attrs.field(default="openai_chat")
    cache_size: int = attrs.field(default=DEFAULT_CACHE_SIZE)
    model: str = attrs.field(default="", kw_only=True)
    cache: CountCache = attrs.field(init=False, repr=False)
    overhead: ChatFormatOverhead = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self.overhead = chat_overhead(self.chat_format)
        self.cache = CountCache(self.cache_size)

    def _tokenize(self, text: str) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def count(self, text: str) -> int:
        """Tokens of ``text``; each distinct text is tokenized once (cache keyed by sha256).

        Raises :class:`regio.tokens.TokenCountError` when ``text`` is not a ``str``."""
        if not isinstance(text, str):
            raise TokenCountError(
                f"{self.name}: can only count text, got {type(text).__name__}; pass "
                "structured content as a ToolResult (kept as its JSON text) or as JSON text"
            )
        if not text:
            return 0
        return self.cache.get_or_count(text, self._tokenize)

    def count_block(self, block: Block) -> int:
        """Tokens of one block (rules in the module docstring)."""
        if isinstance(block, Text):
            return self.count(block.text)
        if isinstance(block, ToolResult):
            n = self.count(block.content) + sum(self.count_block(m) for m in block.media)
            if block.media and self.overhead.name == "openai_chat":
                from .media import chat_media_wrapper_tokens

                n += chat_media_wrapper_tokens(
                    block.tool_use_id, self.count, self.overhead.tokens_per_message
                )
            return n
        if isinstance(block, Thinking):
            return self.count(block.thinking)
        if isinstance(block, ToolUse):
            return self.count(block.name) + self.count(canonical_json(block.input).decode())
        if isinstance(block, Image | Document):
            from .media import media_tokens

            return media_tokens(
                block, chat_format=self.overhead.name, model=self.model, count=self.count
            )
        raise TypeError(
            f"cannot count {type(block).__name__}: expected a Text, ToolUse, ToolResult, "
            "Thinking, Image or Document block from regio.content"
        )

    def count_blocks(self, blocks: Iterable[Block]) -> int:
        """Sum of :meth:`count_block` over ``blocks``."""
        return sum(self.count_block(b) for b in blocks)

    def count_message(self, message: Message, *, has_name: bool = False) -> int:
        """Blocks plus per-message overhead (plus the name overhead when ``has_name``)."""
        return self.count_blocks(message.blocks) + self.overhead.message(has_name=has_name)

    def count_messages(self, messages: Iterable[Message]) -> int:
        """A whole chat request: every message plus the reply priming of the chat format."""
        return sum(self.count_message(m) for m in messages) + self.overhead.reply_priming

    def count_entry(self, entry: Entry) -> int:
        """A conversation entry (role set) as a message, other entries as their blocks."""
        if entry.role is not None:
            return self.count_message(entry.message)
        return self.count_blocks(entry.blocks)

    @property
    def stats(self) -> CacheStats:
        """Statistics of this counter's cache (hits, misses, tokenize calls)."""
        return self.cache.stats
