"""The engine options a state file records (:class:`EngineConfig`) and the names of the
:class:`regio.runtime.EngineOptions` fields saved and restored as they are
(:data:`SAVED_OPTIONS`). A field added to the options and meant to survive ``Engine.save`` /
``Engine.load`` is listed here with a default, so state files written before it still load."""

from __future__ import annotations

from typing import Any

import msgspec

from regio.layout import ToolSpec

from .toolargs import ToolLimits

__all__ = ["SAVED_OPTIONS", "EngineConfig"]


class EngineConfig(msgspec.Struct):
    """The engine's options (see :class:`regio.runtime.Engine`); ``blueprint_sha256`` is the
    hex sha256 of ``blueprint_text`` (``None`` for an engine built without a blueprint)."""

    provider: str
    model: str
    context_window: int | None
    output_reserve: int
    strategy: str
    ttl: str
    chunk_tokens: int
    settle_share: float
    targets: dict[str, int]
    compact_trigger: int | None
    auto_compact: bool
    no_progress_limit: int
    carry_forward: str
    standing_instructions: str
    session_id: str | None
    blueprint_text: str | None
    tokenizer: str | None
    counter_name: str
    chat_format: str | None
    summarizer_window: int
    summarizer_max_tokens: int
    extra_tools: list[ToolSpec] = msgspec.field(default_factory=list)
    cut_at_turns: bool = False
    blueprint_sha256: str | None = None
    relief: dict[str, Any] | None = None  # EngineOptions.relief (a ReliefPolicy as saved)
    context_tools: str | list[str] = "auto"  # EngineOptions.context_tools
    context_management: dict[str, Any] | None = None  # EngineOptions.context_management
    tool_limits: ToolLimits = msgspec.field(default_factory=ToolLimits)


#: Engine options saved and restored as they are (``targets`` and ``extra_tools`` are copied;
#: ``allow_custom_hooks`` is never saved: the caller of ``Engine.load`` decides it).
SAVED_OPTIONS = (
    "provider",
    "model",
    "context_window",
    "output_reserve",
    "strategy",
    "ttl",
    "chunk_tokens",
    "settle_share",
    "compact_trigger",
    "auto_compact",
    "no_progress_limit",
    "carry_forward",
    "standing_instructions",
    "session_id",
    "blueprint_text",
    "tokenizer",
    "cut_at_turns",
    "relief",
    "context_tools",
    "context_management",
    "tool_limits",
)
