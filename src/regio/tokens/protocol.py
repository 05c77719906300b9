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

import math
from collections.abc import Iterable, Iterator
from typing import Protocol, runtime_checkable

import attrs

from regio.content import (
    Block,
    Document,
    Entry,
    Image,
    Message,
    ProviderBlock,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
    canonical_json,
)

from .countcache import DEFAULT_CACHE_SIZE, CacheStats, CountCache
from .errors import TokenCountError
from .overhead import ChatFormatOverhead, chat_overhead

__all__ = ["MAX_TOKENS", "PEEK_CHARS", "CachedCounter", "TokenCounter", "count_entry_up_to"]

#: The largest token count regio accepts (a measured size, a usage field): 2**53 - 1, the
#: largest integer every JSON reader holds exactly; windows are six orders of magnitude smaller.
MAX_TOKENS = 2**53 - 1


#: Longest text :meth:`CachedCounter.count_up_to` looks up in the count cache first (1,000,000
#: characters, about 2 ms of hashing); a longer one is counted up to its limit, which is
#: cheaper than hashing it whole (0.6 s for 100 MiB).
PEEK_CHARS = 1_000_000


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

    def _running_counts(self, text: str) -> Iterator[tuple[int, int]]:
        """Running ``(tokens, characters)`` over ``text`` read from its start; the last pair
        is exact, ``(_tokenize(text), len(text))``. This base reads the text at once;
        counters that tokenize in chunks yield one pair per chunk, so :meth:`count_up_to`
        can stop early."""
        yield self._tokenize(text), len(text)

    def count_up_to(self, text: str, limit: int) -> int:
        """Tokens of ``text`` when they are at most ``limit`` (exactly :meth:`count`);
        otherwise some number over ``limit``, found by counting ``text`` from its start and
        stopping at the first chunk that passes ``limit``: the tokens read so far scaled to
        the whole text's length (an estimate, never below ``limit + 1``). A 100 MiB text
        over a limit of 100,000 tokens costs a few chunks, not the whole text. Raises as
        :meth:`count`."""
        if not isinstance(text, str) or not text:
            return self.count(text)
        if len(text) <= PEEK_CHARS:  # hashing a longer text costs more than its first chunks
            cached = self.cache.peek(text)
            if cached is not None:
                return cached
        tokens = chars = 0
        for tokens, chars in self._running_counts(text):
            if tokens > limit and chars < len(text):
                return max(limit + 1, math.ceil(tokens * len(text) / max(chars, 1)))
        self.cache.put(text, tokens)
        return tokens

    def count_entry_up_to(self, entry: Entry, limit: int) -> int:
        """:meth:`count_entry` when the entry has at most ``limit`` tokens; otherwise some
        number over ``limit`` (:meth:`count_up_to`: texts are counted up to what the limit
        leaves, the rest of the entry not at all)."""
        total = self.overhead.message() if entry.role is not None else 0
        for block in entry.blocks:
            if total > limit:
                return total
            if isinstance(block, Text):
                total += self.count_up_to(block.text, limit - total)
            elif isinstance(block, Thinking):
                total += self.count_up_to(block.thinking, limit - total)
            elif isinstance(block, ToolResult) and not block.media:
                total += self.count_up_to(block.content, limit - total)
            else:
                total += self.count_block(block)
        return total

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
        if isinstance(block, ProviderBlock):
            return self.count(canonical_json(block.block).decode())
        if isinstance(block, ToolUse):
            return self.count(block.name) + self.count(canonical_json(block.input).decode())
        if isinstance(block, Image | Document):
            from .media import media_tokens

            return media_tokens(
                block, chat_format=self.overhead.name, model=self.model, count=self.count
            )
        raise TypeError(
            f"cannot count {type(block).__name__}: expected a Text, ToolUse, ToolResult, "
            "Thinking, ProviderBlock, Image or Document block from regio.content"
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


def count_entry_up_to(counter: TokenCounter, entry: Entry, limit: int) -> int:
    """Tokens of ``entry`` by ``counter`` when at most ``limit``, else some number over
    ``limit`` (:meth:`CachedCounter.count_entry_up_to`: regio's counters stop at the first
    chunk past the limit). A counter of another kind (any :class:`TokenCounter`) counts the
    whole entry."""
    capped = getattr(counter, "count_entry_up_to", None)
    if callable(capped):
        return int(capped(entry, limit))
    return int(counter.count_entry(entry))
