"""What a save keeps of a session whose store lost the parts a load left unread.

An engine loaded from a session store (``Engine.load_from``) reads its transcript, its usage
records and its relief originals on first use (:mod:`regio.session._stored`). When the session
is deleted from the store after the load (or a Redis server restarts without persistence),
those parts are gone; the window, the layout state, the calibration and everything added since
the load are in the engine. A save that needs the whole engine (``Engine.save`` to a file,
``Engine.save_to(..., create=True)``, a save under another session id or into another store)
then keeps everything the engine holds and leaves out only what is gone:
:func:`save_held` runs the save, and when a lost part stops it (a
:class:`regio.session._stored.StoredRecordsLostError`), :func:`keep_held` gives the lost parts
up, says which (a :class:`StoredPartsLostWarning` and a ``stored_parts_lost`` event,
:class:`StoredPartsLost`) and the save runs again. The saved session then holds the window
and the records added since the load (their ``seq`` and ``index`` numbers still count the lost
ones, so the gap shows where the history was lost).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from regio.events import Event
from regio.session._reliefbook import Originals
from regio.session._stored import StoredRecordsLostError

if TYPE_CHECKING:
    from ._engineparts import EngineParts

__all__ = ["StoredPartsLost", "StoredPartsLostWarning", "keep_held", "save_held"]

T = TypeVar("T")


class StoredPartsLost(Event, frozen=True, tag="stored_parts_lost"):
    """A save left out what the session's store lost after the load: ``parts``, one line
    each (the transcript records, the usage records, the relief originals stored before the
    load, with their numbers)."""

    parts: tuple[str, ...]


class StoredPartsLostWarning(UserWarning):
    """A save left out parts of the session its store lost after the load (the message
    names them); everything the engine held in memory was saved."""


def _lost(what: str, lost: int | None, stored: int | None = None) -> str:
    """One line of what a save leaves out: ``lost`` of the ``stored`` ``what``."""
    if lost is None:
        return f"an unknown number of the {what} stored before the load"
    of = f" of the {stored}" if stored is not None and stored != lost else ""
    return f"{lost}{of} {what} stored before the load"


def keep_held(engine: EngineParts) -> tuple[str, ...]:
    """Give up every part of ``engine`` its store lost (read now; the parts that can still
    be read are kept, read; of the relief originals, those still stored); returns a line per
    lost part, also warned (:class:`StoredPartsLostWarning`) and emitted
    (:class:`StoredPartsLost`) when any."""
    lost: list[str] = []
    transcript = engine.transcript_log
    try:
        transcript.records  # noqa: B018 -- read now: lost or kept
    except StoredRecordsLostError:
        lost.append(_lost("transcript records", transcript.forget_stored()))
    ledger = engine.ledger
    try:
        ledger.records  # noqa: B018
    except StoredRecordsLostError:
        lost.append(_lost("usage records", ledger.forget_stored()))
    originals = engine.book.relief.originals
    assert isinstance(originals, Originals)  # ReliefBook.__post_init__ makes it one
    try:
        originals.load_all()
    except StoredRecordsLostError:
        gone, stored = originals.keep_stored()
        lost.append(_lost("relief originals (tool results kept whole)", gone, stored))
    if lost:
        engine.emit(StoredPartsLost(tuple(lost)))
        warnings.warn(
            "the session's store lost, after this engine loaded it, "
            + "; ".join(lost)
            + ". Saved without them: the window and everything added since the load",
            StoredPartsLostWarning,
            stacklevel=3,
        )
    return tuple(lost)


def save_held(engine: EngineParts, save: Callable[[], T]) -> T:
    """``save()``; when a part its store lost stops it, :func:`keep_held` then ``save()``
    again (module doc)."""
    try:
        return save()
    except StoredRecordsLostError:
        keep_held(engine)
        return save()
