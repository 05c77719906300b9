"""Relaying an upstream event stream to the client, event by event, while reading the reply.

A relay takes each :class:`regio.proxy.sse.SSEEvent` as it arrives and returns the bytes to send
on (``None``: nothing), while it assembles the reply the engine records (:meth:`Relay.reply`).
An event is sent on as the exact bytes the upstream sent, so the client's stream is byte for
byte the upstream's, with two exceptions, both for regio's own tools (``context_restore``),
which the client does not have:

* **held back**: from the event that starts a call to one of regio's tools, the rest of the
  upstream's response is not sent (the client never sees a tool it does not have); the proxy
  answers the call and asks the model again (:mod:`regio.proxy.restore`);
* **continued**: the response to that next request is sent as the continuation of the same
  reply: its opening events are dropped (Anthropic ``message_start``, Responses
  ``response.created`` / ``response.in_progress``) and its positions follow the ones the client
  already has (Anthropic content block ``index``, Chat ``tool_calls[].index``, Responses
  ``output_index`` and ``sequence_number``); such an event is re-encoded.

Event shapes: Anthropic Messages streaming
(https://docs.anthropic.com/en/docs/build-with-claude/streaming), Chat Completions chunks
(https://platform.openai.com/docs/api-reference/chat-streaming), Responses streaming events
(https://platform.openai.com/docs/api-reference/responses-streaming). A Responses call the
client sees may be a ``function_call``, a ``custom_tool_call`` (its input streamed as
``response.custom_tool_call_input.delta`` / ``.done`` events, relayed and renumbered like any
event with an ``output_index``) or a ``local_shell_call``; the reply reads each from its
``response.output_item.done`` item (or the final response), fields kept
(:mod:`regio.responses_items`). regio's own tools are function tools.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any

import attrs
from starlette.responses import StreamingResponse

from regio.content import ANTHROPIC_SERVER_CALLS, ToolUse
from regio.responses_items import is_call
from regio.sdk._objects import response_message

from .replies import Reply, Shown
from .sse import SSEEvent, encode_event

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

__all__ = [
    "AnthropicRelay",
    "Carry",
    "ChatRelay",
    "Relay",
    "ResponsesRelay",
    "Stream",
    "relay_for",
]


@attrs.frozen
class Carry:
    """What a continuation carries on from the rounds before it: the positions the client has
    seen (content blocks, tool calls or output items), the last ``sequence_number`` sent, the
    response id and the output items sent (Responses), and what the client saw so far."""

    positions: int = 0
    sequence: int = -1
    shown: Shown = attrs.field(factory=Shown)
    response_id: str = ""
    items: tuple[Any, ...] = ()


@attrs.define
class Relay:
    """Base of the three relays (module doc). ``regio_tools``: names of regio's own tools;
    ``carry``: ``None`` for a first response, else what the rounds before it sent."""

    regio_tools: Collection[str]
    carry: Carry | None = None
    held: bool = False
    ended: bool = False
    errored: bool = False
    usage: dict[str, Any] = attrs.field(factory=dict)
    forwarded: int = 0
    _text: list[str] = attrs.field(factory=list)
    _ids: list[str] = attrs.field(factory=list)

    @property
    def offset(self) -> int:
        return self.carry.positions if self.carry else 0

    def feed(self, event: SSEEvent) -> bytes | None:
        """The bytes to send the client for ``event`` (``None``: nothing)."""
        if not event.data.strip() or event.data.strip() == "[DONE]":
            if event.data.strip() == "[DONE]":
                self.ended = True
            return None if self.held else event.raw
        try:
            data = json.loads(event.data)
        except ValueError:
            return None if self.held else event.raw
        if not isinstance(data, dict):
            return None if self.held else event.raw
        return self._feed(event, data)

    def _feed(self, event: SSEEvent, data: dict[str, Any]) -> bytes | None:
        raise NotImplementedError

    def _message(self) -> dict[str, Any]:
        raise NotImplementedError

    def _send(self, event: SSEEvent, data: dict[str, Any], changed: bool) -> bytes:
        return (
            encode_event(json.dumps(data, ensure_ascii=False), _name(event))
            if changed
            else event.raw
        )

    def reply(self) -> Reply:
        """The reply assembled so far (its message, usage, regio's calls, what was shown)."""
        raw = self._message()
        message, _ = response_message(raw)
        internal = tuple(
            b for b in message.blocks if isinstance(b, ToolUse) and b.name in self.regio_tools
        )
        shown = Shown("".join(self._text), tuple(self._ids))
        before = self.carry.shown if self.carry else Shown()
        complete = self.ended and not self.errored
        return Reply(message, self.usage or None, internal, before.then(shown), complete, raw)

    def next_carry(self) -> Carry:
        """What a continuation of this response carries on."""
        before = self.carry.shown if self.carry else Shown()
        shown = before.then(Shown("".join(self._text), tuple(self._ids)))
        return Carry(self.offset + self.forwarded, self._sequence(), shown, *self._identity())

    def _sequence(self) -> int:
        return -1

    def _identity(self) -> tuple[str, tuple[Any, ...]]:
        return "", ()


def _name(event: SSEEvent) -> str | None:
    return None if event.event == "message" else event.event


@attrs.define
class AnthropicRelay(Relay):
    """Anthropic Messages events (module doc)."""

    _blocks: dict[int, dict[str, Any]] = attrs.field(factory=dict)
    _json: dict[int, list[str]] = attrs.field(factory=dict)
    _stop: str | None = None

    def _feed(self, event: SSEEvent, data: dict[str, Any]) -> bytes | None:
        kind = data.get("type")
        if kind == "message_start":
            self.usage.update((data.get("message") or {}).get("usage") or {})
            return None if self.carry is not None or self.held else event.raw
        if kind == "error":
            self.errored = True
            return event.raw
        index = data.get("index")
        if kind == "content_block_start" and isinstance(index, int):
            block = dict(data.get("content_block") or {})
            self._blocks[index] = block
            if block.get("type") == "tool_use" and block.get("name") in self.regio_tools:
                self.held = True
            elif not self.held:
                self.forwarded += 1
                if block.get("type") == "tool_use":
                    self._ids.append(str(block.get("id")))
        elif kind == "content_block_delta" and isinstance(index, int):
            self._delta(index, data.get("delta") or {})
        elif kind == "message_delta":
            self.usage.update(data.get("usage") or {})
            self._stop = (data.get("delta") or {}).get("stop_reason") or self._stop
        elif kind == "message_stop":
            self.ended = True
        if self.held:
            return None
        if isinstance(index, int) and self.offset:
            data["index"] = index + self.offset
            return self._send(event, data, True)
        return event.raw

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + str(delta.get("text", ""))
            if not self.held:
                self._text.append(str(delta.get("text", "")))
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = str(delta.get("signature", ""))

    def _message(self) -> dict[str, Any]:
        content = []
        for index in sorted(self._blocks):
            block = dict(self._blocks[index])
            kind = block.get("type")
            if isinstance(kind, str) and (kind == "tool_use" or kind in ANTHROPIC_SERVER_CALLS):
                text = "".join(self._json.get(index, []))
                block["input"] = json.loads(text) if text.strip() else block.get("input") or {}
            content.append(block)
        return {
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": self._stop,
            "usage": self.usage,
        }


@attrs.define
class ChatRelay(Relay):
    """Chat Completions chunks (module doc)."""

    _content: list[str] = attrs.field(factory=list)
    _calls: dict[int, dict[str, Any]] = attrs.field(factory=dict)
    _finish: str | None = None
    _logprobs: list[Any] = attrs.field(factory=list)

    def _feed(self, event: SSEEvent, data: dict[str, Any]) -> bytes | None:
        if isinstance(data.get("error"), dict):
            self.errored = True
            return event.raw
        if data.get("usage"):
            self.usage = dict(data["usage"])
        shifted = False
        choices = data.get("choices") or []
        for choice in choices[:1]:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self._content.append(delta["content"])
                if not self.held:
                    self._text.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                shifted |= self._call(call)
            logprobs = choice.get("logprobs")
            if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
                self._logprobs.extend(logprobs["content"])
            self._finish = choice.get("finish_reason") or self._finish
        if self.held:
            return None
        return self._send(event, data, shifted)

    def _call(self, call: dict[str, Any]) -> bool:
        index = int(call.get("index", 0))
        entry = self._calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        fn = call.get("function") or {}
        if call.get("id"):
            entry["id"] = str(call["id"])
        if fn.get("name"):
            entry["name"] = str(fn["name"])
            if entry["name"] in self.regio_tools:
                self.held = True
            elif not self.held:
                self.forwarded += 1
                self._ids.append(entry["id"])
        entry["arguments"].append(str(fn.get("arguments") or ""))
        if self.offset and not self.held:
            call["index"] = index + self.offset
            return True
        return False

    def _message(self) -> dict[str, Any]:
        calls = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": "".join(c["arguments"]) or "{}"},
            }
            for _, c in sorted(self._calls.items())
        ]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if calls:
            message["tool_calls"] = calls
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": self._finish}
        if self._logprobs:
            choice["logprobs"] = {"content": self._logprobs}
        return {"object": "chat.completion", "choices": [choice], "usage": self.usage or None}


@attrs.define
class ResponsesRelay(Relay):
    """Responses streaming events (module doc)."""

    _final: dict[str, Any] | None = None
    _items: dict[int, dict[str, Any]] = attrs.field(factory=dict)
    _sent_items: list[dict[str, Any]] = attrs.field(factory=list)
    _id: str = ""
    _seq: int = -1

    def _feed(self, event: SSEEvent, data: dict[str, Any]) -> bytes | None:
        kind = str(data.get("type") or "")
        if kind == "error" or kind == "response.failed":
            self.errored = True
        if kind in ("response.created", "response.in_progress") and self.carry is not None:
            return None
        if kind == "response.created" and isinstance(data.get("response"), dict):
            self._id = str(data["response"].get("id") or "")
        index = data.get("output_index")
        item = data.get("item")
        if kind == "response.output_item.added" and isinstance(item, dict):
            if item.get("type") == "function_call" and item.get("name") in self.regio_tools:
                self.held = True
            elif not self.held:
                self.forwarded += 1
                if item.get("type") == "function_call" or is_call(item.get("type")):
                    self._ids.append(str(item.get("call_id") or item.get("id")))
        if (
            kind == "response.output_item.done"
            and isinstance(item, dict)
            and isinstance(index, int)
        ):
            self._items[index] = item
            if not self.held:
                self._sent_items.append(item)
        if kind == "response.output_text.delta" and not self.held:
            self._text.append(str(data.get("delta") or ""))
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self._final = data.get("response") if isinstance(data.get("response"), dict) else None
            self.usage = dict((self._final or {}).get("usage") or {})
            self.ended = kind != "response.failed"
        if self.held:
            return None
        return self._renumber(event, data, index)

    def _renumber(self, event: SSEEvent, data: dict[str, Any], index: object) -> bytes:
        changed = False
        response = data.get("response")
        if self.carry is not None and isinstance(response, dict):  # one reply, one identity
            data["response"] = dict(
                response,
                id=self.carry.response_id or response.get("id"),
                output=[*self.carry.items, *(response.get("output") or [])],
            )
            changed = True
        if self.carry is not None and isinstance(data.get("sequence_number"), int):
            self._seq = max(self._seq, self.carry.sequence) + 1
            data["sequence_number"] = self._seq
            changed = True
        elif isinstance(data.get("sequence_number"), int):
            self._seq = data["sequence_number"]
        if isinstance(index, int) and self.offset:
            data["output_index"] = index + self.offset
            changed = True
        return self._send(event, data, changed)

    def _sequence(self) -> int:
        return self._seq

    def _identity(self) -> tuple[str, tuple[Any, ...]]:
        first = self.carry.response_id if self.carry and self.carry.response_id else self._id
        before = self.carry.items if self.carry else ()
        return first, (*before, *self._sent_items)

    def _message(self) -> dict[str, Any]:
        if self._final is not None:
            return self._final
        return {"object": "response", "output": [self._items[i] for i in sorted(self._items)]}


def relay_for(api: str, regio_tools: Collection[str], carry: Carry | None = None) -> Relay:
    """The relay of ``api``'s events."""
    cls = {"anthropic": AnthropicRelay, "openai_chat": ChatRelay}.get(api, ResponsesRelay)
    return cls(regio_tools, carry)


class Stream(StreamingResponse):
    """A streamed answer whose ``on_close`` runs after it however the sending ends, also when
    the body was never iterated (a client gone first): the upstream response given back."""

    def __init__(
        self, content: AsyncIterator[bytes], on_close: Callable[[], Awaitable[None]], **kwargs: Any
    ) -> None:
        super().__init__(content, **kwargs)
        self.on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.on_close()
