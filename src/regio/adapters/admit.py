"""A framework message the engine's conversation cannot hold: a tool result too large for it
reaches the agent as text, never as an exception out of the framework's loop.

Every adapter appends the framework's messages with :func:`admit` (from an async hook
:func:`aadmit`, awaiting ``engine.aadd_message``): ``engine.add_message``,
except that a message whose tool results together are larger than the whole conversation (such
as one read of a 570 kB file) is admitted with each result fitted before the engine sees it (the
engine would trim it itself, :mod:`regio.engine._turnfit`, but the agent would not read what to
ask for instead), and so is a message with tool results the conversation refuses
(:class:`regio.errors.RegionFullError`), as the relief's trim cuts a result
(:func:`regio.policies.relief.trimmed_to`):

1. each result over its share of the conversation (a quarter of the most one entry may hold,
   :func:`regio.session._sizes.entry_cap`, split between the message's results) is cut to its
   head and tail around the trim marker, followed by a note saying how large it was and what to
   ask for instead (:func:`note`);
2. when that is refused too, each of those results is the note alone (an error result).

Each fitted result is a ``tool_result_too_large`` event (:class:`ToolResultTooLarge`). The agent
reads why on its next call and asks for less; the framework's own history keeps the result
whole, the engine's transcript what the model was sent. A message without tool results that
the conversation cannot hold (a user's message) is the caller's to shorten: its
``RegionFullError`` is raised, and nothing was admitted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from regio.content import Block, Message, ToolResult
from regio.errors import RegionFullError
from regio.events import Event
from regio.policies.relief import trimmed_to
from regio.session._sizes import count_up_to, entry_cap

from .drive import EngineCall, Steps, arun, run

if TYPE_CHECKING:
    from regio.engine import Engine

__all__ = ["ToolResultTooLarge", "aadmit", "admit", "admit_steps", "note"]

#: The share of the most one entry may hold that the results of one message may take.
SHARE = 4


class ToolResultTooLarge(Event, frozen=True, tag="tool_result_too_large"):
    """A tool result the conversation could not hold was fitted (module doc): ``tool_use_id``
    and ``tool`` of its call, its ``tokens`` (an estimate over ``cap`` when counting stopped
    there), ``cap`` the most one entry of the conversation may hold, ``sent_tokens`` what the
    model gets instead, ``action`` ``trimmed`` (head and tail kept) or ``left_out`` (the note
    alone)."""

    tool_use_id: str
    tool: str
    tokens: int
    cap: int
    sent_tokens: int
    action: str


def note(tool: str, call_id: str, tokens: int, cap: int, *, kept: bool) -> str:
    """The text that tells the agent a result of ``tokens`` tokens did not fit a conversation
    whose entries hold at most ``cap`` tokens, and what to do: ask for a smaller part."""
    what = (
        "only its start and end are kept, around the cut"
        if kept
        else "it was left out, and no part of it was sent"
    )
    return (
        f"[regio: the {tool} result of call {call_id} is about {tokens:,} tokens, more than "
        f"the conversation can hold ({cap:,} tokens); {what}. Ask for a smaller part of it "
        "instead: a range of lines, a filter, a search or a summary.]"
    )


def admit(engine: Engine, message: Message) -> None:
    """``engine.add_message(message)``; a message whose tool results are larger than the
    conversation could ever hold (together over :func:`regio.session._sizes.entry_cap`), or
    that the conversation refuses, is admitted with them fitted (module doc). (A turn the
    conversation can hold whole but not beside the rest is the engine's to fit: it compacts
    older turns and trims the turn, :mod:`regio.engine._turnfit`.) Raises the conversation's
    :class:`regio.errors.RegionFullError` for a message without tool results, or when even
    the notes alone do not fit."""
    run(engine, admit_steps(engine, message))


async def aadmit(engine: Engine, message: Message) -> None:
    """:func:`admit` awaiting ``engine.aadd_message``, for async hooks: an async summarizer
    is awaited when the message makes room by compaction (:mod:`regio.adapters.drive`)."""
    await arun(engine, admit_steps(engine, message))


def admit_steps(engine: Engine, message: Message) -> Steps[None]:
    """The engine calls of :func:`admit` (:mod:`regio.adapters.drive`): each ``add_message``
    it tries, the conversation's ``RegionFullError`` thrown back in."""
    conv = engine.window.conversation
    if conv is None:  # refused by the engine, naming what is missing
        yield EngineCall("add_message", (message,))
        return
    cap = entry_cap(engine.window, conv)
    cap = int(conv.budget if cap is None else cap)
    counter = engine.window.counter
    sizes = {b.tool_use_id: count_up_to(counter, b.content, cap) for b in message.tool_results}
    if sum(sizes.values()) <= cap:
        try:
            yield EngineCall("add_message", (message,))
            return
        except RegionFullError:
            if not message.tool_results:
                raise
    share = max(1, cap // (SHARE * len(message.tool_results)))
    try:
        fitted, events = _fitted(engine, message, sizes, cap, share, kept=True)
        yield EngineCall("add_message", (fitted,))
    except RegionFullError:
        fitted, events = _fitted(engine, message, sizes, cap, share, kept=False)
        yield EngineCall("add_message", (fitted,))
    for event in events:
        engine.emit(event)


def _tool(engine: Engine, call_id: str) -> str:
    call = engine.window.tool_call(call_id)
    return call.name if call is not None else "tool"


def _fitted(
    engine: Engine,
    message: Message,
    sizes: dict[str, int],
    cap: int,
    share: int,
    *,
    kept: bool,
) -> tuple[Message, list[ToolResultTooLarge]]:
    """``message`` with each result over ``share`` tokens cut (``kept``) or left out (the
    others as they are), and the events that say so."""
    count = engine.budget.count_text
    blocks: list[Block] = []
    events: list[ToolResultTooLarge] = []
    for block in message.blocks:
        tokens = sizes.get(block.tool_use_id, 0) if isinstance(block, ToolResult) else 0
        if not isinstance(block, ToolResult) or tokens <= share:
            blocks.append(block)
            continue
        tool = _tool(engine, block.tool_use_id)
        text = note(tool, block.tool_use_id, tokens, cap, kept=kept)
        if kept:
            room = max(1, share - count(text))
            text = trimmed_to(block.content, tokens, room, count) + "\n" + text
        blocks.append(msgspec.structs.replace(block, content=text, is_error=not kept))
        action = "trimmed" if kept else "left_out"
        events.append(ToolResultTooLarge(block.tool_use_id, tool, tokens, cap, count(text), action))
    return Message(message.role, tuple(blocks)), events
