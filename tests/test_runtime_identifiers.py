"""The extractive summarizer's identifiers
(:func:`regio.summarizers._extractive.extract_identifiers`) are read in linear time: the forms that
need a ``/`` only on the whitespace-separated pieces that hold one. Property: that finds exactly the
tokens one scan of the whole pattern finds, in the same order."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.summarizers._extractive import _IDENT, extract_identifiers

#: Characters that make every identifier form and their edges: word characters, the
#: separators of paths, ids and numbers, whitespace, URL and file-suffix letters.
ALPHABET = "ab1_.-/~:, \n\tXYZ2024httpsp.py,;)é"


def _one_scan(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for match in _IDENT.finditer(text):
        token = match.group(0).rstrip(".,;:)")
        if token and token not in seen:
            seen[token] = None
    return list(seen)


@settings(max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "300")))
@given(st.text(alphabet=ALPHABET, max_size=80))
def test_identifiers_are_the_ones_one_scan_of_the_whole_pattern_finds(text):
    assert extract_identifiers(text) == _one_scan(text)


def test_a_long_word_without_a_slash_and_paths_urls_and_numbers_around_it():
    text = f"see {'x' * 5000} at src/app/main.py, https://h.io/a?b=1 and 1,2.3x/y ORD-4471."
    assert extract_identifiers(text) == _one_scan(text)
    assert "src/app/main.py" in extract_identifiers(text)
