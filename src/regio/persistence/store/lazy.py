"""What a store load leaves to read on first use: the transcript and the usage records.

A load from a store that can (``load_window``) reads the head, the counts, the newest usage
record and the window entries; :func:`lazy_transcript` and :func:`lazy_usage` read and decode
the rest when the engine first needs them, and the head's ``last_turn`` tells the transcript
which turn its stored records end with (so ``Engine.new_items`` of a later turn reads none).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from .errors import SessionDamagedError
from .failures import DECODE_ERRORS

__all__ = ["lazy_transcript", "lazy_usage"]


class _RecordTurn(msgspec.Struct):
    """The turn of a stored :class:`regio.session._transcript.TranscriptRecord` (the rest of
    the record is skipped, not decoded)."""

    turn: int


def lazy_transcript(
    where: str,
    transcript: Sequence[bytes] | Callable[[], Sequence[bytes]],
    count: int,
    last_turn: int | None = None,
) -> Any:
    """A :class:`regio.session._transcript.Transcript` of ``count`` stored records
    (``transcript``: their bytes, or a function reading them from the store), read on first
    use and decoded then, all at once or one record at a time where a lookup knows the turn it
    needs (the records' turns are read without decoding the rest); a damaged record raises
    :class:`SessionStoreError` naming ``where`` when it is decoded. Counting and appending
    never read them, nor does ``new_items`` of a turn after ``last_turn`` (the head's)."""
    from regio.session._stored import stored_records
    from regio.session._transcript import Transcript, TranscriptRecord

    dec = msgspec.msgpack.Decoder(TranscriptRecord)
    light = msgspec.msgpack.Decoder(_RecordTurn)

    def raw() -> Sequence[bytes]:
        return transcript() if callable(transcript) else transcript

    def damaged(exc: Exception) -> SessionDamagedError:
        return SessionDamagedError(
            f"{where}: a stored transcript record is damaged ({exc}); the window is intact, "
            "restore the history from a file save"
        )

    def turn(data: bytes) -> int:
        return light.decode(data).turn

    stored = stored_records(raw, count, dec.decode, damaged, turn, last_turn=last_turn)
    return Transcript(stored=stored)


def lazy_usage(
    where: str,
    read: Callable[[], Sequence[bytes]],
    count: int,
    newest: bytes | None,
    totals: Sequence[Any] | None = None,
) -> Any:
    """The :class:`regio.session._stored.StoredRecords` of ``count`` stored usage records for
    :func:`regio.persistence._load.restore_engine`'s ``usage``: ``read`` reads them (on first
    use of the ledger's records; a damaged record raises :class:`SessionStoreError` naming
    ``where`` then), ``newest`` is the last one, decoded now; ``totals``, the head's
    :class:`regio.session._usage.UsageTotals` of them (its fields in order), becomes its
    ``summary`` (so ``UsageLedger.totals`` reads none of them; totals of another number of
    records are left out, and the totals take one pass)."""
    from regio.session._stored import stored_records
    from regio.session._usage import UsageRecord, UsageTotals

    dec = msgspec.msgpack.Decoder(UsageRecord)

    def damaged(exc: Exception) -> SessionDamagedError:
        return SessionDamagedError(
            f"{where}: a stored usage record is damaged ({exc}); the window is intact"
        )

    try:
        last = dec.decode(newest) if newest is not None else None
    except DECODE_ERRORS as exc:
        raise SessionDamagedError(
            f"{where}: the newest usage record is damaged ({exc}); restore the session from a "
            "backup or a file save"
        ) from exc
    summary = UsageTotals(*totals) if totals is not None else None
    if summary is not None and summary.calls != count:
        summary = None  # costs one pass over the records, never a wrong total
    return stored_records(read, count, dec.decode, damaged, last=last, summary=summary)
