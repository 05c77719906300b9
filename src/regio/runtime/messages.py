"""Admitting a conversation message: the body of ``Engine.add_message``.

A message is admitted in this order: the relief chain's admission rules (route, trim; nothing
changes yet, :func:`regio.runtime.reliefadmit.admit`), the refusal of a message that could
not fit even trimmed (:func:`regio.runtime.turnfit.check`: before anything changes), room made
by compaction when a ``compact`` conversation would pass its token budget (:func:`make_room`),
the newest turn's tool results trimmed when it still does not fit
(:func:`regio.runtime.turnfit.trim`), the window's ``add_message`` (strict: a refusal raises),
an ``orphan_tool_result`` event per result of a call no assistant message issued, the
admission's changes committed, then the transcript record. An environment observation
(``observation=True``) is annotated on its entry (:mod:`regio.runtime.observations`).
"""

from __future__ import annotations

from regio.content import Entry, Message, ToolResult
from regio.regions import Region

from . import reliefadmit, turnfit
from .compactor import Compactor
from .events import OrphanToolResult
from .observations import observation_meta
from .room import room_steps
from .state import SessionState
from .writes import entry_of

__all__ = ["admit_message", "make_room"]


def admit_message(
    c: Compactor,
    state: SessionState,
    message: Message,
    tokens: int | None = None,
    observation: bool = False,
) -> Entry:
    """Append ``message`` (tokens: its measured size, ``None`` to count it) to the
    conversation and the transcript (module doc); returns its entry. A user text that is not
    an observation clears ``state.overflow_retry`` (a person's new message re-arms overflow
    recovery; a tool result or an observation does not). Raises :class:`ValueError` for a
    window without a conversation or ``observation`` on anything but a user text
    (:func:`regio.runtime.observations.observation_meta`), and
    :class:`regio.errors.RegionFullError` when the conversation refuses the message."""
    conv = c.window.conversation
    if conv is None:
        raise ValueError("this window has no sliding_window region to hold the conversation")
    meta = observation_meta(message, observation)
    admission = reliefadmit.admit(c, message, tokens)  # changes nothing yet
    turnfit.check(c, conv, admission)  # a message that cannot fit is refused here
    orphans = [
        b.tool_use_id
        for b in admission.message.tool_results
        if c.window.call_group(b.tool_use_id) is None
    ]
    make_room(c, conv, admission.message, admission.tokens)
    admission = turnfit.trim(c, conv, admission)
    message, tokens = admission.message, admission.tokens
    result = c.window.add_message(message, tokens=tokens, strict=True, meta=meta)
    entry = entry_of(c, conv.name, result)
    assert entry is not None
    for call_id in orphans:
        c.emit(OrphanToolResult(call_id, entry.id))
    user_text = any(not isinstance(b, ToolResult) for b in message.blocks)
    if message.role == "user" and user_text and not observation:
        state.overflow_retry = False
    # route, keep originals, record the message in the transcript
    entry = reliefadmit.commit(c, admission, entry, conv.name)
    turnfit.report(c, conv, admission, entry)
    return entry


def make_room(c: Compactor, conv: Region, message: Message, tokens: int | None) -> None:
    """Token hysteresis: a message that would pass a ``compact`` conversation's budget
    first relieves and compacts it to its token target (:func:`regio.runtime.room.room_steps`)."""
    if not c.options.auto_compact or getattr(conv, "token_trigger", None) is None:
        return
    counter = c.window.counter
    assert counter is not None  # the engine refuses a window without one
    probe = Entry(id="", blocks=message.blocks, role=message.role)
    tokens = int(counter.count_entry(probe)) if tokens is None else tokens
    steps = room_steps(c, conv.name, tokens)
    if steps is not None:
        c.run(steps)
