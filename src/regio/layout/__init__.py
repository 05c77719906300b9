"""Cache-aware layout: window -> provider-neutral request -> provider payloads.

* :func:`assemble` — the layout (a :class:`LayoutStrategy`: ``regio``, or the comparison
  layouts of :mod:`regio.layout.comparison`) returning a :class:`Request` with blocks, prefix
  hashes, planned breakpoints, events and the next :class:`LayoutState`; the session's
  :class:`RenderLog` keeps what is unchanged between requests;
* renderers behind one :class:`Renderer` protocol, by API (:func:`renderer_for`):
  :func:`render_anthropic`, :func:`render_openai_chat`, :func:`render_openai_responses`,
  :func:`render_text`;
* :func:`repair` and the W/L checks :func:`check_anthropic`, :func:`check_openai_chat`;
* :func:`classify` — prefix stability between consecutive requests;
* observed volatility (:mod:`regio.layout.observe`): regions laid out by what their writes do
  between requests (:class:`RegionWatch`, :class:`VolatilityObserved`);
* :func:`fork_for_summary` — summarizer requests that share the main request's prefix;
* :func:`to_cache_request` — input for :mod:`regio.cache`.
"""

from __future__ import annotations

from .assemble import DEFAULT_MIN_CACHE_TOKENS, assemble, note_text, prompt_cache_key
from .breakpoints import LOOKBACK, MAX_BREAKPOINTS, positions
from .cachebridge import to_cache_request
from .chunks import DEFAULT_CHUNK_TOKENS, pack_chunks
from .events import (
    BreakpointNeverRead,
    BreakpointPlan,
    LayoutEvent,
    NotesSettled,
    OrphanResultDropped,
    Repaired,
    ResultSynthesized,
    StableRegionChanged,
    TailSettled,
    VolatilityObserved,
)
from .fork import fork_for_summary
from .model import (
    Breakpoint,
    CacheEconomics,
    ChunkState,
    HeldMark,
    LayoutBlock,
    LayoutState,
    Note,
    RegionChange,
    RegionWatch,
    Request,
    TailCopy,
    ToolSpec,
)
from .provider_compaction import ProviderCompaction
from .render.anthropic import count_cache_markers, render_anthropic
from .render.common import CONTINUE_TEXT
from .render.openai import render_openai_chat, render_openai_responses
from .render.registry import Renderer, register_renderer, renderer_for, renderers
from .render.text import render_prompt, render_text
from .renderlog import RenderLog
from .repair import (
    CONVERSATION_START,
    MISSING_RESULT,
    PENDING_RESULT,
    LayoutError,
    PMessage,
    check_anthropic,
    check_openai_chat,
    repair,
)
from .sections import kind_rank
from .settle import DEFAULT_SETTLE_SHARE
from .stability import Stability, classify
from .strategy import LayoutStrategy
from .strategy_registry import STRATEGIES, plan_breakpoints, register_strategy, strategy_for

__all__ = [
    "CONTINUE_TEXT",
    "CONVERSATION_START",
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_MIN_CACHE_TOKENS",
    "DEFAULT_SETTLE_SHARE",
    "LOOKBACK",
    "MAX_BREAKPOINTS",
    "MISSING_RESULT",
    "PENDING_RESULT",
    "STRATEGIES",
    "Breakpoint",
    "BreakpointNeverRead",
    "BreakpointPlan",
    "CacheEconomics",
    "ChunkState",
    "HeldMark",
    "LayoutBlock",
    "LayoutError",
    "LayoutEvent",
    "LayoutState",
    "LayoutStrategy",
    "Note",
    "NotesSettled",
    "OrphanResultDropped",
    "PMessage",
    "ProviderCompaction",
    "RegionChange",
    "RegionWatch",
    "RenderLog",
    "Renderer",
    "Repaired",
    "Request",
    "ResultSynthesized",
    "Stability",
    "StableRegionChanged",
    "TailCopy",
    "TailSettled",
    "ToolSpec",
    "VolatilityObserved",
    "assemble",
    "check_anthropic",
    "check_openai_chat",
    "classify",
    "count_cache_markers",
    "fork_for_summary",
    "kind_rank",
    "note_text",
    "pack_chunks",
    "plan_breakpoints",
    "positions",
    "prompt_cache_key",
    "register_renderer",
    "register_strategy",
    "render_anthropic",
    "render_openai_chat",
    "render_openai_responses",
    "render_prompt",
    "render_text",
    "renderer_for",
    "renderers",
    "repair",
    "strategy_for",
    "to_cache_request",
]
