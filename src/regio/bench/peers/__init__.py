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
* ``summarization-middleware`` (:class:`SummarizationPeer`,
  :mod:`regio.bench.peers.summarization`) — LangChain v1
  ``langchain.agents.middleware.SummarizationMiddleware`` (``trigger=("tokens", 80% of the
  allowance)``, ``keep=("tokens", 30% of the allowance)``), its ``before_model`` hook run
  before every call on the agent state it returned last time, its summary model a fake chat
  model answering with regio's offline extractive summary of the messages it is handed; each
  summarizer call is billed as the request a real LLM summarizer would receive. A summary
  stands for the task only when its model read the task, or a summary that did; with the
  default ``trim_tokens_to_summarize=4000`` a tool-heavy session's summary is often
  "Previous conversation was too long to summarize.", written without a model call.
* ``summarization-middleware-tuned`` — the same with ``trim_tokens_to_summarize=None`` (the
  documented way to skip that trimming): its model reads everything it drops, so each
  summary is written from the whole dropped part, and billed for it.
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
  ``ContextEditingMiddleware``): :mod:`regio.bench.peers.editing`.
* ``anthropic-compaction`` and ``openai-compaction`` — the providers' own server-side
  compaction, simulated from their documentation: :mod:`regio.bench.peers.providers`.

Token counts are regio's (the blueprint's tokenizer) for every peer. Each peer raises
``ImportError`` at construction when its package is missing; :func:`peer_available` says
whether it can be built.

Modules: this package's face holds the registry (:data:`PEERS`, :data:`PEER_PACKAGES`,
:func:`peer_available`) and the LangChain peers; :mod:`~regio.bench.peers.frameworks` the
LlamaIndex and Agent Framework ones; :mod:`~regio.bench.peers.editing` the result-clearing
ones (Anthropic's server edit, LangChain's middleware); :mod:`~regio.bench.peers.providers`
the providers' own compaction; :mod:`~regio.bench.peers.view` what every peer shares (the
messages it keeps, its compaction calls).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from regio.bench.baselines import PlainMessage
from regio.bench.peers.editing import EDITING_PEERS, MiddlewareEditPeer, ServerEditPeer
from regio.bench.peers.frameworks import AgentFrameworkPeer, MemoryPeer
from regio.bench.peers.providers import PROVIDER_PEERS, PROVIDER_RULES, ProviderCompactionPeer
from regio.bench.peers.summarization import SummarizationPeer
from regio.bench.peers.view import CompactionCall, PeerView, _LangChainLog
from regio.summarizers._extractive import ExtractiveSummarizer

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
    "summarization-middleware-tuned",
    "llamaindex-memory",
    "agent-framework-truncation",
    *EDITING_PEERS,
    *PROVIDER_PEERS,
)
#: Peer -> (module imported to check it, distribution name for its version). The peers regio
#: simulates itself (distribution ``regio``) name no module: they are always available.
PEER_PACKAGES: dict[str, tuple[str | None, str]] = {
    "trim": ("langchain_core.messages", "langchain-core"),
    "summarization-middleware": ("langchain.agents.middleware", "langchain"),
    "summarization-middleware-tuned": ("langchain.agents.middleware", "langchain"),
    "llamaindex-memory": ("llama_index.core.memory", "llama-index-core"),
    "agent-framework-truncation": ("agent_framework", "agent-framework-core"),
    "anthropic-clear-tool-uses": (None, "regio"),
    "context-editing-middleware": ("langchain.agents.middleware", "langchain"),
    "anthropic-clear-tool-uses-tuned": (None, "regio"),
    "context-editing-middleware-tuned": ("langchain.agents.middleware", "langchain"),
    "anthropic-compaction": (None, "regio"),
    "openai-compaction": (None, "regio"),
}


def peer_allowance(window_tokens: int, system_tokens: int, tool_tokens: int) -> int:
    """The conversation allowance of every peer (tokens): the blueprint's window
    ``window_tokens`` (after ``--window-tokens``) minus the system prompt's
    ``system_tokens`` and the tool schemas' ``tool_tokens``. A message larger than it is
    skipped by the peers (:func:`regio.bench.replay.replay` notes it)."""
    return window_tokens - system_tokens - tool_tokens


def peer_available(name: str) -> bool:
    """True when the package of peer ``name`` imports (always for a peer regio simulates)."""
    module = PEER_PACKAGES[name][0]
    if module is None:
        return True
    try:
        importlib.import_module(module)
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


Peer = (
    TrimPeer
    | SummarizationPeer
    | MemoryPeer
    | AgentFrameworkPeer
    | ServerEditPeer
    | MiddlewareEditPeer
    | ProviderCompactionPeer
)


def make_peer(
    name: str,
    allowance: int,
    system_tokens: int,
    count: Callable[[str], int],
    summarizer: ExtractiveSummarizer,
    fixed: int | None = None,
    window: int | None = None,
    tasks: frozenset[str] = frozenset(),
) -> Peer:
    """The peer ``name`` of :data:`PEERS`; ``tasks``: the trace's task texts (a summary that
    never read them does not stand for them, :class:`SummarizationPeer`); ``fixed``: system
    + tool schema tokens (default ``system_tokens``; the context-editing peers' trigger counts
    them,
    :mod:`regio.bench.peers.editing`); ``window``: the model's context window (tokens; the
    provider peers' trigger is scaled to it, default ``allowance + fixed``). ``ImportError``
    when its package is missing, ``ValueError`` for an unknown name."""
    if name == "trim":
        return TrimPeer(allowance, system_tokens)
    if name in ("summarization-middleware", "summarization-middleware-tuned"):
        whole = name.endswith("-tuned")
        return SummarizationPeer(allowance, summarizer, count, tasks, whole=whole)
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
    if name in PROVIDER_RULES:
        rule = PROVIDER_RULES[name]
        base = system_tokens if fixed is None else fixed
        trigger = rule.trigger(window if window is not None else allowance + base)
        return ProviderCompactionPeer(rule, trigger, base, summarizer, count)
    raise ValueError(f"unknown peer {name!r}; use one of {', '.join(PEERS)}")
