"""Choosing a counter: by tokenizer name or by model name."""

from __future__ import annotations

import re

from .chunking import DEFAULT_MAX_CHUNK_CHARS
from .countcache import DEFAULT_CACHE_SIZE
from .heuristic import HeuristicCounter
from .protocol import CachedCounter
from .tiktoken_counter import TiktokenCounter
from .vocab import ENCODING_NAMES

__all__ = [
    "COUNTER_NAMES",
    "chat_format_for_model",
    "counter_for_model",
    "encoding_for_model",
    "get_counter",
]

#: Names accepted by :func:`get_counter`.
COUNTER_NAMES: tuple[str, ...] = (*ENCODING_NAMES, "heuristic")

# (pattern on the lower-cased model name without a "provider/" prefix, counter name).
# OpenAI rows follow tiktoken/model.py (MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING).
_MODEL_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(ft:)?(chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5)"), "o200k_base"),
    (re.compile(r"^o[134](-|$)"), "o200k_base"),
    (re.compile(r"^(ft:)?(gpt-4|gpt-3\.5|gpt-35)"), "cl100k_base"),
    (re.compile(r"^text-embedding-(3|ada-002)"), "cl100k_base"),
    # Anthropic publishes no tokenizer for Claude 3+; o200k_base is used as an estimate and is
    # corrected by Calibration from the input_tokens Anthropic reports.
    (re.compile(r"^claude"), "o200k_base"),
)


def _bare_model(model: str) -> str:
    name = model.strip().lower()
    return name.rsplit("/", 1)[-1] if "/" in name and not name.startswith("ft:") else name


def encoding_for_model(model: str) -> str:
    """The counter name for ``model``: ``o200k_base``, ``cl100k_base`` or ``heuristic``.

    gpt-4o / gpt-4.1 / gpt-4.5 / gpt-5* / o1 / o3 / o4 -> o200k_base; gpt-4 / gpt-3.5 and
    OpenAI embeddings -> cl100k_base; claude* -> o200k_base (an estimate); anything else ->
    heuristic. A ``provider/`` prefix (``openai/gpt-4o``) is ignored.
    """
    bare = _bare_model(model)
    for pattern, counter in _MODEL_RULES:
        if pattern.search(bare):
            return counter
    return "heuristic"


def chat_format_for_model(model: str) -> str:
    """``anthropic`` for claude* models, else ``openai_chat`` (also used by compatible servers)."""
    return "anthropic" if _bare_model(model).startswith("claude") else "openai_chat"


def get_counter(
    name: str,
    *,
    chat_format: str = "openai_chat",
    cache_size: int = DEFAULT_CACHE_SIZE,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    model: str = "",
) -> CachedCounter:
    """A new counter ``name`` (``o200k_base``, ``cl100k_base`` or ``heuristic``).

    Each call returns a fresh counter with its own count cache; the tiktoken encodings behind
    them are shared per process. ``max_chunk_chars`` bounds the characters handed to tiktoken
    at once (:mod:`regio.tokens.chunking`; the heuristic needs no bound). Raises
    ``ValueError`` listing the known names.
    """
    if name in ENCODING_NAMES:
        return TiktokenCounter(
            name,
            chat_format=chat_format,
            cache_size=cache_size,
            max_chunk_chars=max_chunk_chars,
            model=model,
        )
    if name == "heuristic":
        return HeuristicCounter(chat_format=chat_format, cache_size=cache_size, model=model)
    raise ValueError(f"unknown token counter {name!r}; known: {', '.join(COUNTER_NAMES)}")


def counter_for_model(model: str, *, cache_size: int = DEFAULT_CACHE_SIZE) -> CachedCounter:
    """A new counter for ``model`` (tokenizer and chat format chosen by name, see above)."""
    return get_counter(
        encoding_for_model(model),
        chat_format=chat_format_for_model(model),
        cache_size=cache_size,
        model=_bare_model(model),
    )
