"""Context edits applied: what Anthropic's server does to one request and what the cache sees.

The edits themselves (:class:`~regio.cache.context_editing.ClearToolUses`,
:class:`~regio.cache.context_editing.ClearThinking`, parsed from the request's
``context_management``) are :mod:`regio.cache.context_editing`, with the source of the rules.
Here: :func:`apply_edits` runs them over a message list (an :class:`EditResult`: the edited
messages, the :class:`AppliedEdit` entries the response reports, the tokens before and after,
the first changed block), :func:`edit_payload` over a whole ``messages.create`` payload, and
:func:`simulate_edited` feeds the edited payload (:func:`payload_cache_request`) to a cache
model, so the cached prefix ends at the first edit.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from regio.cache.context_editing import (
    CLEAR_THINKING,
    CLEAR_TOOL_USES,
    PLACEHOLDER,
    ClearThinking,
    ClearToolUses,
    Count,
    Edit,
    parse_edits,
)
from regio.cache.types import CacheBlock, CacheOutcome, CacheRequest

if TYPE_CHECKING:
    from regio.cache.base import CacheModel

__all__ = [
    "AppliedEdit",
    "EditResult",
    "apply_edits",
    "edit_payload",
    "payload_cache_request",
    "simulate_edited",
]


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
    cache: CacheModel,
    payload: Mapping[str, Any],
    count: Count,
    *,
    id: str,
    t_start: float,
    **extra: Any,
) -> tuple[CacheOutcome, EditResult]:
    """Send ``payload`` through the server-side edit and then through ``cache`` (an
    :class:`~regio.cache.anthropic.AnthropicCache`): the outcome (read / written / uncached
    tokens of the *edited* prompt) and the edit."""
    edited, result = edit_payload(payload, count)
    request = payload_cache_request(edited, count, id=id, t_start=t_start, **extra)
    return cache.process(request), result
