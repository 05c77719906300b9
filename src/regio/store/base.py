"""The session store contract and the record codec every store shares.

A session is stored as

* a **head**: the engine's state without its transcript and usage ledger (the window, layout
  state, calibration, compaction bookkeeping, options). It is bounded by the window, so
  rewriting it on every save costs what the window holds, not what the session did;
* **records**, append-only: the transcript records and usage records added since the last
  save, one encoded record each.

A save appends only the records after the :class:`StoreMark` the engine got from its last load
or save and replaces the head, as one atomic step guarded by the session's version: when
another writer saved the session in between, the save raises :class:`SessionConflictError`
and nothing is written (reload with ``Engine.load_from`` and redo the turn).

The state encoding is :func:`regio.runtime.persistence.engine_state` /
:func:`regio.runtime.persistence.restore_engine` (the same state ``Engine.save`` writes), in
msgpack.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import msgspec

from regio.errors import RegioError

__all__ = [
    "SessionConflictError",
    "SessionNotFoundError",
    "SessionRecords",
    "SessionStore",
    "SessionStoreError",
    "StoreMark",
    "decode_session",
    "encode_save",
]


class SessionStoreError(RegioError):
    """A session store could not do what was asked (the message names the store and session)."""


class SessionNotFoundError(SessionStoreError, KeyError):
    """No session with that id is in the store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SessionConflictError(SessionStoreError):
    """Another writer saved the session after this engine loaded it; nothing was written.

    ``expected`` is the version this engine last saw, ``found`` the stored one. Reload the
    session (``Engine.load_from``) and redo the turn."""

    def __init__(self, message: str, *, session_id: str, expected: int, found: int) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.expected = expected
        self.found = found


class StoreMark(msgspec.Struct, frozen=True):
    """Where an engine stands in a store: ``store`` (the store's URL), ``session_id``,
    ``version`` (saves so far) and the transcript / usage record counts already stored."""

    store: str
    session_id: str
    version: int
    transcript: int
    ledger: int


class SessionRecords(msgspec.Struct, frozen=True):
    """What one save hands to a store: the new ``head`` and the records to append (bytes)."""

    head: bytes
    transcript: list[bytes]
    ledger: list[bytes]
    transcript_count: int
    ledger_count: int

    @property
    def size(self) -> int:
        """Bytes this save writes (head plus appended records)."""
        return len(self.head) + sum(map(len, self.transcript)) + sum(map(len, self.ledger))


@runtime_checkable
class SessionStore(Protocol):
    """Stores many engine sessions by id (module doc).

    ``save`` raises :class:`SessionConflictError` when ``expected`` (the version the caller
    last saw, 0 for a new session) is not the stored version and returns the new version;
    ``load`` raises :class:`SessionNotFoundError` and returns ``(head, transcript records,
    ledger records, version)``."""

    url: str

    def save(self, session_id: str, records: SessionRecords, *, expected: int) -> int:
        """Append ``records`` and replace the head if the session is at ``expected``."""
        ...

    def load(self, session_id: str) -> tuple[bytes, list[bytes], list[bytes], int]:
        """The stored head, records and version of ``session_id``."""
        ...

    def sessions(self) -> list[str]:
        """The stored session ids, sorted."""
        ...

    def delete(self, session_id: str) -> bool:
        """Remove a session; ``False`` when there was none."""
        ...


def conflict(store: str, session_id: str, expected: int, found: int) -> SessionConflictError:
    """The :class:`SessionConflictError` of a lost race (message names the versions)."""
    if expected == 0:
        text = (
            f"{store}: session {session_id!r} already exists (version {found}); load it with "
            "Engine.load_from before saving, or delete it"
        )
    else:
        text = (
            f"{store}: session {session_id!r} was saved by another writer (stored version "
            f"{found}, this engine loaded version {expected}); nothing was written. Reload it "
            "with Engine.load_from and redo the turn"
        )
    return SessionConflictError(text, session_id=session_id, expected=expected, found=found)


def encode_save(engine: Any, mark: StoreMark | None) -> SessionRecords:
    """The head and the records after ``mark`` of ``engine`` (module doc). Raises
    :class:`SessionStoreError` when the engine has fewer records than ``mark`` says were
    stored (it is not the engine that was loaded or saved)."""
    from regio.runtime.persistence import engine_state

    state = engine_state(engine)
    done_t = mark.transcript if mark else 0
    done_l = mark.ledger if mark else 0
    if len(state.transcript) < done_t or len(state.ledger) < done_l:
        raise SessionStoreError(
            f"session {mark.session_id if mark else '?'}: the engine has fewer transcript or "
            "usage records than the store; save it under a new session id"
        )
    encode = msgspec.msgpack.encode
    head = encode(msgspec.structs.replace(state, transcript=[], ledger=[]))
    return SessionRecords(
        head=head,
        transcript=[encode(r) for r in state.transcript[done_t:]],
        ledger=[encode(r) for r in state.ledger[done_l:]],
        transcript_count=len(state.transcript),
        ledger_count=len(state.ledger),
    )


def decode_session(
    where: str, head: bytes, transcript: Sequence[bytes], ledger: Sequence[bytes]
) -> Any:
    """The :class:`regio.runtime.persistence.EngineState` of stored parts. Raises
    :class:`SessionStoreError` naming ``where`` when they are not a regio session."""
    from regio.runtime.persistence import FORMAT, EngineState
    from regio.runtime.transcript import TranscriptRecord
    from regio.runtime.usage import UsageRecord

    try:
        state = msgspec.msgpack.decode(head, type=EngineState)
        t_dec = msgspec.msgpack.Decoder(TranscriptRecord)
        l_dec = msgspec.msgpack.Decoder(UsageRecord)
        records = [t_dec.decode(r) for r in transcript]
        usage = [l_dec.decode(r) for r in ledger]
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SessionStoreError(f"{where}: not a regio session ({exc})") from exc
    if state.format != FORMAT:
        raise SessionStoreError(
            f"{where}: state format {state.format!r} is not {FORMAT!r}; it was written by "
            "another regio version"
        )
    return msgspec.structs.replace(state, transcript=records, ledger=usage)
