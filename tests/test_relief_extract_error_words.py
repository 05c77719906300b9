"""A cleared result's error lines are looked for line by line only when the whole text holds
what every error match contains (an error word in any case, or a line opening with ``E``): the
costly patterns are not run over each line of ordinary tool output. The items (and so every
placeholder's bytes) are the ones the line-by-line reading gives, on any text, the patterns'
Unicode case folding included (``faıled`` is an error line)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from mutation_support import fuzz_settings, hostile_text
from regio.compaction.relief import _extract
from regio.compaction.relief._extract import MAX_ERROR_CHARS, MAX_ERROR_LINES, _items, _rank
from regio.summarizers._extractive import extract_identifiers
from regio.summarizers.kinds import ERROR, TOOL_ERROR
from regio.summarizers.tracebacks import condense


def _items_line_by_line(text: str) -> list[str]:
    """The reading before the change: every line searched for errors."""
    raw = text.splitlines()
    lines = [ln.strip() for ln in raw if ln.strip()]
    condensed = [ln.strip() for ln, _ in condense(raw, MAX_ERROR_CHARS) if ln.strip()]
    errors = [ln for ln in condensed if TOOL_ERROR.search(ln) or ERROR.search(ln)]
    items = [
        ln if len(ln) <= MAX_ERROR_CHARS else ln[: MAX_ERROR_CHARS - 1] + "\u2026"
        for ln in errors[:MAX_ERROR_LINES]
    ]
    seen = set(items)
    ranked: list[tuple[int, int, str]] = []
    for line in reversed(lines):
        for token in extract_identifiers(line):
            rank = _rank(token)
            if rank is None or token in seen or any(token in item for item in items):
                continue
            seen.add(token)
            ranked.append((rank, len(ranked), token))
    ranked.sort()
    return items + [token for _, _, token in ranked]


_piece = st.one_of(
    st.sampled_from(
        [
            "src/app/main.py",
            "https://example.com/a/b?c=1",
            "ORD-4471",
            "db-07.internal",
            "snake_case_name",
            "camelCase",
            "CONST_X",
            "2026-12-05",
            "12,500.",
            "ERROR:",
            "error",
            "E ",
            "exit code 2",
            "exit\ncode 3",
            "3 failed",
            "Traceback (most recent call last):",
            '  File "src/app.py", line 12, in main',
            "ZeroDivisionError: division by zero",
            "    at run (src/app.js:12:5)",
            "TypeError: x is not a function",
            " ",
            "\n",
            "\r\n",
            "\t",
            "\u2028",
            "\x1c",
            "/",
            ").",
            "a/b/",
            "fa\u0131led",
            "FA\u0130LED",
            "tracebac\u212a",
            "ex\u0131t status 1",
        ]
    ),
    st.text(alphabet="aZ09_-./:; \n", max_size=12),
)
_text = st.one_of(st.lists(_piece, max_size=40).map("".join), hostile_text)


@given(_text)
@fuzz_settings(200)
@example("x\nERROR")  # "ERROR" ends its line: no error line, though the joined text matches
@example("exit\ncode 3")  # the pattern matches across the break only
@example("ok\nE boom")  # the tool-error "^" at the start of a later line
@example("caf\u00e9\nthe job fa\u0131led")  # not ASCII: the case folding of the patterns
def test_the_error_word_check_gives_the_line_by_line_items(text: str) -> None:
    assert _items(text) == _items_line_by_line(text)


def test_a_text_without_an_error_pattern_is_not_searched_line_by_line(monkeypatch) -> None:
    calls: list[str] = []

    class Counting:
        def __init__(self, pattern):
            self._pattern = pattern

        def search(self, text, *args):
            calls.append(text)
            return self._pattern.search(text, *args)

    monkeypatch.setattr(_extract, "_ERROR", Counting(ERROR))
    monkeypatch.setattr(_extract, "_TOOL_ERROR", Counting(TOOL_ERROR))
    text = "\n".join(f"line {j}: value = compute({j})" for j in range(40))
    assert _items(text) == _items_line_by_line(text)
    assert calls == []  # no error word: no line searched

    calls.clear()
    failing = text + "\nERROR: the build failed"
    assert _items(failing)[0] == "ERROR: the build failed"
    assert len(calls) > 40  # an error pattern in the text: every line is read
