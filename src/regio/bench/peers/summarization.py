"""LangChain v1 ``SummarizationMiddleware`` as a peer (:class:`SummarizationPeer`), its fake
summary model (:func:`extractive_chat_model`), and which of its summaries stand for the task.

**What its model reads.** The middleware hands its model the last ``trim_tokens_to_summarize``
tokens (default 4,000, :data:`TRIM_TOKENS_TO_SUMMARIZE`) of the messages it drops, trimmed by
``trim_messages(strategy="last", start_on="human", allow_partial=True)``; when nothing is left
it writes ``"Previous conversation was too long to summarize."`` without calling the model
(LangChain 1.x, ``SummarizationMiddleware._create_summary``). The peer records the ids of the
messages each trim kept (a partly kept message keeps its id), so a summary's lineage is known
by id: it **stands for the task** when its model was called and read a task message (whole or
in part) or a summary that stands for it. Without known task texts, a summary stands when a
model wrote it. ``summarization-middleware-tuned`` sets ``trim_tokens_to_summarize=None``
(the documented way to skip that trimming): its model reads everything dropped.

**Counting.** The middleware counts with the peer's counter: an original message by the tokens
regio counted for it, any other text (a summary, a message the trim cut short) by the
tokenizer, as LangChain's own counter counts text.

**The fake model** answers with regio's offline extractive summary of the messages its prompt
quotes (the ``<messages>`` section of LangChain's summary prompt, unescaped: the middleware
escapes ``&``, ``<`` and ``>`` in them), not of the prompt's own instructions; its prompt is
recorded whole, and each call is billed as that prompt (what a real model would receive).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from regio.bench.baselines import PlainMessage, plain_message
from regio.bench.peers.view import CompactionCall, PeerView, _LangChainLog, _owner, message_text
from regio.content import Entry, Message, Text
from regio.summarizers._extractive import ExtractiveSummarizer

if TYPE_CHECKING:
    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.messages import BaseMessage, MessageLikeRepresentation

__all__ = ["TRIM_TOKENS_TO_SUMMARIZE", "SummarizationPeer", "extractive_chat_model", "quoted"]

#: ``SummarizationMiddleware``'s default ``trim_tokens_to_summarize`` (LangChain 1.x)
TRIM_TOKENS_TO_SUMMARIZE = 4000


def quoted(prompt: str) -> str:
    """The messages LangChain's summary prompt quotes: the text between its ``<messages>``
    and ``</messages>`` lines, unescaped (module doc); the whole prompt when it has none."""
    start, end = prompt.find("<messages>"), prompt.rfind("</messages>")
    if start < 0 or end < start:
        return prompt
    return html.unescape(prompt[start + len("<messages>") : end])


def extractive_chat_model(summarizer: ExtractiveSummarizer) -> Any:
    """A LangChain chat model (a fake: no network) whose answer is ``summarizer``'s offline
    extractive summary of what its prompt quotes (:func:`quoted`); ``.prompts`` records every
    prompt text, whole."""
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
            entry = Entry(id="prompt", blocks=(Text(quoted(prompt)),), role="user")
            summary = summarizer([entry], "", None) or "None"
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=summary))])

    return ExtractiveChatModel(messages=iter(()))


@attrs.define
class SummarizationPeer:
    """LangChain v1 ``SummarizationMiddleware`` (module doc). ``allowance``: conversation
    tokens; ``summarizer``: the offline summarizer behind the fake chat model; ``count``:
    text -> tokens; ``tasks``: the texts of the trace's task messages (each whole message's
    text, :func:`regio.bench.replaysetup.message_text`); ``whole``: the ``-tuned`` variant.
    ``standing``: the ids of the summaries that stand for the task; ``read``: the ids of the
    messages the last trim handed the model."""

    allowance: int
    summarizer: ExtractiveSummarizer
    count: Callable[[str], int]
    tasks: frozenset[str] = frozenset()
    whole: bool = False
    log: _LangChainLog = attrs.field(factory=_LangChainLog)
    state: list[Any] = attrs.field(factory=list)
    summaries: dict[str, PlainMessage] = attrs.field(factory=dict)
    standing: set[str] = attrs.field(factory=set)
    task_ids: set[str] = attrs.field(factory=set)
    read: list[str] = attrs.field(factory=list)
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
        trim = self.middleware._trim_messages_for_summary

        def recorded_trim(messages: list[Any]) -> list[Any]:
            kept = trim(messages)
            self.read = [str(m.id) for m in kept]
            return kept

        # an instance attribute: the middleware calls ``self._trim_messages_for_summary``
        self.middleware._trim_messages_for_summary = recorded_trim

    def _count(self, items: Iterable[MessageLikeRepresentation]) -> int:
        # LangChain passes BaseMessages; its signature also admits their plain forms
        total = 0
        for m in items:
            known = self.log.logged_tokens(m)
            total += known if known is not None else int(self.count(str(getattr(m, "content", m))))
        return total

    def add(self, pm: PlainMessage) -> None:
        """A recorded message (appended to the agent state)."""
        parts = self.log.add(pm)
        if pm.message.role == "user" and message_text(pm.message) in self.tasks:
            self.task_ids.update(str(m.id) for m in parts)
        self.state.extend(parts)

    def view(self) -> PeerView:
        """Run ``before_model`` on the state; the state it leaves is what is sent."""
        from langchain_core.messages import RemoveMessage

        self.read = []
        update = self.middleware.before_model({"messages": self.state}, None)
        if update is not None:
            self._compacted(update["messages"], RemoveMessage)
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

    def _compacted(self, update: Sequence[Any], remove: type) -> None:
        """Take the middleware's new state; bill its model's calls; note whether the summary
        it wrote stands for the task (module doc)."""
        self.compacted = True
        self.state = [m for m in update if not isinstance(m, remove)]
        summary = next(m for m in self.state if not str(m.id or "").startswith("m"))
        if summary.id is None:  # else LangChain gives it a random uuid at its next call
            summary.id = f"summary-{len(self.summaries)}"
        called = bool(self.model.prompts)
        lineage = self.task_ids | self.standing if self.tasks else None
        if called and (lineage is None or any(i in lineage for i in self.read)):
            self.standing.add(str(summary.id))
        text = str(summary.content)
        for prompt in self.model.prompts:
            self.calls.append(
                CompactionCall(prompt, int(self.count(prompt)), int(self.count(text)))
            )
        self.model.prompts.clear()
