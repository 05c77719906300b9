"""What every peer shares (:mod:`regio.bench.peers`, :mod:`regio.bench.peers.editing`): the
view of one call (:class:`PeerView`), a billed summarizer call (:class:`CompactionCall`) and the
run's messages as LangChain messages with their tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from regio.bench.baselines import PlainMessage
from regio.content import Message, Text, ToolUse, block_text

__all__ = ["CompactionCall", "PeerView", "message_text"]


def message_text(message: Message) -> str:
    """The text of ``message``'s blocks, one per line (how the bench names a task message:
    :func:`regio.bench.replaysetup.task_texts`)."""
    return "\n".join(block_text(b) for b in message.blocks)


@attrs.frozen
class CompactionCall:
    """One summarizer call: the prompt text it was sent and its tokens, the summary's
    tokens (its output)."""

    prompt: str
    prompt_tokens: int
    output_tokens: int


@attrs.frozen
class PeerView:
    """What a peer sends at one call: its kept messages, whether a summary among them stands
    for the dropped task (``summary``: its summarizer read the task, or a summary standing for
    it; the broken-request rule, :mod:`regio.bench.tracking`), and whether it has dropped
    anything so far (``compacted``);
    ``compaction_pass``: a provider's compaction pass made within this call before it
    (:class:`regio.bench.peers.providers.CompactionPass`), ``None`` for the others."""

    messages: list[PlainMessage]
    summary: bool
    compacted: bool
    compaction_pass: Any = None


def _to_langchain(index: int, pm: PlainMessage) -> list[Any]:
    """LangChain messages of one regio message (ids ``m<index>:<part>``)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    message = pm.message
    if message.role == "assistant":
        calls = [
            {"name": b.name, "args": dict(b.input), "id": b.id}
            for b in message.blocks
            if isinstance(b, ToolUse)
        ]
        text = "\n".join(b.text for b in message.blocks if isinstance(b, Text))
        return [AIMessage(content=text, tool_calls=calls, id=f"m{index}:0")]
    if message.tool_results:
        return [
            ToolMessage(content=r.content, tool_call_id=r.tool_use_id, id=f"m{index}:{j}")
            for j, r in enumerate(message.tool_results)
        ]
    return [HumanMessage(content=message.text, id=f"m{index}:0")]


def _owner(lc_id: object) -> int:
    return int(str(lc_id)[1:].split(":")[0])


@attrs.define
class _LangChainLog:
    """The run's messages as regio and LangChain messages, with each LangChain message's
    tokens (the regio message's tokens shared over its parts) and content, by id."""

    plain: list[PlainMessage] = attrs.field(factory=list)
    lc: list[Any] = attrs.field(factory=list)
    tokens: dict[str, int] = attrs.field(factory=dict)
    contents: dict[str, Any] = attrs.field(factory=dict)

    def add(self, pm: PlainMessage) -> list[Any]:
        index = len(self.plain)
        self.plain.append(pm)
        parts = _to_langchain(index, pm)
        share, rest = divmod(pm.tokens, len(parts))
        for j, m in enumerate(parts):
            self.tokens[str(m.id)] = share + (rest if j == len(parts) - 1 else 0)
            self.contents[str(m.id)] = m.content
        self.lc.extend(parts)
        return parts

    def logged_tokens(self, message: object) -> int | None:
        """The tokens of ``message`` when it is one of the run's messages as logged (by id and
        content); ``None`` for any other (a summary, a copy a trim cut short)."""
        key = str(getattr(message, "id", ""))
        logged = self.contents.get(key)
        content = getattr(message, "content", message)
        if logged is None or not (content is logged or content == logged):
            return None
        return self.tokens[key]

    def regio_messages(self, kept: Sequence[Any]) -> list[PlainMessage]:
        owners = dict.fromkeys(_owner(m.id) for m in kept if str(m.id).startswith("m"))
        return [self.plain[i] for i in owners]
