"""A tokenizer-free estimate for models whose tokenizer regio does not have.

Rule: ``ceil(other characters / 4) + CJK characters``. Four characters per token is OpenAI's
rule of thumb for English ("What are tokens and how to count them?"); CJK scripts average about
one token per character in BPE vocabularies, so they are counted one each. Calibration from
provider-reported usage (:class:`regio.tokens.Calibration`) corrects the remaining error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import attrs

from .protocol import CachedCounter

__all__ = [
    "CJK_PATTERN",
    "RUNNING_CHUNK_CHARS",
    "HeuristicCounter",
    "cjk_characters",
    "estimate_tokens",
]

#: Characters estimated at a time when counting up to a limit
#: (:meth:`regio.tokens.CachedCounter.count_up_to`).
RUNNING_CHUNK_CHARS = 1_000_000

#: Characters counted one token each: Han (CJK Unified Ideographs and extensions, compatibility
#: ideographs), Hiragana, Katakana (incl. phonetic extensions), Hangul (syllables, Jamo,
#: compatibility Jamo) and the Halfwidth and Fullwidth Forms block.
CJK_PATTERN = re.compile(
    "["
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002ebef"  # Extensions B-F (+ I)
    "\U0002f800-\U0002fa1f"  # Compatibility Ideographs Supplement
    "\U00030000-\U000323af"  # Extensions G-H
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u31f0-\u31ff"  # Katakana Phonetic Extensions
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3130-\u318f"  # Hangul Compatibility Jamo
    "\ua960-\ua97f"  # Hangul Jamo Extended-A
    "\uac00-\ud7af"  # Hangul Syllables
    "\ud7b0-\ud7ff"  # Hangul Jamo Extended-B
    "\uff00-\uffef"  # Halfwidth and Fullwidth Forms
    "]"
)


def cjk_characters(text: str) -> int:
    """Number of characters of ``text`` matched by :data:`CJK_PATTERN`."""
    return len(text) - len(CJK_PATTERN.sub("", text))


def estimate_tokens(text: str) -> int:
    """``ceil(non-CJK characters / 4) + CJK characters`` (characters = code points)."""
    cjk = cjk_characters(text)
    return math.ceil((len(text) - cjk) / 4) + cjk


@attrs.define(eq=False)
class HeuristicCounter(CachedCounter):
    """Estimated counts by :func:`estimate_tokens`, with the same block and message rules."""

    name: str = "heuristic"

    def _tokenize(self, text: str) -> int:
        return estimate_tokens(text)

    def _running_counts(self, text: str) -> Iterator[tuple[int, int]]:
        """Running ``(tokens, characters)`` per :data:`RUNNING_CHUNK_CHARS` characters: the
        estimate of the text read so far (exactly :func:`estimate_tokens` at the end)."""
        cjk = 0
        for start in range(0, len(text), RUNNING_CHUNK_CHARS):
            end = min(len(text), start + RUNNING_CHUNK_CHARS)
            cjk += cjk_characters(text[start:end])
            yield math.ceil((end - cjk) / 4) + cjk, end
