"""Helpers shared by the progress-report tests and the engine state machine."""

from __future__ import annotations

from regio.content import ToolUse
from regio.engine import Engine
from regio.turngroups import group_entries


def conversation_blueprint(
    name: str, budget: int, *, items: int | None = None, compact_count: int = 4
) -> str:
    """YAML of the engine these tests share: a pinned system region, a ``compact_history``
    region fed by the conversation, and a ``sliding_window`` conversation of ``budget`` tokens
    (``items``: its ``max_items``) that compacts ``compact_count`` messages at a time (not
    elastic: its budget is its cap, so these tests compact without filling a 200k window)."""
    cap = f"\n    max_items: {items}" if items is not None else ""
    return f"""
version: 1
name: {name}
model: {{provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}}
tokenizer: heuristic
regions:
  - {{name: system, kind: pinned, volatility: stable, budget: 400, seed: "You are careful."}}
  - {{name: history, kind: compact_history, source: conversation, budget: 1500}}
  - name: conversation
    kind: sliding_window
    elastic: false
    budget: {budget}{cap}
    eviction: {{strategy: compact, compact_count: {compact_count}}}
"""


def call_is_open(engine: Engine, call_id: str) -> bool:
    """Whether the conversation still holds call ``call_id`` in an open group."""
    entries = engine.window.conversation.entries
    grouping = group_entries(entries)
    for i, e in enumerate(entries):
        if any(isinstance(b, ToolUse) and b.id == call_id for b in e.blocks):
            return grouping.group_of(i).open
    return False  # the call left the window
