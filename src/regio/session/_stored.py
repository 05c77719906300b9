"""Records a load leaves to read on first use: one mechanism for all of them.

:class:`StoredRecords` holds the records a session had when it was loaded and reads them when
they are first needed: the transcript of a state file
(:func:`regio.persistence._stateread.split_transcript`) or of a session store
(:func:`regio.persistence.store.lazy.lazy_transcript`) and a store's usage records
(:func:`regio.persistence.store.lazy.lazy_usage`), held by
:class:`regio.session._transcript.Transcript` and :class:`regio.session._usage.UsageLedger`;
:func:`stored_records` builds one from the raw records and how to decode one. A reader whose
records are gone from where they were stored (the session was deleted from its store since
the load) raises :class:`StoredRecordsLostError`; what the engine holds in memory is intact
(:mod:`regio.persistence._lostparts` saves it without them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import attrs
import msgspec

from regio.errors import RegioError

__all__ = ["StoredRecords", "StoredRecordsLostError", "stored_records"]


class StoredRecordsLostError(RegioError):
    """What a load left to read on first use (transcript or usage records, relief originals)
    is gone from its store: the session was deleted, or the server restarted without
    persistence, since the load. The engine's window and everything added since the load are
    in memory; ``Engine.save`` and ``save_to(..., create=True)`` save them without the lost
    parts and say which (:mod:`regio.persistence._lostparts`)."""


T = TypeVar("T")
R = TypeVar("R")


@attrs.define(eq=False)
class StoredRecords(Generic[T]):
    """The ``count`` records a session held when it was loaded, left to read on first use:
    ``read`` returns them all, decoded; optional ``one`` (position -> that record, decoded
    alone), ``turns`` (the turn of every record, in order, without decoding the rest),
    ``encoded`` (the records as a save writes them, JSON or msgpack when given ``True``: as
    stored, never decoded), ``last`` (the newest record, when known without reading),
    ``last_turn`` (no record has a later turn; ``None``: unknown) and ``summary`` (what the
    session saved about all of them, such as the usage ledger's totals; ``None``: nothing)."""

    count: int
    read: Callable[[], list[T]]
    one: Callable[[int], T] | None = None
    turns: Callable[[], Sequence[int]] | None = None
    encoded: Callable[[bool], list[Any]] | None = None
    last: T | None = None
    last_turn: int | None = None
    summary: Any = None

    def all(self, what: str) -> list[T]:
        """Every record, read now. Raises ``ValueError`` naming ``what`` (``transcript``,
        ``usage ledger``) when the source holds another number of records than ``count``."""
        records = self.read()
        if len(records) != self.count:
            raise ValueError(
                f"the stored {what} has {len(records)} records, not the {self.count} saved "
                "with the session"
            )
        return records


def stored_records(
    raw: Callable[[], Sequence[R]],
    count: int,
    decode: Callable[[R], T],
    damaged: Callable[[Exception], Exception],
    turn: Callable[[R], int] | None = None,
    **fields: Any,
) -> StoredRecords[T]:
    """The :class:`StoredRecords` of ``count`` raw records (``raw()`` returns them: called
    once, on first use, e.g. a read from the store), each decoded by ``decode`` and its turn
    read by ``turn``; a ``msgspec`` decode or validation error becomes ``damaged(error)``
    (raised when the record is decoded). ``fields``: the other :class:`StoredRecords` fields."""
    failures = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
    held: list[Sequence[R]] = []

    def records() -> Sequence[R]:
        if not held:
            held.append(raw())
        return held[0]

    def one(i: int) -> T:
        try:
            return decode(records()[i])
        except failures as exc:
            raise damaged(exc) from exc

    def read() -> list[T]:
        return [one(i) for i in range(len(records()))]

    def turns() -> list[int]:
        assert turn is not None
        try:
            return [turn(r) for r in records()]
        except failures as exc:
            raise damaged(exc) from exc

    return StoredRecords(count, read, one, turns if turn is not None else None, **fields)
