"""Peers: what users run today to keep an agent inside its window, each on its real package.

Every peer sees the recorded trace as the agent sent it (the trace's system prompt and tool
schemas, the messages untouched: no regions, no capture) and keeps the conversation inside
the same window as the layouts: ``allowance`` (:func:`peer_allowance`) = the blueprint's
window (tokens, after ``--window-tokens``) minus the system prompt and tool schema tokens.
Its kept messages are rendered as a :func:`regio.bench.baselines.plain_request`.

* ``trim`` (:class:`TrimPeer`) — ``langchain_core.messages.trim_messages`` with its
  documented recipe (``strategy="last"``, ``start_on="human"``, ``include_system=True``,
  ``max_tokens`` = allowance + system tokens) on every call. Only the shortest suffix that
  cannot fit (the messages that fit plus one) is handed to it: ``strategy="last"`` keeps the
  longest fitting suffix, so the result is the same as on the whole list, and each call costs
  O(window) instead of O(conversation).
* ``summarization-middleware`` (:class:`SummarizationPeer`) — LangChain v1
  ``langchain.agents.middleware.SummarizationMiddleware`` (``trigger=("tokens", 80% of the
  allowance)``, ``keep=("tokens", 30% of the allowance)``), its ``before_model`` hook run
  before every call on the agent state it returned last time. Its summary model is a fake
  chat model (:class:`ExtractiveChatModel`) that answers with regio's offline extractive
  summary of the prompt it receives; that prompt is recorded, so each summarizer call is
  billed as the request a real LLM summarizer would receive.
* ``llamaindex-memory`` (:class:`MemoryPeer`) — ``llama_index.core.memory.Memory``
  (``token_limit`` = allowance, its defaults otherwise: ``chat_history_token_ratio=0.7`` and
  its token flush), one ``put`` per message and ``get()`` before every call; no memory blocks,
  so flushed messages are archived and nothing summarizes them. Its messages are kept in an
  in-process chat store (:func:`list_chat_store`) instead of its default SQLite one.
* ``agent-framework-truncation`` (:class:`AgentFrameworkPeer`) — Microsoft Agent Framework's
  compaction (``agent_framework.apply_compaction`` with ``TruncationStrategy(max_n=allowance,
  compact_to=allowance // 2, tokenizer=regio's counter)``, experimental in Python,
  https://learn.microsoft.com/agent-framework/agents/conversations/compaction) on the message
  list it keeps, before every call: whole tool-call groups are excluded oldest first.
* ``anthropic-clear-tool-uses`` and ``context-editing-middleware`` — old tool results cleared
  instead of summarized (Anthropic's server-side edit, simulated; LangChain's
  ``ContextEditingMiddleware``): :mod:`regio.bench.editing_peers`.

Token counts are regio's (the blueprint's tokenizer) for every peer. Each peer raises
``ImportError`` at construction when its package is missing; :func:`peer_available` says
whether it can be built.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import attrs

from regio.bench.baselines import PlainMessage, plain_message
from regio.bench.editing_peers import EDITING_PEERS, MiddlewareEditPeer, ServerEditPeer
from regio.bench.peerview import CompactionCall, PeerView, _LangChainLog, _owner
from regio.content import Entry, Message, Text, ToolUse, block_text
from regio.runtime.extractive import ExtractiveSummarizer

__all__ = [
    "PEERS",
    "PEER_PACKAGES",
    "AgentFrameworkPeer",
    "CompactionCall",
    "MemoryPeer",
    "PeerView",
    "SummarizationPeer",
    "TrimPeer",
    "make_peer",
    "peer_allowance",
    "peer_available",
    "peer_versions",
]

#: Peer names, in report order.
PEERS: tuple[str, ...] = (
    "trim",
    "summarization-middleware",
    "llamaindex-memory",
    "agent-framework-truncation",
    *EDITING_PEERS,
)
#: Peer -> (module imported to check it, distribution name for its version).
PEER_PACKAGES: dict[str, tuple[str, str]] = {
    "trim": ("langchain_core.messages", "langchain-core"),
    "summarization-middleware": ("langchain.agents.middleware", "langchain"),
    "llamaindex-memory": ("llama_index.core.memory", "llama-index-core"),
    "agent-framework-truncation": ("agent_framework", "agent-framework-core"),
    "anthropic-clear-tool-uses": ("regio.cache.context_editing", "regio"),
    "context-editing-middleware": ("langchain.agents.middleware", "langchain"),
    "anthropic-clear-tool-uses-tuned": ("regio.cache.context_editing", "regio"),
    "context-editing-middleware-tuned": ("langchain.agents.middleware", "langchain"),
}


def peer_allowance(window_tokens: int, system_tokens: int, tool_tokens: int) -> int:
    """The conversation allowance of every peer (tokens): the blueprint's window
    ``window_tokens`` (after ``--window-tokens``) minus the system prompt's
    ``system_tokens`` and the tool schemas' ``tool_tokens``. A message larger than it is
    skipped by the peers (:func:`regio.bench.replay.replay` notes it)."""
    return window_tokens - system_tokens - tool_tokens


def peer_available(name: str) -> bool:
    """True when the package of peer ``name`` imports."""
    try:
        importlib.import_module(PEER_PACKAGES[name][0])
    except ImportError:
        return False
    return True


def peer_versions() -> dict[str, str]:
    """Installed distribution versions of the peers' third-party packages (missing ones left
    out; ``anthropic-clear-tool-uses`` is simulated by regio, so regio is not listed)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for _module, dist in PEER_PACKAGES.values():
        if dist == "regio":
            continue
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return out


def _text(message: Message) -> str:
    return "\n".join(block_text(b) for b in message.blocks)


@attrs.define
class TrimPeer:
    """``trim_messages`` on every call (module doc). ``allowance``: conversation tokens;
    ``system_tokens``: the system prompt's tokens."""

    allowance: int
    system_tokens: int
    log: _LangChainLog = attrs.field(factory=_LangChainLog)
    compacted: bool = False
    calls: list[CompactionCall] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        from langchain_core.messages import trim_messages  # noqa: F401

    def add(self, pm: PlainMessage) -> None:
        """A recorded message."""
        self.log.add(pm)

    def _count(self, items: Sequence[Any]) -> int:
        tokens = self.log.tokens
        return sum(tokens.get(str(m.id), self.system_tokens) for m in items)

    def view(self) -> PeerView:
        """The messages ``trim_messages`` keeps for this call."""
        from langchain_core.messages import SystemMessage, trim_messages

        lc = self.log.lc
        start, used = len(lc), 0
        while start > 0 and used <= self.allowance:
            start -= 1
            used += self.log.tokens[str(lc[start].id)]
        kept = trim_messages(
            [SystemMessage(content="", id="system"), *lc[start:]],
            max_tokens=self.allowance + self.system_tokens,
            token_counter=self._count,
            strategy="last",
            start_on="human",
            include_system=True,
        )
        messages = self.log.regio_messages(kept)
        self.compacted = self.compacted or len(messages) < len(self.log.plain)
        return PeerView(messages, summary=False, compacted=self.compacted)


def extractive_chat_model(summarizer: ExtractiveSummarizer) -> Any:
    """A LangChain chat model (a fake: no network) whose answer is ``summarizer``'s offline
    extractive summary of the prompt it receives; ``.prompts`` records every prompt text."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ExtractiveChatModel(GenericFakeChatModel):
        prompts: list[str] = []  # noqa: RUF012 - pydantic field, copied per instance

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
            prompt = "\n".join(str(m.content) for m in messages)
            self.prompts.append(prompt)
            entry = Entry(id="prompt", blocks=(Text(prompt),), role="user")
            summary = summarizer([entry], "", None) or "None"
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=summary))])

    return ExtractiveChatModel(messages=iter(()))


@attrs.define
class SummarizationPeer:
    """LangChain v1 ``SummarizationMiddleware`` (module doc). ``allowance``: conversation
    tokens; ``summarizer``: the offline summarizer behind the fake chat model; ``count``:
    text -> tokens."""

    allowance: int
    summarizer: ExtractiveSummarizer
    count: Any
    log: _LangChainLog = attrs.field(factory=_LangChainLog)
    state: list[Any] = attrs.field(factory=list)
    summaries: dict[str, PlainMessage] = attrs.field(factory=dict)
    calls: list[CompactionCall] = attrs.field(factory=list)
    compacted: bool = False
    middleware: Any = None
    model: Any = None

    def __attrs_post_init__(self) -> None:
        from langchain.agents.middleware import SummarizationMiddleware

        self.model = extractive_chat_model(self.summarizer)
        self.middleware = SummarizationMiddleware(
            self.model,
            trigger=("tokens", max(1, int(self.allowance * 0.8))),
            keep=("tokens", max(1, int(self.allowance * 0.3))),
            token_counter=self._count,
        )

    def _count(self, items: Any) -> int:
        total = 0
        for m in items:
            known = self.log.tokens.get(str(getattr(m, "id", "")))
            total += known if known is not None else int(self.count(str(m.content)))
        return total

    def add(self, pm: PlainMessage) -> None:
        """A recorded message (appended to the agent state)."""
        self.state.extend(self.log.add(pm))

    def view(self) -> PeerView:
        """Run ``before_model`` on the state; the state it leaves is what is sent."""
        from langchain_core.messages import RemoveMessage

        update = self.middleware.before_model({"messages": self.state}, None)
        if update is not None:
            self.compacted = True
            self.state = [m for m in update["messages"] if not isinstance(m, RemoveMessage)]
            for prompt in self.model.prompts:
                summary = next(m for m in self.state if not str(m.id or "").startswith("m"))
                text = str(summary.content)
                self.calls.append(
                    CompactionCall(prompt, int(self.count(prompt)), int(self.count(text)))
                )
            self.model.prompts.clear()
        messages: list[PlainMessage] = []
        seen: set[int] = set()
        for m in self.state:
            mid = str(m.id or "")
            if mid.startswith("m"):
                owner = _owner(mid)
                if owner not in seen:
                    seen.add(owner)
                    messages.append(self.log.plain[owner])
                continue
            if mid not in self.summaries:
                text = str(m.content)
                self.summaries[mid] = plain_message(Message.user(text), int(self.count(text)))
            messages.append(self.summaries[mid])
        summary = len(seen) < len(messages)
        return PeerView(messages, summary=summary, compacted=self.compacted)


def list_chat_store() -> Any:
    """An in-process ``llama_index.core.storage.chat_store.base_db.AsyncDBChatStore`` (the
    store interface ``Memory.from_defaults(chat_store=...)`` accepts): active and archived
    messages kept in lists. Memory's default store is SQLite through SQLAlchemy (about 35 ms
    per ``put`` here); the flush logic, which is what is compared, is the same."""
    from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
    from pydantic import Field

    class ListChatStore(AsyncDBChatStore):
        rows: dict[str, list[tuple[Any, Any]]] = Field(default_factory=dict)

        def _of(self, key: str, status: Any) -> list[Any]:
            rows = self.rows.get(key, [])
            return [m for m, st in rows if status is None or st == status]

        async def get_messages(
            self,
            key: str,
            status: Any = MessageStatus.ACTIVE,
            limit: Any = None,
            offset: Any = None,
        ) -> list[Any]:
            found = self._of(key, status)[offset or 0 :]
            return found[:limit] if limit is not None else found

        async def count_messages(self, key: str, status: Any = MessageStatus.ACTIVE) -> int:
            return len(self._of(key, status))

        async def add_message(
            self, key: str, message: Any, status: Any = MessageStatus.ACTIVE
        ) -> None:
            self.rows.setdefault(key, []).append((message, status))

        async def add_messages(
            self, key: str, messages: Any, status: Any = MessageStatus.ACTIVE
        ) -> None:
            self.rows.setdefault(key, []).extend((m, status) for m in messages)

        async def set_messages(
            self, key: str, messages: Any, status: Any = MessageStatus.ACTIVE
        ) -> None:
            self.rows[key] = [(m, status) for m in messages]

        async def delete_message(self, key: str, idx: int) -> Any:
            rows = self.rows.get(key, [])
            return rows.pop(idx)[0] if 0 <= idx < len(rows) else None

        async def delete_messages(self, key: str, status: Any = None) -> None:
            rows = self.rows.get(key, [])
            self.rows[key] = [r for r in rows if status is not None and r[1] != status]

        async def _take_oldest(self, key: str, n: int, archive: bool) -> list[Any]:
            rows = self.rows.get(key, [])
            taken: list[Any] = []
            kept: list[tuple[Any, Any]] = []
            for m, st in rows:
                if st == MessageStatus.ACTIVE and len(taken) < n:
                    taken.append(m)
                    if archive:
                        kept.append((m, MessageStatus.ARCHIVED))
                else:
                    kept.append((m, st))
            self.rows[key] = kept
            return taken

        async def delete_oldest_messages(self, key: str, n: int) -> list[Any]:
            return await self._take_oldest(key, n, archive=False)

        async def archive_oldest_messages(self, key: str, n: int) -> list[Any]:
            return await self._take_oldest(key, n, archive=True)

        async def get_keys(self) -> list[str]:
            return list(self.rows)

    return ListChatStore()


@attrs.define
class MemoryPeer:
    """llama-index-core ``Memory`` with its token flush (module doc). ``allowance``:
    conversation tokens (its ``token_limit``); ``count``: text -> tokens."""

    allowance: int
    count: Any
    plain: list[PlainMessage] = attrs.field(factory=list)
    counted: dict[str, int] = attrs.field(factory=dict)
    calls: list[CompactionCall] = attrs.field(factory=list)
    compacted: bool = False
    memory: Any = None

    def __attrs_post_init__(self) -> None:
        from llama_index.core.memory import Memory

        self.memory = Memory.from_defaults(
            token_limit=max(1, self.allowance),
            tokenizer_fn=self._tokenize,
            chat_store=list_chat_store(),
        )

    def _tokenize(self, text: str) -> list[int]:
        n = self.counted.get(text)
        if n is None:
            n = self.counted[text] = int(self.count(text))
        return [0] * n

    def add(self, pm: PlainMessage) -> None:
        """A recorded message (``Memory.put``)."""
        from llama_index.core.llms import ChatMessage

        role = "tool" if pm.message.tool_results else pm.message.role
        self.memory.put(
            ChatMessage(
                role=role,
                content=_text(pm.message),
                additional_kwargs={"regio_message": len(self.plain)},
            )
        )
        self.plain.append(pm)

    def view(self) -> PeerView:
        """``Memory.get()``: the active chat history."""
        got = self.memory.get()
        owners = dict.fromkeys(int(m.additional_kwargs["regio_message"]) for m in got)
        messages = [self.plain[i] for i in owners]
        self.compacted = self.compacted or len(messages) < len(self.plain)
        return PeerView(messages, summary=False, compacted=self.compacted)


class _AgentFrameworkTokenizer:
    """``TokenizerProtocol`` of agent_framework with regio's counter (text -> tokens)."""

    def __init__(self, count: Any) -> None:
        self.count = count

    def count_tokens(self, text: str) -> int:
        return int(self.count(text))


def _to_agent_framework(index: int, pm: PlainMessage) -> Any:
    """An ``agent_framework.Message`` of one regio message, tagged with its index."""
    from agent_framework import Content
    from agent_framework import Message as AFMessage

    message = pm.message
    tag = {"regio_message": index}
    if message.tool_results:
        contents = [
            Content.from_function_result(r.tool_use_id, result=r.content)
            for r in message.tool_results
        ]
        return AFMessage("tool", contents, additional_properties=tag)
    if message.role == "assistant":
        contents = [Content.from_text(b.text) for b in message.blocks if isinstance(b, Text)]
        contents += [
            Content.from_function_call(b.id, b.name, arguments=dict(b.input))
            for b in message.blocks
            if isinstance(b, ToolUse)
        ]
        return AFMessage("assistant", contents, additional_properties=tag)
    return AFMessage("user", [Content.from_text(message.text)], additional_properties=tag)


@attrs.define
class AgentFrameworkPeer:
    """Microsoft Agent Framework ``TruncationStrategy`` through ``apply_compaction`` (module
    doc). ``allowance``: conversation tokens; ``count``: text -> tokens."""

    allowance: int
    count: Any
    plain: list[PlainMessage] = attrs.field(factory=list)
    messages: list[Any] = attrs.field(factory=list)
    calls: list[CompactionCall] = attrs.field(factory=list)
    compacted: bool = False
    strategy: Any = None
    tokenizer: Any = None

    def __attrs_post_init__(self) -> None:
        from agent_framework import TruncationStrategy

        self.tokenizer = _AgentFrameworkTokenizer(self.count)
        limit = max(2, self.allowance)
        self.strategy = TruncationStrategy(
            max_n=limit, compact_to=limit // 2, tokenizer=self.tokenizer
        )

    def add(self, pm: PlainMessage) -> None:
        """A recorded message."""
        self.messages.append(_to_agent_framework(len(self.plain), pm))
        self.plain.append(pm)

    def view(self) -> PeerView:
        """``apply_compaction`` on the kept list; the included messages are sent."""
        import asyncio

        from agent_framework import apply_compaction

        kept = asyncio.run(
            apply_compaction(self.messages, strategy=self.strategy, tokenizer=self.tokenizer)
        )
        # Truncation never includes an excluded message again, so the excluded ones are
        # dropped from the list it is handed next time (its cost stays O(window) per call).
        self.messages = list(kept)
        owners = dict.fromkeys(int(m.additional_properties["regio_message"]) for m in kept)
        messages = [self.plain[i] for i in owners]
        self.compacted = self.compacted or len(messages) < len(self.plain)
        return PeerView(messages, summary=False, compacted=self.compacted)


Peer = (
    TrimPeer
    | SummarizationPeer
    | MemoryPeer
    | AgentFrameworkPeer
    | ServerEditPeer
    | MiddlewareEditPeer
)


def make_peer(
    name: str,
    allowance: int,
    system_tokens: int,
    count: Any,
    summarizer: ExtractiveSummarizer,
    fixed: int | None = None,
) -> Peer:
    """The peer ``name`` of :data:`PEERS`; ``fixed``: system + tool schema tokens (default
    ``system_tokens``; the context-editing peers' trigger counts them,
    :mod:`regio.bench.editing_peers`). ``ImportError`` when its package is missing,
    ``ValueError`` for an unknown name."""
    if name == "trim":
        return TrimPeer(allowance, system_tokens)
    if name == "summarization-middleware":
        return SummarizationPeer(allowance, summarizer, count)
    if name == "llamaindex-memory":
        return MemoryPeer(allowance, count)
    if name == "agent-framework-truncation":
        return AgentFrameworkPeer(allowance, count)
    if name in ("anthropic-clear-tool-uses", "anthropic-clear-tool-uses-tuned"):
        tuned = name.endswith("-tuned")
        return ServerEditPeer(allowance, system_tokens if fixed is None else fixed, count, tuned)
    if name in ("context-editing-middleware", "context-editing-middleware-tuned"):
        tuned = name.endswith("-tuned")
        return MiddlewareEditPeer(
            allowance, system_tokens if fixed is None else fixed, count, tuned
        )
    raise ValueError(f"unknown peer {name!r}; use one of {', '.join(PEERS)}")
