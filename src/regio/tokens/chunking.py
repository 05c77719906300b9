"""Handing long texts to a tokenizer in bounded chunks.

tiktoken's pre-tokenizer is a backtracking regex: on one very long run of similar characters
(a million spaces, say) it fails with a Rust panic (``RuntimeError(StackOverflow)``, raised as
``pyo3_runtime.PanicException``, which ``except Exception`` does not catch) and on a 100 MB
string it can take minutes and gigabytes. So no text longer than ``max_chars`` characters is
ever handed to the tokenizer at once (:data:`DEFAULT_MAX_CHUNK_CHARS`, configurable per counter).

Where the chunks are cut (:func:`split_for_tokenizer`):

* **Safe cuts** (the count stays exact): between a letter or digit (Unicode category ``L*`` or
  ``N*``) and a following character that is none of a letter, digit, combining mark (``M*``),
  unassigned code point or the ASCII apostrophe (a space, newline, punctuation, symbol, ...).
  Both bundled encodings (``o200k_base``, ``cl100k_base``) pre-tokenize so that no piece
  crosses such a point, their patterns have no look-behind, and the only look-ahead
  (``\\s+(?!\\S)``) and end anchor (``\\s++$``) concern whitespace at the very end of the
  first part, which a cut after a letter or digit never leaves. Each chunk therefore splits
  into exactly the pieces the whole text splits into, and BPE runs per piece: the sum of the
  chunk counts is the count of the text.
  The latest safe cut inside the chunk is used, so chunks stay close to ``max_chars``.
* **Forced cuts**: a run of ``max_chars`` characters with no safe cut (one huge word, a long
  run of spaces or of punctuation, CJK text without punctuation) is cut at ``max_chars``. A
  forced cut splits one pre-tokenizer piece in two, and BPE of the two halves can differ from
  BPE of the whole piece. Measured: at most 5 tokens per forced cut (a run of one punctuation
  character, ``"/" * 60`` cut at 31 characters: 6 tokens instead of 1), over 80,000 random
  texts of letters, digits, whitespace, punctuation, CJK, marks and emoji with chunks of 16-40
  characters; the property test
  ``test_property_a_forced_cut_changes_the_count_by_at_most_eight_tokens`` keeps checking the
  documented bound of 8. With the default chunk this is a few tokens per 100,000 characters.
  :func:`split_for_tokenizer` reports the number of forced cuts, so a caller can state its
  error bound (8 x forced cuts).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = ["DEFAULT_MAX_CHUNK_CHARS", "MIN_CHUNK_CHARS", "iter_chunks", "split_for_tokenizer"]

#: Most characters handed to the tokenizer at once. tiktoken 0.14 panics on runs of about
#: 1,000,000 spaces (its regex backtracking limit) and passes at 500,000: 100,000 keeps a 5x
#: margin, and one chunk of 100,000 characters encodes in well under 0.1 s.
DEFAULT_MAX_CHUNK_CHARS = 100_000

#: The smallest accepted ``max_chars`` (a chunk must hold a few pieces to stay exact).
MIN_CHUNK_CHARS = 16

# candidate pairs: a word character (not "_") then a non-word character other than "'";
# unicodedata confirms the categories (Python's \w is wider than \p{L} | \p{N}).
_CANDIDATE = re.compile(r"[^\W_](?=[^\w']|_)")
_SEARCH_WINDOWS = (64, 1024, 16_384)


def _safe_cut(text: str, cut: int) -> bool:
    """True when cutting ``text`` before index ``cut`` keeps the tokenizer's pieces."""
    before, after = text[cut - 1], text[cut]
    if unicodedata.category(before)[0] not in "LN":
        return False
    kind = unicodedata.category(after)
    return after != "'" and kind[0] not in "LNM" and kind not in ("Cn", "Cs")


def _last_safe_cut(text: str, start: int, end: int) -> int | None:
    """The largest safe cut index ``c`` with ``start < c <= end`` (``end < len(text)``)."""
    windows = [w for w in _SEARCH_WINDOWS if w < end - start] + [end - start]
    for width in windows:
        lo = end - width
        found = None
        for match in _CANDIDATE.finditer(text, lo, end + 1):
            cut = match.end()
            if lo < cut <= end and cut > start and _safe_cut(text, cut):
                found = cut
        if found is not None:
            return found
    return None


def iter_chunks(text: str, max_chars: int = DEFAULT_MAX_CHUNK_CHARS) -> Iterator[tuple[str, bool]]:
    """The chunks of :func:`split_for_tokenizer`, one at a time, each with whether the cut
    that ends it was forced (module doc), so a caller can stop early (a count up to a limit,
    :meth:`regio.tokens.CachedCounter.count_up_to`) without cutting the rest of the text.
    Raises ``ValueError`` when ``max_chars`` is below :data:`MIN_CHUNK_CHARS`."""
    if max_chars < MIN_CHUNK_CHARS:
        raise ValueError(
            f"max_chars must be at least {MIN_CHUNK_CHARS} characters, got {max_chars}"
        )
    start = 0
    while len(text) - start > max_chars:
        end = start + max_chars
        cut = _last_safe_cut(text, start, end)
        forced = cut is None
        if cut is None:
            cut = end
        yield text[start:cut], forced
        start = cut
    yield text[start:], False


def split_for_tokenizer(
    text: str, max_chars: int = DEFAULT_MAX_CHUNK_CHARS
) -> tuple[list[str], int]:
    """``text`` cut into chunks of at most ``max_chars`` characters (module doc).

    Returns ``(chunks, forced_cuts)``: ``"".join(chunks) == text``; ``forced_cuts`` counts the
    cuts that were not safe (each may change a count by a few tokens). A text of at most
    ``max_chars`` characters is one chunk. Raises ``ValueError`` when ``max_chars`` is below
    :data:`MIN_CHUNK_CHARS`.
    """
    if len(text) <= max_chars and max_chars >= MIN_CHUNK_CHARS:
        return [text], 0
    pairs = list(iter_chunks(text, max_chars))
    return [chunk for chunk, _ in pairs], sum(forced for _, forced in pairs)
