"""The runtime: the :class:`Engine` and what it is made of.

* :class:`Engine` -- writes, conversation, ``request`` (layout + renderer), ``observe``
  (usage ledger + calibration), the compaction flush, overflow recovery, context tools,
  snapshot, persistence;
* summarizers -- the :class:`Summarizer` protocol, :class:`LLMSummarizer` (any provider
  adapter), :class:`ExtractiveSummarizer` (offline), hierarchical chunking;
* :func:`classify_overflow` -- provider length refusals;
* :func:`repair_history` -- a broken history (orphaned calls or results, reused call ids)
  made valid, each change a :class:`HistoryRepaired` event (``Engine.repair`` does it to the
  engine's conversation);
* errors -- :class:`CompactionNoProgressError`, :class:`ContextOverflowError`,
  :class:`SummaryRejected`, :class:`SummarizerError`, :class:`RuntimeStateError`.

See ``docs/runtime.md``.
"""

from __future__ import annotations

from .compaction import CompactionResult
from .engine import Engine
from .errors import (
    CompactionNoProgressError,
    ContextOverflowError,
    RuntimeStateError,
    SummarizerError,
    SummaryRejected,
)
from .extractive import ExtractiveSummarizer
from .hierarchy import SummaryCall, SummaryOutcome, asummarize_entries, summarize_entries
from .history import HistoryRepair, HistoryRepaired, repair_history
from .llm_summarizer import LLMSummarizer
from .options import EngineOptions
from .overflow import OverflowInfo, classify_overflow
from .recovery import RetryToken
from .snapshot import EngineSnapshot, RegionSnapshot
from .streaming import AssistantStream
from .summarizer import FunctionSummarizer, Summarizer, check_summary
from .tools import ContextToolOutcome
from .transcript import TranscriptRecord
from .usage import ModelPricing, UsageLedger, UsageRecord, normalize_usage

__all__ = [
    "AssistantStream",
    "CompactionNoProgressError",
    "CompactionResult",
    "ContextOverflowError",
    "ContextToolOutcome",
    "Engine",
    "EngineOptions",
    "EngineSnapshot",
    "ExtractiveSummarizer",
    "FunctionSummarizer",
    "HistoryRepair",
    "HistoryRepaired",
    "LLMSummarizer",
    "ModelPricing",
    "OverflowInfo",
    "RegionSnapshot",
    "RetryToken",
    "RuntimeStateError",
    "Summarizer",
    "SummarizerError",
    "SummaryCall",
    "SummaryOutcome",
    "SummaryRejected",
    "TranscriptRecord",
    "UsageLedger",
    "UsageRecord",
    "asummarize_entries",
    "check_summary",
    "classify_overflow",
    "normalize_usage",
    "repair_history",
    "summarize_entries",
]
