"""Streamed assistant turns.

:class:`AssistantStream` collects the deltas of one streamed assistant message -- text,
thinking and tool calls whose JSON arguments arrive in pieces -- and appends the message to the
conversation (and the transcript) as soon as it completes, so a cancelled turn never loses what
already finished. Usage::

    with engine.stream_assistant() as stream:
        stream.text("Let me look.")
        stream.tool_call_start("c1", "read_file")
        stream.tool_call_delta("c1", '{"path": ')
        stream.tool_call_delta("c1", '"a.py"}')
        stream.tool_call_end("c1")
    # the assistant message a{c1} is in the log here; run the tool, add_tool_result(...)

A call whose arguments never finished (no :meth:`tool_call_end`, or arguments that
:func:`regio.callargs.function_arguments` cannot read as an object: not JSON, not an object,
nested deeper than :data:`regio.callargs.MAX_ARGUMENT_DEPTH`) is never saved as a complete
call: it is dropped and a ``stream_call_discarded`` event says so. Leaving the ``with`` block
by an exception cancels the stream: completed content is kept, unfinished calls are dropped.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from regio.callargs import INVALID_ARGUMENTS_KEY, function_arguments
from regio.content import ContentTypeError, Entry, Message, Thinking, ToolUse
from regio.errors import BlockValueError, RegioError
from regio.events import Event
from regio.session._events import StreamCallDiscarded

__all__ = ["AssistantStream", "StreamStateError"]


class StreamStateError(RegioError, ValueError):
    """A stream call out of order: a call started twice, a delta for a call never started, a
    delta after the stream finished (the message names the call and the fix). Also a
    :class:`ValueError`, which it was before."""


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ContentTypeError(f"stream: {what} must be text, got {type(value).__name__}")
    return value


@attrs.define
class _Call:
    id: str
    name: str
    pieces: list[str] = attrs.field(factory=list)
    done: bool = False


@attrs.define(eq=False)
class AssistantStream:
    """Accumulates one streamed assistant message (see module doc): ``add`` appends the
    finished message to the conversation (``Engine.add_message``), ``emit`` reports events."""

    add: Callable[[Message], Entry]
    emit: Callable[[Event], None]
    _text: list[str] = attrs.field(factory=list)
    _thinking: list[str] = attrs.field(factory=list)
    _signature: str = ""
    _calls: dict[str, _Call] = attrs.field(factory=dict)
    entry: Entry | None = None
    closed: bool = False

    def text(self, delta: str) -> None:
        """Add a text delta."""
        self._check_open()
        self._text.append(_text(delta, "a text delta"))

    def thinking(self, delta: str, signature: str | None = None) -> None:
        """Add a thinking delta (and its signature when it arrives)."""
        self._check_open()
        self._thinking.append(_text(delta, "a thinking delta"))
        if signature:
            self._signature = _text(signature, "a thinking signature")

    def tool_call_start(self, call_id: str, name: str = "") -> None:
        """A tool call begins (its id; the name may come here or in :meth:`tool_call_name`)."""
        self._check_open()
        if not _text(call_id, "a tool call id"):
            raise BlockValueError(
                "stream: tool_call_start got an empty call id; pass the id the model streamed "
                "(its result answers that id)"
            )
        if call_id in self._calls:
            raise StreamStateError(f"tool call {call_id!r} was already started in this stream")
        self._calls[call_id] = _Call(call_id, _text(name, "a tool name"))

    def tool_call_name(self, call_id: str, name: str) -> None:
        """The name of call ``call_id`` (some APIs stream it separately)."""
        if not _text(name, "a tool name"):
            raise BlockValueError(f"stream: tool_call_name got an empty name for call {call_id!r}")
        self._call(call_id).name = name

    def tool_call_delta(self, call_id: str, piece: str) -> None:
        """A piece of call ``call_id``'s JSON arguments."""
        self._call(call_id).pieces.append(_text(piece, "a tool call's arguments piece"))

    def tool_call_end(self, call_id: str) -> None:
        """The arguments of ``call_id`` are complete."""
        self._call(call_id).done = True

    def _call(self, call_id: str) -> _Call:
        self._check_open()
        try:
            return self._calls[call_id]
        except (KeyError, TypeError):  # TypeError: an id that cannot be a key
            raise StreamStateError(
                f"tool call {call_id!r} was not started; call tool_call_start first"
            ) from None

    def _check_open(self) -> None:
        if self.closed:
            raise StreamStateError("this assistant stream is already finished")

    def _complete_calls(self) -> list[ToolUse]:
        calls: list[ToolUse] = []
        for call in self._calls.values():
            raw = "".join(call.pieces)
            args = function_arguments(raw) if call.done and call.name else None
            if args is None or INVALID_ARGUMENTS_KEY in args:
                self.emit(StreamCallDiscarded(call.id, call.name, len(raw)))
                continue
            calls.append(ToolUse(call.id, call.name, args))
        return calls

    def finish(self) -> Entry | None:
        """Append the completed message (``None`` when nothing completed); idempotent."""
        if self.closed:
            return self.entry
        self.closed = True
        calls = self._complete_calls()
        text = "".join(self._text)
        thinking = [Thinking("".join(self._thinking), self._signature)] if self._thinking else []
        if not text and not calls and not thinking:
            return None
        self.entry = self.add(Message.assistant(text, calls, thinking))
        return self.entry

    def cancel(self) -> Entry | None:
        """Stop the stream: keep what completed, drop unfinished calls."""
        return self.finish()

    def __enter__(self) -> AssistantStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()
