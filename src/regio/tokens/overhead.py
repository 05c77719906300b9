"""Per-message token overhead of each chat format, as data.

A chat API wraps every message in format tokens that the message text does not show. The table
:data:`CHAT_FORMATS` holds, per format, the tokens added per message, per ``name`` field and to
prime the reply, with the source of each figure. A provider with a format of its own registers
it with :func:`register_chat_format` (``regio.providers.register_provider`` does, for the
provider's ``chat_overhead``), so counters and saved engines find it by name.
"""

from __future__ import annotations

import msgspec

__all__ = ["CHAT_FORMATS", "ChatFormatOverhead", "chat_overhead", "register_chat_format"]


class ChatFormatOverhead(msgspec.Struct, frozen=True):
    """Hidden tokens of one chat format.

    * ``tokens_per_message``: added to every message (role and delimiters), tokens;
    * ``tokens_per_name``: added when a message carries a ``name`` field, tokens;
    * ``reply_priming``: added once per request (the start of the assistant reply), tokens;
    * ``exact``: ``True`` when the figures are published by the provider, ``False`` for an
      estimate (to be corrected by :class:`regio.tokens.Calibration`);
    * ``source``: where the figures come from.
    """

    name: str
    tokens_per_message: int
    tokens_per_name: int
    reply_priming: int
    exact: bool
    source: str

    def message(self, *, has_name: bool = False) -> int:
        """The overhead of one message, tokens."""
        return self.tokens_per_message + (self.tokens_per_name if has_name else 0)


CHAT_FORMATS: dict[str, ChatFormatOverhead] = {
    "openai_chat": ChatFormatOverhead(
        name="openai_chat",
        tokens_per_message=3,
        tokens_per_name=1,
        reply_priming=3,
        exact=True,
        source=(
            "OpenAI Cookbook, 'How to count tokens with tiktoken', num_tokens_from_messages: "
            "3 tokens per message, 1 per name, every reply primed with "
            "<|start|>assistant<|message|> (3 tokens); gpt-3.5-turbo-0613 and later, gpt-4, gpt-4o"
        ),
    ),
    "anthropic": ChatFormatOverhead(
        name="anthropic",
        tokens_per_message=3,
        tokens_per_name=0,
        reply_priming=3,
        exact=False,
        source=(
            "estimate: Anthropic publishes no per-message figure (its count_tokens endpoint is "
            "authoritative). We assume the turn markers of Claude's prompt format "
            "('\\n\\nHuman:' / '\\n\\nAssistant:', about 3 tokens each); messages have no name "
            "field. Calibration from reported usage corrects the residual error."
        ),
    ),
    "none": ChatFormatOverhead(
        name="none",
        tokens_per_message=0,
        tokens_per_name=0,
        reply_priming=0,
        exact=True,
        source="plain text: no chat wrapping (completion endpoints, summaries placed as text)",
    ),
}


def chat_overhead(format_name: str) -> ChatFormatOverhead:
    """The overhead row of ``format_name``; ``ValueError`` listing the known formats otherwise."""
    try:
        return CHAT_FORMATS[format_name]
    except KeyError:
        raise ValueError(
            f"unknown chat format {format_name!r}; known formats: {', '.join(CHAT_FORMATS)}"
        ) from None


def register_chat_format(overhead: ChatFormatOverhead) -> ChatFormatOverhead:
    """Register ``overhead`` under its ``name`` and return it. A name already registered keeps
    its row when the row is equal; a different row under a known name raises ``ValueError``
    (counters already built with the name would count otherwise than new ones)."""
    known = CHAT_FORMATS.get(overhead.name)
    if known is not None and known != overhead:
        raise ValueError(
            f"chat format {overhead.name!r} is already registered with other figures "
            f"({known.tokens_per_message}/{known.tokens_per_name}/{known.reply_priming}); "
            "give the new format a name of its own"
        )
    CHAT_FORMATS.setdefault(overhead.name, overhead)
    return CHAT_FORMATS[overhead.name]
