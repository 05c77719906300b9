"""Counting hostile content: huge strings are counted in chunks (exact at safe cuts, a documented
bound at forced ones), never a process abort; structured tool_result content is counted by its
JSON form."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import ContentTypeError, Entry, Message, ToolResult, canonical_json
from regio.errors import RegioError
from regio.tokens import TokenCountError, get_counter, split_for_tokenizer
from regio.tokens.chunking import MIN_CHUNK_CHARS
from regio.tokens.vocab import get_encoding

SETTINGS = settings(max_examples=200, deadline=None)
ENCODINGS = ("o200k_base", "cl100k_base")
# letters (both cases), digits, whitespace, punctuation incl. the apostrophe and "/", CJK,
# a combining mark and an emoji: every class the pre-tokenizer patterns treat differently
ALPHABET = [*"aaabbZXy019 \n\t\r.,;'!/_-\"", "中", "文", "é", "\u0301", "😀"]


def exact(name: str, text: str) -> int:
    return len(get_encoding(name).encode_ordinary(text))


def chunked(name: str, chunks: list[str]) -> int:
    encoding = get_encoding(name)
    return sum(len(encoding.encode_ordinary(c)) for c in chunks)


texts = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=6).flatmap(
    lambda sub: st.text(alphabet=st.sampled_from(sub), min_size=1, max_size=240)
)


@SETTINGS
@given(texts, st.integers(MIN_CHUNK_CHARS, 64))
def test_property_chunks_rebuild_the_text_and_respect_the_maximum(text: str, limit: int) -> None:
    chunks, forced = split_for_tokenizer(text, limit)
    assert "".join(chunks) == text
    assert all(0 < len(c) <= limit for c in chunks)
    assert 0 <= forced < len(chunks) or forced == 0


@SETTINGS
@given(texts, st.integers(MIN_CHUNK_CHARS, 64), st.sampled_from(ENCODINGS))
def test_property_safe_cuts_keep_the_count_exact(text: str, limit: int, name: str) -> None:
    chunks, forced = split_for_tokenizer(text, limit)
    if forced == 0:
        assert chunked(name, chunks) == exact(name, text)


@SETTINGS
@given(texts, st.integers(MIN_CHUNK_CHARS, 64), st.sampled_from(ENCODINGS))
def test_property_a_forced_cut_changes_the_count_by_at_most_eight_tokens(
    text: str, limit: int, name: str
) -> None:
    chunks, forced = split_for_tokenizer(text, limit)
    assert abs(chunked(name, chunks) - exact(name, text)) <= 8 * forced


@pytest.mark.parametrize("name", ENCODINGS)
def test_prose_and_code_are_cut_only_at_safe_points(name: str) -> None:
    text = ("def f(x):\n    return x + 1  # it's fine\n" * 50) + ("Wörter und 中文。" * 50)
    chunks, forced = split_for_tokenizer(text, 100)
    assert forced == 0 and len(chunks) > 10
    assert chunked(name, chunks) == exact(name, text)
    counter = get_counter(name, max_chunk_chars=100)
    assert counter.count(text) == exact(name, text)
    assert counter.encode(text) == get_encoding(name).encode_ordinary(text)


@pytest.mark.parametrize("run", [" ", "\n", "^", "a", "中"])
def test_a_run_longer_than_the_chunk_is_counted_within_the_documented_bound(run: str) -> None:
    # a million spaces make tiktoken panic (RuntimeError(StackOverflow)) when encoded at once;
    # the others encode whole and give the exact count to compare with
    text = run * 1_200_000
    counter = get_counter("o200k_base")
    total = counter.count(text)
    chunks, forced = split_for_tokenizer(text, 100_000)
    assert forced == len(chunks) - 1 == 11
    if run != " ":
        assert abs(total - exact("o200k_base", text)) <= 8 * forced
    assert total >= len(text) // 256


def test_a_huge_unbroken_string_is_counted_in_a_child_process_without_an_abort() -> None:
    code = (
        "from regio.tokens import get_counter\n"
        "c = get_counter('o200k_base')\n"
        "print(c.count(' ' * 3_000_000 + 'x' * 3_000_000 + '!' * 3_000_000))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) > 0


def test_a_too_small_chunk_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        get_counter("o200k_base", max_chunk_chars=4)
    with pytest.raises(ValueError, match="at least 16"):
        split_for_tokenizer("abc", 3)


structured = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.text(max_size=5), structured, max_size=4) | st.lists(structured, max_size=4)
)
def test_property_structured_tool_result_content_counts_as_its_json(value: object) -> None:
    block = ToolResult("call_1", value)  # type: ignore[arg-type]
    text = canonical_json(value).decode()
    assert block.content == text
    for name in (*ENCODINGS, "heuristic"):
        counter = get_counter(name)
        assert counter.count_block(block) == counter.count(text)
        message = Message.tool((block,))
        assert counter.count_entry(Entry("e1", message.blocks, role="tool")) >= counter.count(text)


def test_content_that_is_not_json_able_is_refused_with_a_regio_error() -> None:
    with pytest.raises(ContentTypeError, match=r"call_9.*neither text nor JSON-able"):
        ToolResult("call_9", object())  # type: ignore[arg-type]


def test_counting_a_value_that_is_not_text_raises_a_regio_error() -> None:
    counter = get_counter("heuristic")
    with pytest.raises(TokenCountError, match="can only count text, got dict") as caught:
        counter.count({"a": 1})  # type: ignore[arg-type]
    assert isinstance(caught.value, RegioError)


@pytest.mark.parametrize("provider", ["anthropic", "openai", "text"])
def test_structured_tool_result_content_renders_as_its_json_text(provider: str) -> None:
    from regio.content import ToolUse
    from regio.engine import Engine
    from regio.regions import SlidingWindow, Window

    window = Window(
        regions=[SlidingWindow(name="conversation", budget=10_000)],
        max_tokens=20_000,
        counter=get_counter("heuristic"),
    )
    engine = Engine(window=window, model="m")
    engine.add_user("run it")
    engine.add_assistant("", tool_calls=[ToolUse("call_1", "job", {})])
    engine.add_tool_result("call_1", {"status": "done", "rows": [1, 2]}, tokens=7)
    _, payload = engine.request(provider)
    texts = _strings(payload)
    assert any('{"rows":[1,2],"status":"done"}' in t for t in texts)
    assert not any("{'rows'" in t for t in texts)
    json.dumps(payload)  # a valid JSON payload


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []
