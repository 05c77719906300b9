"""regio: typed context-window regions and a cache-aware prompt layout for LLM agents.

The names a user needs, flat::

    import regio

    engine = regio.Engine.from_blueprint("agent.yaml", summarizer=regio.ExtractiveSummarizer())
    engine.add_user("Fix the failing test")
    request, payload = engine.request()

* engine: :class:`Engine`, :class:`EngineOptions`, :class:`EngineSnapshot`,
  :class:`AgentLoop`;
* blueprints: :func:`load_blueprint`, :class:`Blueprint`;
* regions: :class:`Window` and the kinds :class:`Pinned`, :class:`SlidingWindow`,
  :class:`Compacting`, :class:`CompactHistory`, :class:`Keyed`, :class:`Temporary`,
  :class:`Clearable`, :class:`Checklist`, :class:`Custom`;
* summarizers: :class:`ExtractiveSummarizer` (offline), :class:`LLMSummarizer`;
* cache models: :func:`cache_model_for`; bench: :func:`run_bench`, :func:`replay`;
* content blocks: :class:`Message`, :class:`Text`, :class:`ToolUse`, :class:`ToolResult`,
  :class:`Thinking`; events: :class:`Event`, :class:`EventBus`;
* errors: :class:`RegioError` and the ones a caller handles: :class:`BlueprintError`,
  :class:`RegionFullError`, :class:`ContextOverflowError`,
  :class:`CompactionNoProgressError`, :class:`SubscriberError`.

Everything else lives in the subpackages (``regio.layout``, ``regio.cache``, ...). Names are
imported on first use, so ``import regio`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from regio._version import __version__

#: Public name -> module that defines it.
_EXPORTS: dict[str, str] = {
    "AgentLoop": "regio.agent",
    "Blueprint": "regio.blueprint",
    "BlueprintError": "regio.blueprint",
    "Checklist": "regio.regions",
    "Clearable": "regio.regions",
    "CompactHistory": "regio.regions",
    "Compacting": "regio.regions",
    "CompactionNoProgressError": "regio.errors",
    "ContextOverflowError": "regio.errors",
    "Custom": "regio.regions",
    "Engine": "regio.engine",
    "EngineOptions": "regio.session",
    "EngineSnapshot": "regio.engine",
    "Event": "regio.events",
    "EventBus": "regio.events",
    "ExtractiveSummarizer": "regio.summarizers",
    "Keyed": "regio.regions",
    "LLMSummarizer": "regio.summarizers",
    "Message": "regio.content",
    "Pinned": "regio.regions",
    "RegionFullError": "regio.errors",
    "RegioError": "regio.errors",
    "SlidingWindow": "regio.regions",
    "SubscriberError": "regio.errors",
    "Temporary": "regio.regions",
    "Text": "regio.content",
    "Thinking": "regio.content",
    "ToolResult": "regio.content",
    "ToolUse": "regio.content",
    "Window": "regio.regions",
    "cache_model_for": "regio.providers",
    "load_blueprint": "regio.blueprint",
    "replay": "regio.bench",
    "run_bench": "regio.bench",
}

__all__ = [
    "AgentLoop",
    "Blueprint",
    "BlueprintError",
    "Checklist",
    "Clearable",
    "CompactHistory",
    "Compacting",
    "CompactionNoProgressError",
    "ContextOverflowError",
    "Custom",
    "Engine",
    "EngineOptions",
    "EngineSnapshot",
    "Event",
    "EventBus",
    "ExtractiveSummarizer",
    "Keyed",
    "LLMSummarizer",
    "Message",
    "Pinned",
    "RegioError",
    "RegionFullError",
    "SlidingWindow",
    "SubscriberError",
    "Temporary",
    "Text",
    "Thinking",
    "ToolResult",
    "ToolUse",
    "Window",
    "__version__",
    "cache_model_for",
    "load_blueprint",
    "replay",
    "run_bench",
]

if TYPE_CHECKING:
    from regio.agent import AgentLoop
    from regio.bench import replay, run_bench
    from regio.blueprint import Blueprint, BlueprintError, load_blueprint
    from regio.content import Message, Text, Thinking, ToolResult, ToolUse
    from regio.engine import Engine, EngineSnapshot
    from regio.errors import (
        CompactionNoProgressError,
        ContextOverflowError,
        RegioError,
        RegionFullError,
        SubscriberError,
    )
    from regio.events import Event, EventBus
    from regio.providers import cache_model_for
    from regio.regions import (
        Checklist,
        Clearable,
        CompactHistory,
        Compacting,
        Custom,
        Keyed,
        Pinned,
        SlidingWindow,
        Temporary,
        Window,
    )
    from regio.session import EngineOptions
    from regio.summarizers import ExtractiveSummarizer, LLMSummarizer


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (module doc)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'regio' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
