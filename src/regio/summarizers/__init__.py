"""What summaries keep, and the text rules they share (``docs/items.md``).

* :mod:`regio.summarizers.statements` -- sentences, a rule kept with its condition;
* :mod:`regio.summarizers.kinds` -- the kinds of durable items and how a statement is sorted;
* :mod:`regio.summarizers.subjects` -- an item's key (its subject) and related keys;
* :mod:`regio.summarizers.items` -- :class:`DurableItem` and the keyed :class:`ItemSet`;
* :mod:`regio.summarizers.extract` -- :func:`extract_items` from a compaction's entries;
* :mod:`regio.summarizers.carryforward` -- the carry-forward schema of a summary, reading a
  reply back and validating it against the extracted items;
* :mod:`regio.summarizers.valuestatements`, :mod:`regio.summarizers.openitems`,
  :mod:`regio.summarizers.tracebacks`, :mod:`regio.summarizers.observations` -- values and
  their keys, to-dos and their completions, stack traces, environment observations.

The package depends on :mod:`regio.content` only; the runtime (``regio.engine``) uses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio._lazy import lazy_exports
from regio.summarizers.carryforward import SCHEMA_INSTRUCTIONS, check_reply, split_reply
from regio.summarizers.extract import Extraction, extract_items
from regio.summarizers.items import DurableItem, ItemSet, parse_items, render_items
from regio.summarizers.kinds import KINDS, classify
from regio.summarizers.subjects import item_key, related

if TYPE_CHECKING:
    from ._extractive import ExtractiveSummarizer
    from ._hierarchy import SummaryCall, SummaryOutcome, asummarize_entries, summarize_entries
    from ._llm import LLMSummarizer
    from ._protocol import FunctionSummarizer, Summarizer, check_summary

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "ExtractiveSummarizer": "._extractive",
    "FunctionSummarizer": "._protocol",
    "LLMSummarizer": "._llm",
    "Summarizer": "._protocol",
    "SummaryCall": "._hierarchy",
    "SummaryOutcome": "._hierarchy",
    "asummarize_entries": "._hierarchy",
    "check_summary": "._protocol",
    "summarize_entries": "._hierarchy",
}

__all__ = [
    "KINDS",
    "SCHEMA_INSTRUCTIONS",
    "DurableItem",
    "Extraction",
    "ExtractiveSummarizer",
    "FunctionSummarizer",
    "ItemSet",
    "LLMSummarizer",
    "Summarizer",
    "SummaryCall",
    "SummaryOutcome",
    "asummarize_entries",
    "check_reply",
    "check_summary",
    "classify",
    "extract_items",
    "item_key",
    "parse_items",
    "related",
    "render_items",
    "split_reply",
    "summarize_entries",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
