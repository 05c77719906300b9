"""The two baselines of what users run today, at the same window budget as the layouts.

Both render a **plain request**: one system block (every non-conversation region rendered in
declaration order, the same content the layouts carry) and the messages, with one cache
breakpoint at the end of the system prompt and one on the last message block (what typical
agent frameworks send: a cached system prompt plus "cache the conversation so far").

* ``trim`` — the last-N-tokens trim applied on every turn, computed by the real
  ``langchain_core.messages.trim_messages`` (``strategy="last"``, ``include_system=True``,
  ``start_on="human"``, ``token_counter`` = regio's counter, ``max_tokens`` = the
  conversation region's budget plus the system prompt's tokens). Needs the optional ``bench``
  extra (``langchain-core``); :func:`trim_available` says whether it is importable.
* ``summarize`` — summarize-at-threshold compaction: when system + conversation pass
  ``threshold`` (default 80%) of the window, the whole conversation so far is replaced by one
  summary message written by :class:`regio.runtime.extractive.ExtractiveSummarizer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from regio.cache.types import CacheBlock, CacheRequest
from regio.content import Block, Entry, Message, Text, ToolResult, ToolUse, block_text, content_hash
from regio.runtime.extractive import ExtractiveSummarizer

__all__ = [
    "BASELINES",
    "SUMMARY_HEADING",
    "SummarizeBaseline",
    "TrimBaseline",
    "plain_request",
    "split_tokens",
    "trim_available",
]

#: Baseline names, in report order.
BASELINES: tuple[str, ...] = ("trim", "summarize")
#: First line of the summary message of the ``summarize`` baseline.
SUMMARY_HEADING = "[Summary of the conversation so far]"


def trim_available() -> bool:
    """True when ``langchain_core.messages.trim_messages`` can be imported."""
    try:
        from langchain_core.messages import trim_messages  # noqa: F401
    except ImportError:
        return False
    return True


def split_tokens(tokens: int, blocks: Sequence[Block]) -> list[int]:
    """Share a message's token count over its blocks by text length (the sum is kept), the
    same rule the layout uses."""
    if not blocks:
        return []
    lengths = [max(1, len(block_text(b))) for b in blocks]
    total = sum(lengths)
    out = [tokens * n // total for n in lengths]
    out[-1] += tokens - sum(out)
    return out


def _kind(block: Block) -> Any:
    if isinstance(block, ToolUse):
        return "tool_use"
    if isinstance(block, ToolResult):
        return "tool_result"
    return "text"


def plain_request(
    system: tuple[str, int],
    messages: Sequence[tuple[Message, int]],
    *,
    id: str,
    t_start: float,
    t_end: float | None = None,
    output_tokens: int = 0,
    scope: str = "default",
    model: str = "",
    ttl: Any = "5m",
    tools: tuple[str, int] = ("", 0),
) -> CacheRequest:
    """A plain [tools] + system + messages request: ``tools`` is (canonical JSON of the tool
    schemas, tokens), ``system`` is (text, tokens), ``messages`` are (message, tokens).
    Breakpoints (``ttl``) on the system block and on the last message block. Digests hash
    level, role and content, so equal content gives equal digests."""
    blocks: list[CacheBlock] = []
    if tools[0]:
        blocks.append(CacheBlock(tools[1], content_hash(["tools", tools[0]]), "text", "tools"))
    text, tokens = system
    if text:
        blocks.append(
            CacheBlock(tokens, content_hash(["system", text]), "text", "system", ttl, role="system")
        )
    for index, (message, n) in enumerate(messages):
        for block, k in zip(message.blocks, split_tokens(n, message.blocks), strict=True):
            blocks.append(
                CacheBlock(
                    k,
                    content_hash(["messages", message.role, block]),
                    _kind(block),
                    "messages",
                    role=message.role,
                    message=index,
                )
            )
    if messages and blocks and blocks[-1].level == "messages":
        last = blocks[-1]
        blocks[-1] = CacheBlock(
            last.tokens,
            last.digest,
            last.kind,
            last.level,
            ttl,
            role=last.role,
            message=last.message,
        )
    return CacheRequest(
        id=id,
        blocks=tuple(blocks),
        scope=scope,
        model=model,
        t_start=t_start,
        t_end=t_end,
        output_tokens=output_tokens,
    )


@attrs.define
class TrimBaseline:
    """Last-N-tokens trim by ``langchain_core`` on every turn (see module doc).

    ``max_tokens``: the conversation budget (tokens); ``count``: regio's text counter.
    Raises ``ImportError`` at construction when langchain-core is not installed.
    """

    max_tokens: int
    count: Any
    trimmed_turns: int = 0

    def __attrs_post_init__(self) -> None:
        from langchain_core.messages import trim_messages  # noqa: F401

    def view(
        self, system: tuple[str, int], messages: Sequence[tuple[Message, int]]
    ) -> list[tuple[Message, int]]:
        """The messages kept this turn (a suffix starting on a user message)."""
        from langchain_core.messages import (
            AIMessage,
            BaseMessage,
            HumanMessage,
            SystemMessage,
            ToolMessage,
            trim_messages,
        )

        lc: list[BaseMessage] = [SystemMessage(content=system[0], id="system")]
        for i, (message, _) in enumerate(messages):
            if message.role == "assistant":
                lc.append(
                    AIMessage(
                        content="\n".join(b.text for b in message.blocks if isinstance(b, Text)),
                        tool_calls=[
                            {"name": c.name, "args": dict(c.input), "id": c.id}
                            for c in message.tool_calls
                        ],
                        id=f"m{i}",
                    )
                )
            elif message.role == "tool" or message.tool_results:
                for j, r in enumerate(message.tool_results):
                    lc.append(
                        ToolMessage(content=r.content, tool_call_id=r.tool_use_id, id=f"m{i}:{j}")
                    )
            else:
                lc.append(HumanMessage(content=message.text, id=f"m{i}"))

        def counter(items: list[BaseMessage]) -> int:
            total = 0
            for m in items:
                total += int(self.count(str(m.content)))
                for call in getattr(m, "tool_calls", None) or []:
                    total += int(self.count(f"{call['name']}{call['args']}"))
            return total

        kept = trim_messages(
            lc,
            max_tokens=self.max_tokens + system[1],
            token_counter=counter,
            strategy="last",
            include_system=True,
            start_on="human",
        )
        indexes = [int(str(m.id)[1:].split(":")[0]) for m in kept if m.id != "system"]
        start = min(indexes) if indexes else len(messages)
        if start > 0:
            self.trimmed_turns += 1
        return list(messages[start:])


@attrs.define
class SummarizeBaseline:
    """Summarize-at-threshold compaction (see module doc).

    ``window_tokens``: the window (tokens); ``threshold``: share of it that triggers a
    compaction; ``summarizer``: an :class:`ExtractiveSummarizer`; ``count``: text counter;
    ``instructions``: standing summary instructions.
    """

    window_tokens: int
    count: Any
    threshold: float = 0.8
    summarizer: ExtractiveSummarizer = attrs.field(factory=ExtractiveSummarizer)
    instructions: str = ""
    summary: tuple[Message, int] | None = None
    start: int = 0
    compactions: int = 0

    def view(
        self, system: tuple[str, int], messages: Sequence[tuple[Message, int]]
    ) -> list[tuple[Message, int]]:
        """The summary (if any) plus the messages since the last compaction; compacts first
        when they pass ``threshold * window_tokens``."""
        live = list(messages[self.start :])
        head = [self.summary] if self.summary is not None else []
        total = system[1] + sum(n for _, n in head) + sum(n for _, n in live)
        if live and total > self.threshold * self.window_tokens:
            entries = [
                Entry(id=f"m{self.start + i}", blocks=m.blocks, role=m.role, tokens=n)
                for i, (m, n) in enumerate(live)
            ]
            if self.summary is not None:
                entries.insert(
                    0,
                    Entry(
                        id="summary",
                        blocks=self.summary[0].blocks,
                        tokens=self.summary[1],
                        meta={"summary": True},
                    ),
                )
            text = self.summarizer(entries, self.instructions, None)
            body = f"{SUMMARY_HEADING}\n{text}"
            self.summary = (Message.user(body), int(self.count(body)))
            self.start = len(messages)
            self.compactions += 1
            return [self.summary]
        return head + live
