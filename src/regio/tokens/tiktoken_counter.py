"""Exact token counts with tiktoken, from vocabularies bundled offline (:mod:`.vocab`)."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import tiktoken

from .chunking import DEFAULT_MAX_CHUNK_CHARS, MIN_CHUNK_CHARS, iter_chunks, split_for_tokenizer
from .errors import TokenCountError
from .protocol import CachedCounter
from .vocab import ENCODING_NAMES, get_encoding

__all__ = ["TiktokenCounter"]


@attrs.define(eq=False)
class TiktokenCounter(CachedCounter):
    """Counts with tiktoken encoding ``name`` (``o200k_base`` or ``cl100k_base``).

    Text is encoded as ordinary text: special-token strings such as ``<|endoftext|>`` inside
    content are counted as the characters they are, never rejected. The encoding is built on
    first use and shared by every counter of the process. No more than ``max_chunk_chars``
    characters (default :data:`regio.tokens.chunking.DEFAULT_MAX_CHUNK_CHARS`, at least
    :data:`~regio.tokens.chunking.MIN_CHUNK_CHARS`) go to tiktoken at once; longer texts are
    counted in chunks cut where the count stays exact (:mod:`regio.tokens.chunking`), so a
    100 MB string is counted, never a process abort. Raises ``ValueError`` for another name or
    a too-small chunk, :class:`regio.tokens.TokenCountError` if tiktoken still fails.
    """

    max_chunk_chars: int = attrs.field(default=DEFAULT_MAX_CHUNK_CHARS, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.name not in ENCODING_NAMES:
            raise ValueError(
                f"unknown tiktoken encoding {self.name!r}; known: {', '.join(ENCODING_NAMES)}"
            )
        if self.max_chunk_chars < MIN_CHUNK_CHARS:
            raise ValueError(
                f"max_chunk_chars must be at least {MIN_CHUNK_CHARS}, got {self.max_chunk_chars}"
            )
        super().__attrs_post_init__()

    @property
    def encoding(self) -> tiktoken.Encoding:
        """The shared ``tiktoken.Encoding`` (built lazily, offline)."""
        return get_encoding(self.name)

    def _encode_chunk(self, chunk: str) -> list[int]:
        try:
            return self.encoding.encode_ordinary(chunk)
        except BaseException as exc:  # pyo3 PanicException derives from BaseException only
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            raise TokenCountError(
                f"{self.name}: tiktoken failed on a chunk of {len(chunk):,} characters "
                f"({type(exc).__name__}: {exc}); lower max_chunk_chars "
                f"(now {self.max_chunk_chars:,})"
            ) from exc

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (uncached; for cache models that compare token prefixes),
        encoded chunk by chunk like :meth:`count`."""
        chunks, _forced = split_for_tokenizer(text, self.max_chunk_chars)
        ids: list[int] = []
        for chunk in chunks:
            ids.extend(self._encode_chunk(chunk))
        return ids

    def _tokenize(self, text: str) -> int:
        chunks, _forced = split_for_tokenizer(text, self.max_chunk_chars)
        return sum(len(self._encode_chunk(chunk)) for chunk in chunks)

    def _running_counts(self, text: str) -> Iterator[tuple[int, int]]:
        """One running ``(tokens, characters)`` pair per chunk (:func:`iter_chunks`, the
        chunks :meth:`_tokenize` counts, so the last pair is exactly its count)."""
        tokens = chars = 0
        for chunk, _forced in iter_chunks(text, self.max_chunk_chars):
            tokens += len(self._encode_chunk(chunk))
            chars += len(chunk)
            yield tokens, chars
