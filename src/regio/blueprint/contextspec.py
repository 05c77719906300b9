"""The blueprint's ``context_management`` section: Anthropic server-side context editing.

Its keys mirror the API's edits (https://platform.claude.com/docs/en/build-with-claude/
context-editing): ``clear_tool_uses`` is ``clear_tool_uses_20250919`` and ``clear_thinking`` is
``clear_thinking_20251015``, each with the API's defaults. The section is rendered into every
Anthropic payload as ``context_management: {"edits": [...]}`` (:func:`edits_value`); it is an
error for any other provider (:mod:`regio.blueprint.validate`).
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from regio.blueprint.fields import Int0, Int1, NonEmpty, _field

__all__ = ["ClearThinkingSpec", "ClearToolUsesSpec", "ContextManagementSpec", "edits_value"]


@attrs.frozen(kw_only=True)
class ClearToolUsesSpec:
    """Anthropic `clear_tool_uses_20250919`: old tool results become a placeholder."""

    trigger: Int1 = _field(
        "Clearing starts once the prompt exceeds this many `trigger_type` units (the API's "
        "default: 100,000 input tokens).",
        default=100_000,
    )
    trigger_type: Literal["input_tokens", "tool_uses"] = _field(
        "What `trigger` counts: `input_tokens` or `tool_uses`.", default="input_tokens"
    )
    keep: Int0 = _field("The most recent tool uses whose results are kept.", default=3)
    clear_at_least: Int1 | None = _field(
        "Tokens an activation must free, else nothing is cleared (the cache rewrite it causes "
        "must be worth it). Omitted: no minimum.",
        default=None,
    )
    exclude_tools: tuple[NonEmpty, ...] = _field(
        "Tool names whose uses and results are never cleared (default: none).", factory=tuple
    )
    clear_tool_inputs: bool = _field(
        "Also clear the cleared calls' `input` (the call stays, with `{}`).", default=False
    )


@attrs.frozen(kw_only=True)
class ClearThinkingSpec:
    """Anthropic `clear_thinking_20251015`: thinking blocks of older assistant turns go."""

    keep: Int1 = _field(
        "Assistant turns whose thinking blocks are kept (the API's default: 1).", default=1
    )
    keep_all: bool = _field(
        "Keep every thinking block (the API's `keep: all`; best for cache hits); `keep` is "
        "then not sent.",
        default=False,
    )


@attrs.frozen(kw_only=True)
class ContextManagementSpec:
    """Anthropic server-side context editing, rendered into every request (Anthropic only)."""

    clear_tool_uses: ClearToolUsesSpec | None = _field(
        "The `clear_tool_uses_20250919` edit. Omitted: not sent.", default=None
    )
    clear_thinking: ClearThinkingSpec | None = _field(
        "The `clear_thinking_20251015` edit (sent first, as the API requires). Omitted: not sent.",
        default=None,
    )


def edits_value(spec: ContextManagementSpec) -> dict[str, Any] | None:
    """The request's ``context_management`` value (``{"edits": [...]}``) or ``None`` when the
    section names no edit."""
    from regio.cache.context_editing import ClearThinking, ClearToolUses, Edit, edits_payload

    edits: list[Edit] = []
    if spec.clear_thinking is not None:
        ct = spec.clear_thinking
        edits.append(ClearThinking(keep=None if ct.keep_all else ct.keep))
    tu = spec.clear_tool_uses
    if tu is not None:
        edits.append(
            ClearToolUses(
                trigger=tu.trigger,
                trigger_type=tu.trigger_type,
                keep=tu.keep,
                clear_at_least=tu.clear_at_least,
                exclude_tools=tu.exclude_tools,
                clear_tool_inputs=tu.clear_tool_inputs,
            )
        )
    return edits_payload(edits) if edits else None
