"""What one engine session holds and reads, apart from the window: options, state, the
transcript and the usage ledger, the budget, and the checks every value passes where it comes in.

Modules:

* ``_session`` -- :class:`Session`: the window, options, summarizer, compaction book,
  transcript, clock, state and cache terms that compaction, relief, the budget and the context
  tools take; the records saved with it (:class:`CompactionBook`, :class:`CompactionResult`);
* ``_reliefbook`` -- :class:`ReliefBook`: the relief chain's stage tallies and originals;
* ``_options`` -- :class:`EngineOptions`: every option, its default declared once;
* ``_declared`` -- the context window a provider adapter declares;
* ``_state`` -- :class:`SessionState`: what changes from request to request;
* ``_callnames`` -- call ids where a message is admitted (``regio.callids``'s rule);
* ``_budget`` -- :class:`EngineBudget`: counting, the limit and the ceiling;
* ``_cacheprices`` -- the provider cache's price multipliers and TTL;
* ``_render`` -- the seam where a laid-out request is rendered;
* ``_transcript`` -- the canonical, append-only transcript (:class:`TranscriptRecord`);
* ``_usage`` -- the usage ledger (:class:`UsageLedger`, :class:`UsageRecord`,
  :class:`ModelPricing`);
* ``_stored`` -- records a load leaves to read on first use;
* ``_events`` -- events of the engine (compaction, overflow, usage, items, ...);
* ``_sizes``, ``_textadmit`` -- sizes and text checked where they come in;
* ``_toolspecs``, ``_toolargs`` -- the context tools' schemas and their argument checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio._lazy import lazy_exports

if TYPE_CHECKING:
    from ._budget import EngineBudget
    from ._options import EngineOptions
    from ._reliefbook import ReliefBook
    from ._session import CompactionBook, CompactionResult, Session
    from ._state import SessionState
    from ._toolargs import ToolLimits
    from ._transcript import TranscriptRecord
    from ._usage import ModelPricing, UsageLedger, UsageRecord, normalize_usage

#: Public name -> the module that defines it (imported on first use).
_EXPORTS: dict[str, str] = {
    "CompactionBook": "._session",
    "CompactionResult": "._session",
    "ReliefBook": "._reliefbook",
    "Session": "._session",
    "EngineBudget": "._budget",
    "EngineOptions": "._options",
    "ModelPricing": "._usage",
    "SessionState": "._state",
    "ToolLimits": "._toolargs",
    "TranscriptRecord": "._transcript",
    "UsageLedger": "._usage",
    "UsageRecord": "._usage",
    "normalize_usage": "._usage",
}

__all__ = [
    "CompactionBook",
    "CompactionResult",
    "EngineBudget",
    "EngineOptions",
    "ModelPricing",
    "ReliefBook",
    "Session",
    "SessionState",
    "ToolLimits",
    "TranscriptRecord",
    "UsageLedger",
    "UsageRecord",
    "normalize_usage",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
