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

The response reports each applied edit in ``context_management.applied_edits``
(:class:`AppliedEdit`: ``cleared_tool_uses`` or ``cleared_thinking_turns``, and
``cleared_input_tokens``, the net tokens freed). Prompt caching: the edited prompt is what is
cached, so the prefix of the previous request can be read only up to the first block the edit
changed (:attr:`EditResult.first_edit`); "you'll incur cache write costs each time content is
cleared". :func:`simulate_edited` feeds the edited prompt to an
:class:`~regio.cache.anthropic.AnthropicCache`.

Errors: :class:`ContextEditingError` (a :class:`~regio.cache.types.CacheRequestError` and a
:class:`~regio.errors.RegioError`) names the bad key and the fix.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from regio.cache.types import CacheBlock, CacheOutcome, CacheRequest, CacheRequestError
from regio.errors import RegioError

__all__ = [
    "BETA",
    "CLEAR_THINKING",
    "CLEAR_TOOL_USES",
    "DOC_URL",
    "PLACEHOLDER",
    "AppliedEdit",
    "ClearThinking",
    "ClearToolUses",
    "ContextEditingError",
    "Edit",
    "EditResult",
    "apply_edits",
    "edit_payload",
    "edits_payload",
    "parse_edits",
    "payload_cache_request",
    "simulate_edited",
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


@attrs.frozen
class AppliedEdit:
    """One entry of ``context_management.applied_edits``: ``type``, ``cleared`` (tool uses or
    thinking turns) and ``cleared_input_tokens`` (net tokens freed)."""

    type: str
    cleared: int
    cleared_input_tokens: int

    def as_dict(self) -> dict[str, Any]:
        """The entry as the API reports it."""
        key = "cleared_tool_uses" if self.type == CLEAR_TOOL_USES else "cleared_thinking_turns"
        return {
            "type": self.type,
            key: self.cleared,
            "cleared_input_tokens": self.cleared_input_tokens,
        }


@attrs.frozen
class EditResult:
    """What the server does to one request.

    ``messages``: the edited message list (new message dicts and block lists; the input is
    never changed); ``block_tokens``: tokens of each block of ``messages``;
    ``applied``: the applied edits; ``original_input_tokens`` / ``input_tokens``: the prompt
    before and after (tokens, ``count_tokens``' two figures); ``first_edit``: ``(message index,
    block index)`` of the first changed block, ``None`` when nothing changed (the cached
    prefix of an earlier request ends there); ``cleared_ids``: tool_use ids whose results
    were cleared."""

    messages: list[dict[str, Any]]
    applied: tuple[AppliedEdit, ...]
    original_input_tokens: int
    input_tokens: int
    first_edit: tuple[int, int] | None
    cleared_ids: tuple[str, ...] = ()
    block_tokens: tuple[tuple[int, ...], ...] = ()

    def applied_edits(self) -> dict[str, Any]:
        """The response's ``context_management`` field."""
        return {"applied_edits": [a.as_dict() for a in self.applied]}


def _where(index: int | None) -> str:
    return "context_management.edits" + (f"[{index}]" if index is not None else "")


def _typed_value(raw: Any, kind: tuple[str, ...], where: str) -> tuple[str, int]:
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


def _names(raw: Any, where: str) -> tuple[str, ...]:
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


def parse_edits(context_management: Any) -> tuple[Edit, ...]:
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


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _content(message: Mapping[str, Any]) -> list[Any]:
    """The block list of a message (empty for string content: nothing in it is editable)."""
    content = message.get("content")
    return content if isinstance(content, list) else []


def _first(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _clear_thinking(
    messages: list[dict[str, Any]], tokens: list[list[int]], keep: int | None
) -> tuple[int, int, tuple[int, int] | None]:
    """Drop thinking blocks of all but the last ``keep`` assistant turns, in place:
    (turns cleared, tokens freed, first changed position)."""
    turns = [
        i
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
        and any(b.get("type") in ("thinking", "redacted_thinking") for b in _content(m))
    ]
    old = [] if keep is None else turns[: max(0, len(turns) - keep)]
    freed, first = 0, None
    for i in old:
        drop = [
            j
            for j, b in enumerate(messages[i]["content"])
            if b.get("type") in ("thinking", "redacted_thinking")
        ]
        first = _first(first, (i, drop[0]))
        freed += sum(tokens[i][j] for j in drop)
        messages[i]["content"] = [b for j, b in enumerate(messages[i]["content"]) if j not in drop]
        tokens[i] = [t for j, t in enumerate(tokens[i]) if j not in drop]
    return len(old), freed, first


def _tool_uses(messages: list[dict[str, Any]]) -> list[tuple[int, int, str, str]]:
    """(message, block, id, name) of every tool_use of an assistant message, in order."""
    return [
        (i, j, str(b.get("id")), str(b.get("name")))
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
        for j, b in enumerate(_content(m))
        if b.get("type") == "tool_use"
    ]


def _results(messages: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    return {
        str(b.get("tool_use_id")): (i, j)
        for i, m in enumerate(messages)
        if m["role"] == "user"
        for j, b in enumerate(_content(m))
        if b.get("type") == "tool_result"
    }


def _clear_tool_uses(
    messages: list[dict[str, Any]],
    tokens: list[list[int]],
    edit: ClearToolUses,
    total: int,
    count: Count,
) -> tuple[list[str], int, tuple[int, int] | None]:
    """Clear old tool uses in place (module doc): (cleared ids, tokens freed, first changed
    position); nothing changes when the trigger is not passed or ``clear_at_least`` is not met."""
    uses = _tool_uses(messages)
    passed = (
        total > edit.trigger if edit.trigger_type == "input_tokens" else len(uses) > edit.trigger
    )
    if not passed:
        return [], 0, None
    results = _results(messages)
    plan: list[tuple[int, int, int, int, dict[str, Any], dict[str, Any] | None]] = []
    freed = 0
    for i, j, uid, name in uses[: max(0, len(uses) - edit.keep)]:
        if name in edit.exclude_tools or uid not in results:
            continue
        ri, rj = results[uid]
        result = {"type": "tool_result", "tool_use_id": uid, "content": PLACEHOLDER}
        freed += tokens[ri][rj] - count(result)
        call = None
        if edit.clears_input(name):
            call = {**messages[i]["content"][j], "input": {}}
            freed += tokens[i][j] - count(call)
        plan.append((i, j, ri, rj, result, call))
    if not plan or (edit.clear_at_least is not None and freed < edit.clear_at_least):
        return [], 0, None
    first = None
    for i, j, ri, rj, result, call in plan:
        cc = messages[ri]["content"][rj].get("cache_control")
        messages[ri]["content"][rj] = {**result, **({"cache_control": cc} if cc else {})}
        tokens[ri][rj] = count(result)
        first = _first(first, (ri, rj))
        if call is not None:
            messages[i]["content"][j] = call
            tokens[i][j] = count(call)
            first = _first(first, (i, j))
    return [str(p[4]["tool_use_id"]) for p in plan], freed, first


def apply_edits(
    messages: Sequence[Mapping[str, Any]],
    edits: Sequence[Edit],
    count: Count,
    *,
    fixed_tokens: int = 0,
    thinking_enabled: bool = False,
    tokens: Sequence[Sequence[int]] | None = None,
) -> EditResult:
    """The server's edit of ``messages`` (Anthropic message dicts; string content is one text
    block) under ``edits`` (module doc). ``count(block) -> tokens`` counts one content block;
    ``tokens`` (optional, parallel to the blocks) gives the original blocks' counts instead;
    ``fixed_tokens``: tools + system tokens (part of ``input_tokens``); ``thinking_enabled``:
    extended thinking is on (the default thinking edit applies). Deterministic; the input is
    left untouched: messages and block lists are new, an edited block is a new dict and an
    unchanged one is the input's own (never mutated)."""
    msgs = [
        {**m, "content": list(c) if isinstance(c := m.get("content"), list) else c}
        for m in messages
    ]
    toks = (
        [list(t) for t in tokens]
        if tokens is not None
        else [[int(count(b)) for b in _blocks(m)] for m in msgs]
    )
    original = fixed_tokens + sum(map(sum, toks))
    applied: list[AppliedEdit] = []
    first = None
    cleared: list[str] = []
    thinking = next((e for e in edits if isinstance(e, ClearThinking)), None)
    if thinking is None and thinking_enabled:
        _n, _freed, where = _clear_thinking(msgs, toks, 1)
        first = _first(first, where)
    for edit in edits:
        if isinstance(edit, ClearThinking):
            n, freed, where = _clear_thinking(msgs, toks, edit.keep)
            if n:
                applied.append(AppliedEdit(CLEAR_THINKING, n, freed))
        else:
            total = fixed_tokens + sum(map(sum, toks))
            ids, freed, where = _clear_tool_uses(msgs, toks, edit, total, count)
            if ids:
                applied.append(AppliedEdit(CLEAR_TOOL_USES, len(ids), freed))
                cleared.extend(ids)
        first = _first(first, where)
    return EditResult(
        msgs,
        tuple(applied),
        original,
        fixed_tokens + sum(map(sum, toks)),
        first,
        tuple(cleared),
        tuple(map(tuple, toks)),
    )


def block_digest(level: str, role: str, block: Mapping[str, Any]) -> str:
    """Digest of one block's bytes (its ``cache_control`` left out): equal bytes, equal
    digests."""
    body = {k: v for k, v in block.items() if k != "cache_control"}
    text = json.dumps([level, role, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


_KINDS = {"tool_use": "tool_use", "tool_result": "tool_result", "thinking": "thinking"}


def _ttl(block: Mapping[str, Any]) -> Any:
    cc = block.get("cache_control")
    return (cc.get("ttl") or "5m") if isinstance(cc, Mapping) else None


def payload_cache_request(
    payload: Mapping[str, Any], count: Count, *, id: str, t_start: float, **extra: Any
) -> CacheRequest:
    """The :class:`CacheRequest` of an Anthropic ``messages.create`` payload: tools, system
    blocks, then every message block (tokens from ``count(block)``, ``cache_control`` marks
    as breakpoints, a top-level ``cache_control`` as the automatic mark); ``extra`` goes to
    :class:`CacheRequest` (``model``, ``scope``, ``output_tokens``, ...)."""
    blocks: list[CacheBlock] = []
    for tool in payload.get("tools", []):
        blocks.append(
            CacheBlock(
                int(count(tool)), block_digest("tools", "", tool), "text", "tools", _ttl(tool)
            )
        )
    system = payload.get("system", [])
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    for b in system:
        blocks.append(
            CacheBlock(
                int(count(b)),
                block_digest("system", "system", b),
                "text",
                "system",
                _ttl(b),
                role="system",
            )
        )
    for i, m in enumerate(payload.get("messages", [])):
        for b in _blocks(m):
            kind: Any = _KINDS.get(str(b.get("type")), "text")
            blocks.append(
                CacheBlock(
                    int(count(b)),
                    block_digest("messages", m["role"], b),
                    kind,
                    "messages",
                    _ttl(b),
                    role=m["role"],
                    message=i,
                )
            )
    top = payload.get("cache_control")
    auto: Any = (top.get("ttl") or "5m") if isinstance(top, Mapping) else None
    return CacheRequest(id=id, blocks=tuple(blocks), t_start=t_start, auto_mark=auto, **extra)


def _fixed(payload: Mapping[str, Any], count: Count) -> int:
    system = payload.get("system", [])
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    return sum(int(count(t)) for t in payload.get("tools", [])) + sum(int(count(b)) for b in system)


def edit_payload(payload: Mapping[str, Any], count: Count) -> tuple[dict[str, Any], EditResult]:
    """The payload the model sees (``context_management`` applied and removed) and the
    :class:`EditResult`. A payload without ``context_management`` is returned as a copy with
    no edits (only the default thinking edit when extended thinking is on)."""
    cm = payload.get("context_management")
    edits = parse_edits(cm) if cm is not None else ()
    thinking = payload.get("thinking")
    enabled = isinstance(thinking, Mapping) and thinking.get("type") == "enabled"
    result = apply_edits(
        payload.get("messages", []),
        edits,
        count,
        fixed_tokens=_fixed(payload, count),
        thinking_enabled=enabled,
    )
    edited = {k: copy.deepcopy(v) for k, v in payload.items() if k != "context_management"}
    edited["messages"] = result.messages
    return edited, result


def simulate_edited(
    cache: Any, payload: Mapping[str, Any], count: Count, *, id: str, t_start: float, **extra: Any
) -> tuple[CacheOutcome, EditResult]:
    """Send ``payload`` through the server-side edit and then through ``cache`` (an
    :class:`~regio.cache.anthropic.AnthropicCache`): the outcome (read / written / uncached
    tokens of the *edited* prompt) and the edit."""
    edited, result = edit_payload(payload, count)
    request = payload_cache_request(edited, count, id=id, t_start=t_start, **extra)
    return cache.process(request), result
