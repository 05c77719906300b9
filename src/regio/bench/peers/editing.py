"""Context-editing peers: old tool results cleared instead of summarized, at the same window.

* ``anthropic-clear-tool-uses`` (:class:`ServerEditPeer`) — Anthropic's server-side
  ``clear_tool_uses_20250919`` (https://platform.claude.com/docs/en/build-with-claude/
  context-editing), simulated by :mod:`regio.cache.context_editing`: the recorded agent sends
  its full history on every call (as a client of the API does) and the edit is applied to
  that request, with its documented defaults (keep the last 3 tool uses, no
  ``clear_at_least``, no ``exclude_tools``, inputs kept).
* ``context-editing-middleware`` (:class:`MiddlewareEditPeer`) — LangChain v1
  ``langchain.agents.middleware.ContextEditingMiddleware`` with ``ClearToolUsesEdit`` (its
  defaults: ``keep=3``, ``clear_at_least=0``, placeholder ``[cleared]``) run through its real
  ``wrap_model_call`` hook on the agent's full message list before every call; the token
  counter is regio's (the messages' counts; a cleared result counts as its placeholder).
* ``anthropic-clear-tool-uses-tuned`` / ``context-editing-middleware-tuned`` — the same two
  with ``clear_at_least`` (both APIs name it so: Anthropic's ``clear_at_least`` object of
  ``input_tokens``, LangChain's ``ClearToolUsesEdit(clear_at_least=...)``) set to
  ``CLEAR_AT_LEAST_SHARE`` (0.25) x the window, everything else as above (only options both
  APIs have; on the 1,000-call sessions it changes nothing for Anthropic's stateless edit, on
  the bundled runs it does), a clearing that
  must buy a quarter of the window to be worth the cache
  rewrite it causes (the reason Anthropic gives for ``clear_at_least``; no default is
  published). Anthropic's edit is then applied only when clearing every old tool use frees that
  much; LangChain's clears oldest first and stops once it has freed that much.

**Trigger at a small window.** Both defaults trigger at 100,000 input tokens, half the
200,000-token window of the Claude models they were written for; a bench window of 32k or
64k never reaches it. Each peer therefore triggers at the same share of its own window:
``TRIGGER_SHARE`` (0.5) x the window (``allowance`` + system + tool schema tokens), the
documented default scaled to the window the way ``--window-tokens`` scales every other token
count (:mod:`regio.bench.pressure`). The middleware counts messages only, so its trigger is
that figure minus the system and tool tokens: both clear at the same point.

**When clearing alone cannot fit.** The edit frees old results but keeps every call, every
placeholder and every other message, so a long session outgrows the window anyway. The API
would then refuse the request (HTTP 400, prompt too long) and LangChain's model call would
fail the same way. The bench keeps the session going with the client-side fallback a user
of either would write: the oldest messages are dropped, keeping the longest suffix that fits
and starts on a user message that is not a tool result (the ``trim`` peer's rule). Each such
request is counted and reported in the notes (``overflowed``); a request whose task message
was dropped is counted broken like any peer's. Anthropic's own alternative
(server-side compaction) summarizes with a model call and would measure a different strategy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

import attrs
import msgspec

from regio.bench.baselines import PlainMessage
from regio.bench.peers.view import PeerView, _LangChainLog, _owner
from regio.cache.applied_edits import apply_edits
from regio.cache.context_editing import ClearToolUses
from regio.cache.types import CacheBlock
from regio.content import Block, Message, ToolResult, canonical_json, content_hash

__all__ = [
    "CLEAR_AT_LEAST_SHARE",
    "EDITING_PEERS",
    "TRIGGER_SHARE",
    "MiddlewareEditPeer",
    "ServerEditPeer",
    "fit_allowance",
]

#: The editing peers, in report order.
EDITING_PEERS: tuple[str, ...] = (
    "anthropic-clear-tool-uses",
    "context-editing-middleware",
    "anthropic-clear-tool-uses-tuned",
    "context-editing-middleware-tuned",
)
#: The documented trigger (100,000 input tokens) as a share of the 200,000-token window.
TRIGGER_SHARE = 100_000 / 200_000
#: The tuned peers' ``clear_at_least`` as a share of the window (module doc).
CLEAR_AT_LEAST_SHARE = 0.25


def _kind(block: Block) -> Any:
    kind = type(block).__struct_config__.tag
    return kind if kind in ("tool_use", "tool_result", "thinking") else "text"


def edited_message(
    message: Message, blocks: Sequence[Block], tokens: Sequence[int]
) -> PlainMessage:
    """A :class:`PlainMessage` of ``message`` with ``blocks`` (``tokens`` per block)."""
    new = Message(message.role, tuple(blocks))
    cache = tuple(
        CacheBlock(
            int(t), content_hash(["messages", new.role, b]), _kind(b), "messages", role=new.role
        )
        for b, t in zip(blocks, tokens, strict=True)
    )
    return PlainMessage(new, sum(tokens), cache)


def _task_start(pm: PlainMessage) -> bool:
    return pm.message.role == "user" and not pm.message.tool_results


def fit_allowance(
    messages: Sequence[PlainMessage], allowance: int
) -> tuple[list[PlainMessage], bool]:
    """(the messages, False) when they fit ``allowance`` tokens; else (the longest suffix that
    fits and starts on a user message that is not a tool result, True); when no such suffix
    fits, the last message alone."""
    total = sum(m.tokens for m in messages)
    if total <= allowance:
        return list(messages), False
    before = [0, *accumulate(m.tokens for m in messages)]
    for s in range(1, len(messages)):
        if total - before[s] <= allowance and _task_start(messages[s]):
            return list(messages[s:]), True
    return list(messages[-1:]), True


def _fit_note(name: str, overflowed: int, calls: int) -> list[str]:
    if not overflowed:
        return []
    return [
        f"{name}: {overflowed} of {calls} requests were still over the window after clearing "
        "(the API refuses them: prompt too long); the oldest messages were dropped to fit"
    ]


@attrs.define
class ServerEditPeer:
    """``anthropic-clear-tool-uses`` (module doc). ``allowance``: conversation tokens;
    ``fixed``: system + tool schema tokens; ``count``: text -> tokens; ``tuned``: the
    ``-tuned`` variant (``clear_at_least`` = :data:`CLEAR_AT_LEAST_SHARE` x the window)."""

    allowance: int
    fixed: int
    count: Any
    tuned: bool = False
    plain: list[PlainMessage] = attrs.field(factory=list)
    sent: list[dict[str, Any]] = attrs.field(factory=list)
    tokens: list[list[int]] = attrs.field(factory=list)
    edited: dict[tuple[int, bytes], PlainMessage] = attrs.field(factory=dict)
    counted: dict[bytes, int] = attrs.field(factory=dict)
    calls: list[Any] = attrs.field(factory=list)
    compacted: bool = False
    overflowed: int = 0
    requests: int = 0
    edit: ClearToolUses = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        window = self.allowance + self.fixed
        at_least = int(window * CLEAR_AT_LEAST_SHARE) if self.tuned else None
        self.edit = ClearToolUses(trigger=int(window * TRIGGER_SHARE), clear_at_least=at_least)

    def _count_block(self, block: Mapping[str, Any]) -> int:
        key = canonical_json(block)
        n = self.counted.get(key)
        if n is None:
            text = block.get("content") if block.get("type") == "tool_result" else key.decode()
            n = self.counted[key] = int(self.count(str(text)))
        return n

    def add(self, pm: PlainMessage) -> None:
        """A recorded message (kept whole: the client's history is never edited)."""
        self.plain.append(pm)
        role = "assistant" if pm.message.role == "assistant" else "user"
        blocks = [msgspec.to_builtins(b) for b in pm.message.blocks]
        self.sent.append({"role": role, "content": blocks})
        self.tokens.append([b.tokens for b in pm.blocks])

    def _shown(
        self, i: int, before: list[Any], after: list[Any], tokens: Sequence[int]
    ) -> PlainMessage:
        """Message ``i`` as the model sees it (unchanged blocks are the same objects: the
        edit never mutates a block, it replaces it)."""
        if len(before) == len(after) and all(a is b for a, b in zip(after, before, strict=True)):
            return self.plain[i]
        key = (i, canonical_json(after))
        pm = self.edited.get(key)
        if pm is None:
            blocks = [msgspec.convert(b, Block) for b in after]
            pm = self.edited[key] = edited_message(self.plain[i].message, blocks, tokens)
        return pm

    def view(self) -> Any:
        """The edited request the model sees (the fallback of the module doc applied)."""

        self.requests += 1
        out = apply_edits(
            self.sent, (self.edit,), self._count_block, fixed_tokens=self.fixed, tokens=self.tokens
        )
        shown = [
            self._shown(i, before["content"], after["content"], out.block_tokens[i])
            for i, (before, after) in enumerate(zip(self.sent, out.messages, strict=True))
        ]
        self.compacted = self.compacted or bool(out.applied)
        shown, over = fit_allowance(shown, self.allowance)
        self.overflowed += over
        return PeerView(shown, summary=False, compacted=self.compacted)

    def notes(self) -> list[str]:
        """What the run could not do as designed (module doc)."""
        name = "anthropic-clear-tool-uses" + ("-tuned" if self.tuned else "")
        return _fit_note(name, self.overflowed, self.requests)


@attrs.define
class MiddlewareEditPeer:
    """``context-editing-middleware`` (module doc). ``allowance``: conversation tokens;
    ``fixed``: system + tool schema tokens; ``count``: text -> tokens; ``tuned``: the
    ``-tuned`` variant (``clear_at_least`` = :data:`CLEAR_AT_LEAST_SHARE` x the window)."""

    allowance: int
    fixed: int
    count: Any
    tuned: bool = False
    log: Any = None
    state: list[Any] = attrs.field(factory=list)
    edited: dict[tuple[int, bytes], PlainMessage] = attrs.field(factory=dict)
    calls: list[Any] = attrs.field(factory=list)
    compacted: bool = False
    overflowed: int = 0
    requests: int = 0
    placeholder_tokens: int = 0
    middleware: Any = None
    model: Any = None

    def __attrs_post_init__(self) -> None:
        from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

        self.log = _LangChainLog()
        window = self.allowance + self.fixed
        at_least = int(window * CLEAR_AT_LEAST_SHARE) if self.tuned else 0
        edit = ClearToolUsesEdit(
            trigger=max(1, int(window * TRIGGER_SHARE) - self.fixed), clear_at_least=at_least
        )
        self.placeholder_tokens = int(self.count(edit.placeholder))
        self.middleware = ContextEditingMiddleware(edits=[edit], token_counter=self._count)
        self.model = GenericFakeChatModel(messages=iter(()))

    @staticmethod
    def _cleared(m: object) -> bool:
        meta = getattr(m, "response_metadata", None) or {}
        return bool(meta.get("context_editing", {}).get("cleared"))

    def _count(self, items: Sequence[Any]) -> int:
        tokens = self.log.tokens
        return sum(
            self.placeholder_tokens if self._cleared(m) else tokens[str(m.id)] for m in items
        )

    def add(self, pm: PlainMessage) -> None:
        """A recorded message (appended to the agent state)."""
        self.state.extend(self.log.add(pm))

    def _run_hook(self) -> list[Any]:
        from langchain.agents.middleware.types import ModelRequest

        seen: list[Any] = []

        def handler(request: ModelRequest) -> Any:
            seen.extend(request.messages)
            return None

        request = ModelRequest(model=self.model, messages=list(self.state))
        self.middleware.wrap_model_call(request, handler)
        return seen

    def _message(self, owner: int, parts: list[Any]) -> PlainMessage:
        pm = self.log.plain[owner]
        cleared = [j for j, m in enumerate(parts) if self._cleared(m)]
        if not cleared:
            return pm
        key = (owner, canonical_json(cleared))
        found = self.edited.get(key)
        if found is None:
            blocks: list[Block] = []
            j = 0
            for b in pm.message.blocks:
                if isinstance(b, ToolResult):
                    if j in cleared:
                        b = ToolResult(b.tool_use_id, str(parts[j].content))
                    j += 1
                blocks.append(b)
            toks = [
                self.placeholder_tokens if nb is not ob else t
                for nb, ob, t in zip(
                    blocks, pm.message.blocks, (c.tokens for c in pm.blocks), strict=True
                )
            ]
            found = self.edited[key] = edited_message(pm.message, blocks, toks)
        return found

    def view(self) -> Any:
        """Run ``wrap_model_call``; the messages it hands the model are sent."""

        self.requests += 1
        seen = self._run_hook()
        groups: dict[int, list[Any]] = {}
        for m in seen:
            groups.setdefault(_owner(m.id), []).append(m)
        shown = [self._message(owner, parts) for owner, parts in groups.items()]
        self.compacted = self.compacted or any(self._cleared(m) for m in seen)
        shown, over = fit_allowance(shown, self.allowance)
        self.overflowed += over
        return PeerView(shown, summary=False, compacted=self.compacted)

    def notes(self) -> list[str]:
        """What the run could not do as designed (module doc)."""
        name = "context-editing-middleware" + ("-tuned" if self.tuned else "")
        return _fit_note(name, self.overflowed, self.requests)
