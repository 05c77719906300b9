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
  billed as the request a real LLM summarizer would receive. Its default
  ``trim_tokens_to_summarize=4000`` hands the model only the last 4,000 tokens of what it
  drops, starting on a human message; a tool-heavy session's dropped part rarely has one
  that close, and then the middleware writes "Previous conversation was too long to
  summarize." without calling the model: such a summary does not stand for the task.
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

import html
import importlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from regio.bench.baselines import PlainMessage, plain_message
from regio.bench.peers.editing import EDITING_PEERS, MiddlewareEditPeer, ServerEditPeer
from regio.bench.peers.frameworks import AgentFrameworkPeer, MemoryPeer
from regio.bench.peers.providers import PROVIDER_PEERS, PROVIDER_RULES, ProviderCompactionPeer
from regio.bench.peers.view import CompactionCall, PeerView, _LangChainLog, _owner
from regio.content import Entry, Message, Text, block_text
from regio.summarizers._extractive import ExtractiveSummarizer

if TYPE_CHECKING:
    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.messages import BaseMessage, MessageLikeRepresentation

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

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: CallbackManagerForLLMRun | None = None,
            **kw: Any,
        ) -> ChatResult:
            prompt = "\n".join(str(m.content) for m in messages)
            self.prompts.append(prompt)
            entry = Entry(id="prompt", blocks=(Text(prompt),), role="user")
            summary = summarizer([entry], "", None) or "None"
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=summary))])

    return ExtractiveChatModel(messages=iter(()))


#: ``SummarizationMiddleware``'s default ``trim_tokens_to_summarize`` (LangChain 1.x): the
#: tokens of the dropped messages its summary model reads, the last ones
TRIM_TOKENS_TO_SUMMARIZE = 4000


@attrs.define
class SummarizationPeer:
    """LangChain v1 ``SummarizationMiddleware`` (module doc). ``allowance``: conversation
    tokens; ``summarizer``: the offline summarizer behind the fake chat model; ``count``:
    text -> tokens; ``tasks``: the texts of the trace's task messages.

    A summary stands for the task (:attr:`PeerView.summary`) only when its summary model read
    the task, or a summary standing for it, in the prompt it wrote that summary from
    (``standing``: those summaries' ids -> texts). The middleware hands its model the last
    ``trim_tokens_to_summarize`` (4,000) tokens of the messages it drops, starting on a human
    message; when nothing fits it writes ``"Previous conversation was too long to
    summarize."`` without calling the model, a summary of nothing (LangChain 1.x,
    ``SummarizationMiddleware._create_summary``)."""

    allowance: int
    summarizer: ExtractiveSummarizer
    count: Any
    tasks: frozenset[str] = frozenset()
    whole: bool = False
    log: _LangChainLog = attrs.field(factory=_LangChainLog)
    state: list[Any] = attrs.field(factory=list)
    summaries: dict[str, PlainMessage] = attrs.field(factory=dict)
    standing: dict[str, str] = attrs.field(factory=dict)
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
            trim_tokens_to_summarize=None if self.whole else TRIM_TOKENS_TO_SUMMARIZE,
        )

    def _count(self, items: Iterable[MessageLikeRepresentation]) -> int:
        # LangChain passes BaseMessages; its signature also admits their plain forms
        total = 0
        for m in items:
            known = self.log.tokens.get(str(getattr(m, "id", "")))
            total += known if known is not None else int(self.count(str(getattr(m, "content", m))))
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
            summary = next(m for m in self.state if not str(m.id or "").startswith("m"))
            if summary.id is None:  # else LangChain gives it a random uuid at its next call
                summary.id = f"summary-{len(self.calls)}-{len(self.summaries)}"
            text = str(summary.content)
            if self._reads_task(self.model.prompts):
                self.standing[str(summary.id)] = text
            for prompt in self.model.prompts:
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
        summary = any(str(m.id or "") in self.standing for m in self.state)
        return PeerView(messages, summary=summary, compacted=self.compacted)

    def _reads_task(self, prompts: Sequence[str]) -> bool:
        """Whether a summary written from ``prompts`` (its model's prompts; none: the
        middleware wrote it without a model call) stands for the task (class doc); with no
        ``tasks`` known, whether a model wrote it at all."""
        if not prompts:
            return False
        if not self.tasks:
            return True
        read = (*self.tasks, *self.standing.values())
        # the middleware's prompt escapes the messages it quotes (``<`` as ``&lt;``)
        return any(t in html.unescape(p) for p in prompts for t in read)


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
