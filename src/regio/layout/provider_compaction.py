"""The providers' own compaction in a rendered request: the renderers' ``compaction`` option.

A :class:`ProviderCompaction` asks the provider to compact the conversation itself and
carries the compaction items it returned earlier:

* **Anthropic Messages** (``render_anthropic(..., compaction=...)``): the threshold
  compaction edit ``{"type": "compact_20260112", "trigger": {"type": "input_tokens",
  "value": N}}`` is added to ``context_management.edits`` (after any context-editing edit;
  beta header ``compact-2026-01-12``; "Compaction",
  https://platform.claude.com/docs/en/build-with-claude/compaction). The message holding
  the summary of an entry that has an item (its blocks' ``source`` is ``summary:<id>``) is
  rendered as that item, the ``compaction`` block the API returned, at the start of an
  assistant message (where the API put it: "append the response to your messages"), and that
  message opens the conversation: the API drops every message block before its latest
  compaction block, so nothing is sent there. A note of that entry (``note:<id>``, the same
  summary travelling in the conversation) is left out: the item stands for it.
* **OpenAI Responses** (``render_openai_responses(..., compaction=...)``):
  ``context_management: [{"type": "compaction", "compact_threshold": N}]``
  ("Compaction", https://developers.openai.com/api/docs/guides/compaction); an item is the
  opaque ``{"type": "compaction", "encrypted_content": ...}`` input item, placed first in
  ``input`` (the items before the latest compaction item may be dropped), the same way.

``trigger`` ``None`` sends no field (the items alone, e.g. a session whose delegation was
turned off). Other APIs have no such field: the engine renders its own readable summary
there (:mod:`regio.compaction._delegation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from .model import LayoutBlock

__all__ = [
    "ANTHROPIC_COMPACT_EDIT",
    "COMPACTION_APIS",
    "ProviderCompaction",
    "add_anthropic_edit",
    "add_responses_entry",
    "item_of",
]

#: The Anthropic threshold-compaction edit type.
ANTHROPIC_COMPACT_EDIT = "compact_20260112"
#: APIs that render a :class:`ProviderCompaction`.
COMPACTION_APIS: tuple[str, ...] = ("anthropic", "openai_responses")


@attrs.frozen
class ProviderCompaction:
    """``trigger``: input tokens above which the provider compacts (``None``: not asked);
    ``items``: summary entry id -> the provider's compaction block or item for this API
    (copied into the payload as given)."""

    trigger: int | None = None
    items: Mapping[str, dict[str, Any]] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.trigger is not None and self.trigger < 1:
            raise ValueError(f"compaction trigger must be >= 1 token, got {self.trigger}")


def item_of(
    blocks: Sequence[LayoutBlock], compaction: ProviderCompaction | None
) -> tuple[dict[str, Any] | None, bool]:
    """For the layout blocks of one message: (the item that stands for it when it holds the
    summary of an entry with an item, else ``None``; whether it is only notes of such
    entries, to be left out)."""
    if compaction is None or not compaction.items:
        return None, False
    notes = 0
    for b in blocks:
        kind, _, entry = str(b.source).partition(":")
        if kind == "summary" and entry in compaction.items:
            return compaction.items[entry], False
        notes += kind == "note" and entry in compaction.items
    return None, notes == len(blocks) > 0


def add_anthropic_edit(payload: dict[str, Any], trigger: int) -> None:
    """Add the threshold-compaction edit to ``payload['context_management']['edits']``
    (created when absent; an edit of that type already there is replaced)."""
    management = payload.setdefault("context_management", {})
    edits = [e for e in management.get("edits", []) if e.get("type") != ANTHROPIC_COMPACT_EDIT]
    edits.append(
        {"type": ANTHROPIC_COMPACT_EDIT, "trigger": {"type": "input_tokens", "value": trigger}}
    )
    management["edits"] = edits


def add_responses_entry(payload: dict[str, Any], trigger: int) -> None:
    """Add the compaction entry to a Responses payload's ``context_management`` list."""
    entries = [e for e in payload.get("context_management", []) if e.get("type") != "compaction"]
    entries.append({"type": "compaction", "compact_threshold": trigger})
    payload["context_management"] = entries
