"""Exact token counts with tiktoken, from vocabularies bundled offline (:mod:`.vocab`)."""

from __future__ import annotations

import attrs
import tiktoken

from .protocol import CachedCounter
from .vocab import ENCODING_NAMES, get_encoding

__all__ = ["TiktokenCounter"]


@attrs.define(eq=False)
class TiktokenCounter(CachedCounter):
    """Counts with tiktoken encoding ``name`` (``o200k_base`` or ``cl100k_base``).

    Text is encoded as ordinary text: special-token strings such as ``<|endoftext|>`` inside
    content are counted as the characters they are, never rejected. The encoding is built on
    first use and shared by every counter of the process. Raises ``ValueError`` for another name.
    """

    def __attrs_post_init__(self) -> None:
        if self.name not in ENCODING_NAMES:
            raise ValueError(
                f"unknown tiktoken encoding {self.name!r}; known: {', '.join(ENCODING_NAMES)}"
            )
        super().__attrs_post_init__()

    @property
    def encoding(self) -> tiktoken.Encoding:
        """The shared ``tiktoken.Encoding`` (built lazily, offline)."""
        return get_encoding(self.name)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (uncached; for cache models that compare token prefixes)."""
        return self.encoding.encode_ordinary(text)

    def _tokenize(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))
