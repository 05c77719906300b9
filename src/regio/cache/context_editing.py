"""Anthropic server-side context editing, as the simulator models it.

Source: https://platform.claude.com/docs/en/build-with-claude/context-editing (beta header
:data:`BETA` ``context-management-2025-06-27``; request field
``context_management: {"edits": [...]}``). The server applies the edits to the request *as
sent*, before the prompt reaches the model; the client keeps and re-sends its full history,
so the edit is a pure function of one request (nothing is remembered between requests).

Edits, in the order the request lists them (``clear_thinking_20251015`` must come first):

* ``clear_thinking_20251015`` (:class:`ClearThinking`): thinking blocks of all but the last
  ``keep`` assistant turns (default 1; ``"all"`` keeps every one) are removed. A turn is one
  assistant message here (one API response: its text, tool_use and thinking blocks). With
  extended thinking on (``thinking.type == "enabled"``) and no such edit, the documented
  default ``keep: 1`` applies without being reported.
* ``clear_tool_uses_20250919`` (:class:`ClearToolUses`): when the prompt exceeds ``trigger``
  (``input_tokens``, default 100,000; or a count of ``tool_uses``), the result of every tool
  use but the last ``keep`` (default 3, counted over all tool uses) is replaced by
  :data:`PLACEHOLDER`, oldest first; uses of ``exclude_tools`` are never cleared;
  ``clear_tool_inputs`` (``true`` or a list of tool names) also empties the call's ``input``
  (``{}``). When the tokens freed are fewer than ``clear_at_least`` the edit is not applied
  at all ("If the API can't clear at least the specified amount, the strategy will not be
  applied"). A tool_use whose result is not in the request is never touched, so a call and its
  result are cleared together or not at all. The placeholder text itself is not published;
  :data:`PLACEHOLDER` is regio's stand-in (its tokens are what matters to the cache).

Applying them is :mod:`regio.cache.applied_edits`. The response reports each applied edit in
``context_management.applied_edits`` (:class:`~regio.cache.applied_edits.AppliedEdit`:
``cleared_tool_uses`` or ``cleared_thinking_turns``, and ``cleared_input_tokens``, the net
tokens freed). Prompt caching: the edited prompt is what is cached, so the prefix of the
previous request can be read only up to the first block the edit changed
(:attr:`~regio.cache.applied_edits.EditResult.first_edit`); "you'll incur cache write costs
each time content is cleared". :func:`~regio.cache.applied_edits.simulate_edited` feeds the
edited prompt to an :class:`~regio.cache.anthropic.AnthropicCache`.

Errors: :class:`ContextEditingError` (a :class:`~regio.cache.types.CacheRequestError` and a
:class:`~regio.errors.RegioError`) names the bad key and the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from regio.cache.types import CacheRequestError
from regio.errors import RegioError

__all__ = [
    "BETA",
    "CLEAR_THINKING",
    "CLEAR_TOOL_USES",
    "DOC_URL",
    "PLACEHOLDER",
    "ClearThinking",
    "ClearToolUses",
    "ContextEditingError",
    "Edit",
    "edits_payload",
    "parse_edits",
]

DOC_URL = "https://platform.claude.com/docs/en/build-with-claude/context-editing"
#: The ``anthropic-beta`` header value that enables ``context_management``.
BETA = "context-management-2025-06-27"
CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEAR_THINKING = "clear_thinking_20251015"
#: What a cleared tool result holds (regio's stand-in: the API's text is not published).
PLACEHOLDER = "[tool result cleared by context editing]"

Count = Callable[[Mapping[str, Any]], int]


class ContextEditingError(CacheRequestError, RegioError):
    """A ``context_management`` value the API would refuse (HTTP 400); the message names the
    key and the fix."""


@attrs.frozen(kw_only=True)
class ClearToolUses:
    """``clear_tool_uses_20250919`` with the documented defaults (tokens; counts of tool uses).

    ``trigger_type``: ``input_tokens`` | ``tool_uses``; ``clear_at_least``: ``None`` (no
    minimum) or tokens; ``clear_tool_inputs``: ``True`` / ``False`` or a tuple of tool names.
    """

    trigger: int = 100_000
    trigger_type: str = "input_tokens"
    keep: int = 3
    clear_at_least: int | None = None
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool | tuple[str, ...] = False

    def clears_input(self, name: str) -> bool:
        """Whether a cleared use of tool ``name`` also loses its ``input``."""
        if isinstance(self.clear_tool_inputs, bool):
            return self.clear_tool_inputs
        return name in self.clear_tool_inputs

    def as_payload(self) -> dict[str, Any]:
        """The edit as the API's JSON object (every field spelled out)."""
        out: dict[str, Any] = {
            "type": CLEAR_TOOL_USES,
            "trigger": {"type": self.trigger_type, "value": self.trigger},
            "keep": {"type": "tool_uses", "value": self.keep},
        }
        if self.clear_at_least is not None:
            out["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least}
        if self.exclude_tools:
            out["exclude_tools"] = list(self.exclude_tools)
        if self.clear_tool_inputs:
            ci = self.clear_tool_inputs
            out["clear_tool_inputs"] = ci if isinstance(ci, bool) else list(ci)
        return out


@attrs.frozen(kw_only=True)
class ClearThinking:
    """``clear_thinking_20251015``: ``keep`` = assistant turns whose thinking is kept
    (default 1); ``None`` = ``"all"``."""

    keep: int | None = 1

    def as_payload(self) -> dict[str, Any]:
        """The edit as the API's JSON object."""
        keep: Any = "all" if self.keep is None else {"type": "thinking_turns", "value": self.keep}
        return {"type": CLEAR_THINKING, "keep": keep}


Edit = ClearToolUses | ClearThinking


def _where(index: int | None) -> str:
    return "context_management.edits" + (f"[{index}]" if index is not None else "")


def _typed_value(raw: object, kind: tuple[str, ...], where: str) -> tuple[str, int]:
    if (
        not isinstance(raw, Mapping)
        or raw.get("type") not in kind
        or isinstance(raw.get("value"), bool)
        or not isinstance(raw.get("value"), int)
        or raw["value"] < 0
    ):
        shown = " or ".join(repr(k) for k in kind)
        raise ContextEditingError(
            f"{where}: expected {{type: {shown}, value: <integer >= 0>}}, got {raw!r}"
        )
    return str(raw["type"]), int(raw["value"])


def _names(raw: object, where: str) -> tuple[str, ...]:
    if (
        not isinstance(raw, Sequence)
        or isinstance(raw, str)
        or not all(isinstance(x, str) and x for x in raw)
    ):
        raise ContextEditingError(f"{where}: expected a list of tool names, got {raw!r}")
    return tuple(raw)


_TOOL_USES_KEYS = {
    "type",
    "trigger",
    "keep",
    "clear_at_least",
    "exclude_tools",
    "clear_tool_inputs",
}


def _parse_tool_uses(raw: Mapping[str, Any], where: str) -> ClearToolUses:
    unknown = sorted(set(raw) - _TOOL_USES_KEYS)
    if unknown:
        raise ContextEditingError(
            f"{where}: unknown key(s) {', '.join(unknown)}; {CLEAR_TOOL_USES} takes "
            f"{', '.join(sorted(_TOOL_USES_KEYS - {'type'}))}"
        )
    fields: dict[str, Any] = {}
    if "trigger" in raw:
        ttype, fields["trigger"] = _typed_value(
            raw["trigger"], ("input_tokens", "tool_uses"), f"{where}.trigger"
        )
        fields["trigger_type"] = ttype
    if "keep" in raw:
        fields["keep"] = _typed_value(raw["keep"], ("tool_uses",), f"{where}.keep")[1]
    if raw.get("clear_at_least") is not None:
        fields["clear_at_least"] = _typed_value(
            raw["clear_at_least"], ("input_tokens",), f"{where}.clear_at_least"
        )[1]
    if raw.get("exclude_tools") is not None:
        fields["exclude_tools"] = _names(raw["exclude_tools"], f"{where}.exclude_tools")
    ci = raw.get("clear_tool_inputs", False)
    if not isinstance(ci, bool):
        ci = _names(ci, f"{where}.clear_tool_inputs")
    fields["clear_tool_inputs"] = ci
    return ClearToolUses(**fields)


def _parse_thinking(raw: Mapping[str, Any], where: str) -> ClearThinking:
    unknown = sorted(set(raw) - {"type", "keep"})
    if unknown:
        raise ContextEditingError(
            f"{where}: unknown key(s) {', '.join(unknown)}; {CLEAR_THINKING} takes keep"
        )
    keep = raw.get("keep")
    if keep is None:
        return ClearThinking()
    if keep == "all" or (isinstance(keep, Mapping) and dict(keep) == {"type": "all"}):
        return ClearThinking(keep=None)  # both forms the API takes ("all", {"type": "all"})
    value = _typed_value(keep, ("thinking_turns",), f"{where}.keep")[1]
    if value < 1:
        raise ContextEditingError(f"{where}.keep: thinking_turns must be > 0 (or 'all')")
    return ClearThinking(keep=value)


def parse_edits(context_management: object) -> tuple[Edit, ...]:
    """The edits of a ``context_management`` value (``{"edits": [...]}``), defaults filled in.
    Raises :class:`ContextEditingError` for an unknown edit type or key, a bad value, or a
    ``clear_thinking_20251015`` that is not listed first (the API's rule)."""
    if not isinstance(context_management, Mapping) or not isinstance(
        context_management.get("edits"), Sequence
    ):
        raise ContextEditingError(
            f"context_management: expected {{edits: [...]}}, got {context_management!r}"
        )
    out: list[Edit] = []
    for i, raw in enumerate(context_management["edits"]):
        where = _where(i)
        kind = raw.get("type") if isinstance(raw, Mapping) else None
        if kind == CLEAR_TOOL_USES:
            out.append(_parse_tool_uses(raw, where))
        elif kind == CLEAR_THINKING:
            if i != 0:
                raise ContextEditingError(
                    f"{where}: {CLEAR_THINKING} must be listed first in edits ({DOC_URL})"
                )
            out.append(_parse_thinking(raw, where))
        else:
            raise ContextEditingError(
                f"{where}: unknown edit {raw!r}; use type {CLEAR_TOOL_USES} or {CLEAR_THINKING}"
            )
    return tuple(out)


def edits_payload(edits: Sequence[Edit]) -> dict[str, Any]:
    """The ``context_management`` request value of ``edits`` (``{"edits": [...]}``)."""
    return {"edits": [e.as_payload() for e in edits]}
