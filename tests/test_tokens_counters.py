"""Counting rules, chat-format overhead, the heuristic, the count cache and counter selection."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, Text, Thinking, ToolResult, ToolUse, canonical_json
from regio.tokens import (
    CHAT_FORMATS,
    DEFAULT_CACHE_SIZE,
    ENTRY_BYTES,
    CountCache,
    HeuristicCounter,
    TokenCounter,
    chat_format_for_model,
    chat_overhead,
    counter_for_model,
    encoding_for_model,
    estimate_tokens,
    get_counter,
)

SETTINGS = settings(max_examples=60, deadline=None)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "heuristic"])
def test_every_counter_satisfies_the_protocol(name: str) -> None:
    counter = get_counter(name)
    assert isinstance(counter, TokenCounter)
    assert counter.name == name


def test_a_stub_with_the_four_methods_satisfies_the_protocol() -> None:
    class Stub:
        name = "stub"

        def count(self, text: str) -> int:
            return len(text)

        def count_blocks(self, blocks: object) -> int:
            return 0

        def count_message(self, message: object) -> int:
            return 0

        def count_entry(self, entry: object) -> int:
            return 0

    assert isinstance(Stub(), TokenCounter)
    assert not isinstance(object(), TokenCounter)


def test_tool_use_counts_its_name_and_canonical_json_input() -> None:
    counter = get_counter("o200k_base")
    call = ToolUse("call_1", "get_user_details", {"user_id": "mia_li_3668", "a": [1, 2]})
    expected = counter.count("get_user_details") + counter.count(
        canonical_json({"a": [1, 2], "user_id": "mia_li_3668"}).decode()
    )
    assert counter.count_block(call) == expected
    assert counter.count_block(call) > 0
    # key order does not change the count
    assert (
        counter.count_block(
            ToolUse("x", "get_user_details", {"a": [1, 2], "user_id": "mia_li_3668"})
        )
        == expected
    )


def test_tool_result_and_thinking_count_their_text_only() -> None:
    counter = get_counter("cl100k_base")
    assert counter.count_block(ToolResult("call_1", "file not found")) == counter.count(
        "file not found"
    )
    assert counter.count_block(Thinking("let me think", signature="x" * 400)) == counter.count(
        "let me think"
    )


def test_a_message_adds_the_openai_overhead_from_the_cookbook() -> None:
    counter = get_counter("o200k_base")
    message = Message.user("hello world")
    assert counter.count_message(message) == 2 + 3
    assert counter.count_message(message, has_name=True) == 2 + 3 + 1
    # 2 messages + reply priming: 2 * (2 + 3) + 3
    assert counter.count_messages([message, Message.assistant("hello world")]) == 13


def test_the_anthropic_overhead_is_an_estimate_with_its_source_documented() -> None:
    row = chat_overhead("anthropic")
    assert row.exact is False
    assert "estimate" in row.source
    assert "Cookbook" in chat_overhead("openai_chat").source
    counter = counter_for_model("claude-sonnet-4-20250514")
    assert counter.count_message(Message.user("hello world")) == 2 + row.tokens_per_message


def test_an_unknown_chat_format_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(ValueError, match="openai_chat, anthropic, none"):
        get_counter("heuristic", chat_format="llama")
    # the package's own; a provider registered since (tests/gemini_native.py) adds its format
    assert {"openai_chat", "anthropic", "none"} <= set(CHAT_FORMATS)


def test_an_entry_with_a_role_counts_as_a_message_and_one_without_as_blocks() -> None:
    counter = get_counter("o200k_base")
    blocks = (Text("hello world"),)
    assert counter.count_entry(Entry("e1", blocks, role="user")) == 5
    assert counter.count_entry(Entry("e2", blocks)) == 2
    assert counter.count_blocks(()) == 0


def test_counting_a_foreign_object_as_a_block_names_the_fix() -> None:
    with pytest.raises(TypeError, match=r"regio\.content"):
        get_counter("heuristic").count_block("plain string")  # type: ignore[arg-type]


# --- heuristic -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("abc", 1),
        ("abcd", 1),
        ("abcde", 2),
        ("hello world", 3),
        ("中文分词", 4),
        ("ひらがなカタカナ", 8),
        ("한국어", 3),
        ("ＡＢＣ", 3),  # fullwidth forms
        ("abcd中文", 3),
        ("abcde中", 3),
    ],
)
def test_heuristic_is_a_quarter_of_the_characters_and_one_per_cjk_character(
    text: str, tokens: int
) -> None:
    assert estimate_tokens(text) == tokens
    assert HeuristicCounter().count(text) == tokens


@SETTINGS
@given(st.text(max_size=200), st.text(alphabet="中文日本語かなカナ한국어ＡＢ", max_size=50))
def test_heuristic_property_each_cjk_character_adds_exactly_one_token(text: str, cjk: str) -> None:
    assert estimate_tokens(text + cjk) == estimate_tokens(text) + len(cjk)


@SETTINGS
@given(st.text(max_size=300))
def test_heuristic_property_lies_between_a_quarter_and_all_of_the_characters(text: str) -> None:
    assert math.ceil(len(text) / 4) <= estimate_tokens(text) <= len(text)


# --- cache -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "heuristic"])
def test_a_second_count_of_the_same_text_does_no_tokenization(name: str) -> None:
    counter = get_counter(name)
    text = "The same paragraph, counted twice. " * 20
    first = counter.count(text)
    before = counter.stats
    assert before.tokenize_calls == 1
    assert counter.count(text) == first
    after = counter.stats
    assert after.tokenize_calls == before.tokenize_calls
    assert after.hits == before.hits + 1


def test_an_edited_text_is_counted_again_exactly_once() -> None:
    counter = get_counter("o200k_base")
    counter.count("version one")
    counter.count("version two")
    counter.count("version two")
    assert counter.stats.tokenize_calls == 2
    assert counter.stats.misses == 2
    assert counter.stats.hits == 1


def test_the_cache_is_bounded_and_drops_the_least_recently_used() -> None:
    cache = CountCache(maxsize=2)
    cache.get_or_count("a", len)
    cache.get_or_count("b", len)
    cache.get_or_count("a", len)  # a is now the most recent
    cache.get_or_count("c", len)  # evicts b
    assert "a" in cache and "c" in cache and "b" not in cache
    assert cache.stats.evictions == 1
    assert len(cache) == 2


@settings(max_examples=30, deadline=None)
@given(maxsize=st.integers(1, 50), texts=st.lists(st.text(max_size=12), max_size=200))
def test_the_cache_holds_at_most_maxsize_counts_whatever_it_is_fed(maxsize, texts) -> None:
    cache = CountCache(maxsize=maxsize)
    for t in texts:
        assert cache.get_or_count(t, len) == len(t)
        assert len(cache) <= maxsize
    stats = cache.stats
    assert stats.size == len(cache) == min(maxsize, len(set(texts)))
    assert stats.bytes == stats.size * ENTRY_BYTES


def test_a_counter_s_default_cache_is_sized_by_the_window_not_the_session() -> None:
    counter = get_counter("heuristic")
    for i in range(3 * DEFAULT_CACHE_SIZE):
        counter.count(f"turn {i}")
    assert counter.stats.size == DEFAULT_CACHE_SIZE
    assert counter.stats.bytes < 1 << 20  # under 1 MiB per counter


def test_a_cache_of_size_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        CountCache(maxsize=0)


@SETTINGS
@given(st.lists(st.text(max_size=30), max_size=40))
def test_cache_property_tokenize_calls_equal_distinct_non_empty_texts(texts: list[str]) -> None:
    counter = HeuristicCounter()
    for text in texts:
        assert counter.count(text) == estimate_tokens(text)
    distinct = {t for t in texts if t}
    assert counter.stats.tokenize_calls == len(distinct)
    assert counter.stats.hits + counter.stats.misses == sum(1 for t in texts if t)


# --- selection -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "name", "chat_format"),
    [
        ("gpt-4o", "o200k_base", "openai_chat"),
        ("gpt-4o-mini-2024-07-18", "o200k_base", "openai_chat"),
        ("gpt-4.1-nano", "o200k_base", "openai_chat"),
        ("gpt-5-mini", "o200k_base", "openai_chat"),
        ("o1", "o200k_base", "openai_chat"),
        ("o3-mini", "o200k_base", "openai_chat"),
        ("o4-mini", "o200k_base", "openai_chat"),
        ("openai/gpt-4o", "o200k_base", "openai_chat"),
        ("gpt-4", "cl100k_base", "openai_chat"),
        ("gpt-4-turbo", "cl100k_base", "openai_chat"),
        ("gpt-3.5-turbo", "cl100k_base", "openai_chat"),
        ("claude-sonnet-4-20250514", "o200k_base", "anthropic"),
        ("anthropic/claude-3-5-haiku", "o200k_base", "anthropic"),
        ("llama-3.1-8b-instruct", "heuristic", "openai_chat"),
        ("qwen2.5-coder", "heuristic", "openai_chat"),
        ("o1x-custom", "heuristic", "openai_chat"),
    ],
)
def test_models_map_to_their_tokenizer_and_chat_format(
    model: str, name: str, chat_format: str
) -> None:
    assert encoding_for_model(model) == name
    assert chat_format_for_model(model) == chat_format
    counter = counter_for_model(model)
    assert (counter.name, counter.chat_format) == (name, chat_format)


def test_an_unknown_counter_name_is_refused_listing_the_known_names() -> None:
    with pytest.raises(ValueError, match="o200k_base, cl100k_base, heuristic"):
        get_counter("gpt2")


def test_each_counter_has_its_own_cache() -> None:
    a, b = get_counter("heuristic"), get_counter("heuristic")
    a.count("some text")
    assert b.stats.tokenize_calls == 0
