"""Shared fixtures of the tests of what a compaction keeps of tool output (reported values,
quotes): a compacting blueprint and the entries and engine steps those tests build."""

from __future__ import annotations

from regio.content import Entry, Message, ToolResult
from regio.engine import Engine
from regio.regions.compaction import ITEMS_META
from regio.summarizers.extract import extract_items
from regio.summarizers.items import DurableItem


def compacting_blueprint(name: str, history: int = 6000) -> str:
    """A 200k blueprint: a pinned system prompt, a ``history`` (compact_history, ``history``
    tokens) that a compacting ``conversation`` summarizes into."""
    return f"""version: 1
name: {name}
model: {{provider: anthropic, name: claude-sonnet-4-5, context_window: 200000,
        max_output_tokens: 1000}}
tokenizer: heuristic
regions:
  - {{name: system, kind: pinned, volatility: stable, budget: 1000, seed: "You are careful."}}
  - {{name: history, kind: compact_history, source: conversation, budget: {history}}}
  - {{name: conversation, kind: sliding_window, budget: 150000, eviction: {{strategy: compact}}}}
"""


def user_entry(text: str, i: int = 0, **meta: bool) -> Entry:
    """A user entry ``u<i>`` of ``text`` (``meta``: its annotations, e.g. observation)."""
    return Entry(f"u{i}", Message.user(text).blocks, role="user", meta=dict(meta))


def tool_entry(text: str, i: int = 0) -> Entry:
    """A tool entry ``t<i>``: the result of call ``c<i>`` holding ``text``."""
    return Entry(f"t{i}", (ToolResult(f"c{i}", text),), role="tool")


def items_of(*entries: Entry) -> list[DurableItem]:
    """The items a compaction of ``entries`` extracts, in render order."""
    return extract_items(entries).items.items()


def section_of(engine: Engine) -> Entry | None:
    """The item section of ``engine``'s ``history`` region, if it has one."""
    history = engine.window.region("history")
    return next((e for e in history.entries if ITEMS_META in e.meta), None)
