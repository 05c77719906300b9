"""Helpers shared by the progress-report tests and the engine state machine."""

from __future__ import annotations

from regio.content import ToolUse, group_entries
from regio.runtime import Engine


def call_is_open(engine: Engine, call_id: str) -> bool:
    """Whether the conversation still holds call ``call_id`` in an open group."""
    entries = engine.window.conversation.entries
    grouping = group_entries(entries)
    for i, e in enumerate(entries):
        if any(isinstance(b, ToolUse) and b.id == call_id for b in e.blocks):
            return grouping.group_of(i).open
    return False  # the call left the window
