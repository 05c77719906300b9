"""The peers on llama-index-core and Microsoft Agent Framework (:mod:`regio.bench.peers`
describes each): ``llamaindex-memory`` (:class:`MemoryPeer`, with the in-process chat store
:func:`list_chat_store`) and ``agent-framework-truncation`` (:class:`AgentFrameworkPeer`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from regio.bench.baselines import PlainMessage
from regio.bench.peers.view import CompactionCall, PeerView, message_text
from regio.content import Text, ToolUse

if TYPE_CHECKING:
    from llama_index.core.base.llms.types import ChatMessage

__all__ = ["AgentFrameworkPeer", "MemoryPeer", "list_chat_store"]


def list_chat_store() -> Any:
    """``Memory``'s chat store in lists (its SQLite default: ~35 ms a put; same flush logic)."""
    from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
    from pydantic import Field

    ACTIVE = MessageStatus.ACTIVE

    class ListChatStore(AsyncDBChatStore):
        rows: dict[str, list[tuple[Any, Any]]] = Field(default_factory=dict)

        def _of(self, key: str, status: MessageStatus | None) -> list[Any]:
            rows = self.rows.get(key, [])
            return [m for m, st in rows if status is None or st == status]

        async def get_messages(
            self,
            key: str,
            status: MessageStatus | None = MessageStatus.ACTIVE,
            limit: int | None = None,
            offset: int | None = None,
        ) -> list[ChatMessage]:
            found = self._of(key, status)[offset or 0 :]
            return found[:limit] if limit is not None else found

        async def count_messages(self, key: str, status: MessageStatus | None = ACTIVE) -> int:
            return len(self._of(key, status))

        async def add_message(
            self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE
        ) -> None:
            self.rows.setdefault(key, []).append((message, status))

        async def add_messages(
            self,
            key: str,
            messages: list[ChatMessage],
            status: MessageStatus = MessageStatus.ACTIVE,
        ) -> None:
            self.rows.setdefault(key, []).extend((m, status) for m in messages)

        async def set_messages(
            self,
            key: str,
            messages: list[ChatMessage],
            status: MessageStatus = MessageStatus.ACTIVE,
        ) -> None:
            self.rows[key] = [(m, status) for m in messages]

        async def delete_message(self, key: str, idx: int) -> Any:
            rows = self.rows.get(key, [])
            return rows.pop(idx)[0] if 0 <= idx < len(rows) else None

        async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
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
                content=message_text(pm.message),
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

    def __init__(self, count: Callable[[str], int]) -> None:
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
