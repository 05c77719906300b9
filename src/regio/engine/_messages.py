"""Admitting a conversation message: the body of ``Engine.add_message``.

A message is admitted in this order: its text checked and repaired
(:func:`regio.session._textadmit.admit_message_text`: lone surrogates, block field types, empty
call ids and tool names) and a given ``tokens`` checked
(:func:`regio.session._sizes.measured_tokens`), its call ids named
(:mod:`regio.session._callnames`: mapped, renamed when reused, results following), the relief
chain's admission rules (route, trim; nothing changes yet,
:func:`regio.compaction.relief._admit.admit`),
the refusal of a message that could not fit even trimmed (:func:`regio.engine._turnfit.check`:
before anything changes), room made by compaction when a ``compact`` conversation would pass
its token budget (:func:`make_room`), the newest turn's tool results trimmed when it still does
not fit (:func:`regio.engine._turnfit.trim`), the window's ``add_message`` (strict: a refusal
raises), a ``history_repaired`` event per call id changed and an ``orphan_tool_result`` event
per result of a call no assistant message issued, the admission's changes committed, then the
transcript record. An environment observation
(``observation=True``) is annotated on its entry (:mod:`regio.summarizers.observations`).

The admission is one step generator (:func:`admit_steps`): every compaction on the way (the
room made, a routed write) yields its summarizer jobs to the driver the caller chose
(``Engine.add_message`` drives it with :meth:`Session.run`, ``Engine.aadd_message`` awaits
:meth:`Session.arun`), so an async summarizer is never called from the sync path.
"""

from __future__ import annotations

import attrs

from regio.compaction._compactor import run_steps
from regio.compaction._room import room_steps
from regio.compaction._writes import entry_of
from regio.compaction.relief import _admit as reliefadmit
from regio.content import Entry, Message, ToolResult
from regio.regions import Region
from regio.session._callnames import name_admitted, renamed_meta
from regio.session._events import OrphanToolResult
from regio.session._session import CompactionResult, Session, Steps
from regio.session._sizes import admission_tokens, measured_tokens
from regio.session._state import SessionState
from regio.session._textadmit import admit_message_text
from regio.summarizers.observations import observation_meta

from . import _turnfit as turnfit
from ._history import HistoryRepaired

__all__ = ["admit_message", "admit_steps", "make_room"]


def admit_message(
    c: Session,
    state: SessionState,
    message: Message,
    tokens: int | None = None,
    observation: bool = False,
) -> Entry:
    """:func:`admit_steps` driven synchronously (:meth:`Session.run`)."""
    return run_steps(c, admit_steps(c, state, message, tokens, observation))


def admit_steps(
    c: Session,
    state: SessionState,
    message: Message,
    tokens: int | None = None,
    observation: bool = False,
) -> Steps[Entry]:
    """Append ``message`` (tokens: its measured size, ``None`` to count it) to the
    conversation and the transcript (module doc); returns its entry. A user text that is not
    an observation clears ``state.overflow_retry`` (a person's new message re-arms overflow
    recovery; a tool result or an observation does not). Raises :class:`ValueError` for a
    window without a conversation or ``observation`` on anything but a user text
    (:func:`regio.summarizers.observations.observation_meta`),
    :class:`regio.errors.RegionFullError` when the conversation refuses the message,
    :class:`regio.session._sizes.SizeError` for ``tokens`` that is not a count and
    :class:`regio.content.ContentTypeError` for blocks of the wrong types."""
    conv = c.window.conversation
    if conv is None:
        raise ValueError("this window has no sliding_window region to hold the conversation")
    tokens = measured_tokens(tokens, "add_message")
    message = admit_message_text(c.emit, message, "add_message")
    meta = observation_meta(message, observation)
    message, renames, ledger = name_admitted(c.window, conv, state, message)
    if renames:
        meta = renamed_meta(meta, renames)
    admission = _counted(c, conv, reliefadmit.admit(c, message, tokens))  # changes nothing yet
    turnfit.check(c, conv, admission)  # a message that cannot fit is refused here
    orphans = [
        b.tool_use_id
        for b in admission.message.tool_results
        if c.window.call_group(b.tool_use_id) is None
    ]
    yield from make_room(c, conv, admission.message, admission.tokens)
    admission = _counted(c, conv, turnfit.trim(c, conv, admission))
    message, tokens = admission.message, admission.tokens
    result = c.window.add_message(message, tokens=tokens, strict=True, meta=meta)
    entry = entry_of(c, conv.name, result)
    assert entry is not None
    ledger.commit()
    for r in renames:
        c.emit(HistoryRepaired(r.action, r.sent, entry=entry.id, detail=r.given))
    for call_id in orphans:
        c.emit(OrphanToolResult(call_id, entry.id))
    user_text = any(not isinstance(b, ToolResult) for b in message.blocks)
    if message.role == "user" and user_text and not observation:
        state.overflow_retry = False
    # route, keep originals, record the message in the transcript
    entry = yield from reliefadmit.commit(c, admission, entry, conv.name)
    turnfit.report(c, conv, admission, entry)
    return entry


def _counted(c: Session, conv: Region, admission: reliefadmit.Admission) -> reliefadmit.Admission:
    """``admission`` with its message's tokens: as given, else counted once, and only up to
    what the conversation could admit (:func:`regio.session._sizes.admission_tokens`)."""
    if admission.tokens is not None:
        return admission
    message = admission.message
    probe = Entry(id="", blocks=message.blocks, role=message.role)
    return attrs.evolve(admission, tokens=admission_tokens(c.window, conv, probe))


def make_room(
    c: Session, conv: Region, message: Message, tokens: int | None
) -> Steps[CompactionResult | None]:
    """Token hysteresis: a message that would pass a ``compact`` conversation's budget
    first relieves and compacts it to its token target (:func:`regio.compaction._room.room_steps`);
    a step generator (its summarizer jobs go to the caller's driver)."""
    if not c.options.auto_compact or getattr(conv, "token_trigger", None) is None:
        return None
    counter = c.window.counter
    assert counter is not None  # the engine refuses a window without one
    probe = Entry(id="", blocks=message.blocks, role=message.role)
    tokens = int(counter.count_entry(probe)) if tokens is None else tokens
    steps = room_steps(c, conv.name, tokens)
    return None if steps is None else (yield from steps)
