"""What a store load leaves to read on first use: the transcript and the usage records.

A load from a store that can (``load_window``) reads the head, the counts, the newest usage
record and the window entries; :func:`lazy_transcript` and :func:`lazy_usage` read and decode
the rest when the engine first needs them, and :func:`stored_last_turn` tells the transcript
which turn its stored records end with (so ``Engine.new_items`` of a later turn reads none).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from .base import SessionStoreError

__all__ = ["lazy_transcript", "lazy_usage", "stored_last_turn"]


class _HeadTurn(msgspec.Struct):
    """The one field of a head a lazy load reads before the records (:func:`stored_last_turn`)."""

    last_turn: int | None = None


def stored_last_turn(head: bytes) -> int | None:
    """The turn no stored transcript record of ``head``'s session is later than (``None``
    for a head written before regio stored it: the records must be read to know)."""
    try:
        return msgspec.msgpack.decode(head, type=_HeadTurn).last_turn
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def lazy_transcript(
    where: str,
    transcript: Sequence[bytes] | Callable[[], Sequence[bytes]],
    count: int,
    last_turn: int | None = None,
) -> Any:
    """A :class:`regio.runtime.transcript.Transcript` of ``count`` stored records
    (``transcript``: their bytes, or a function reading them from the store), read and
    decoded on first use (a damaged record raises :class:`SessionStoreError` naming ``where``
    then); counting and appending never read them, nor does ``new_items`` of a turn after
    ``last_turn`` (the head's :func:`stored_last_turn`)."""
    from regio.runtime.transcript import Transcript, TranscriptRecord

    def decode() -> list[TranscriptRecord]:
        dec = msgspec.msgpack.Decoder(TranscriptRecord)
        raw = transcript() if callable(transcript) else transcript
        try:
            return [dec.decode(r) for r in raw]
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise SessionStoreError(
                f"{where}: a stored transcript record is damaged ({exc}); the window is intact, "
                "restore the history from a file save"
            ) from exc

    return Transcript(pending=decode, pending_count=count, pending_last_turn=last_turn)


def lazy_usage(
    where: str, read: Callable[[], Sequence[bytes]], count: int, newest: bytes | None
) -> tuple[Callable[[], list[Any]], int, Any]:
    """``(read, count, newest)`` of ``count`` stored usage records for
    :func:`regio.runtime.persistence.restore_engine`'s ``usage``: ``read`` reads and decodes
    them (on first use of the ledger's records; a damaged record raises
    :class:`SessionStoreError` naming ``where``), ``newest`` is the last one, decoded now."""
    from regio.runtime.usage import UsageRecord

    dec = msgspec.msgpack.Decoder(UsageRecord)

    def decode() -> list[Any]:
        try:
            return [dec.decode(r) for r in read()]
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise SessionStoreError(
                f"{where}: a stored usage record is damaged ({exc}); the window is intact"
            ) from exc

    try:
        last = dec.decode(newest) if newest is not None else None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SessionStoreError(f"{where}: the newest usage record is damaged ({exc})") from exc
    return decode, count, last
