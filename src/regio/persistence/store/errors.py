"""The errors of the session stores (re-exported by :mod:`regio.persistence.store` and
:mod:`regio.persistence.store.base`).

Every failure of a store reaches the caller as a :class:`SessionStoreError` (a
:class:`regio.errors.RegioError`) whose message names the store and the session (and the record
or key concerned, when one is), the cause and the fix; the driver's own error (``sqlite3``,
``redis``, a decoder's) is its ``__cause__``. The subclasses say what the caller can do:

(:class:`SessionStoreError` itself is defined in :mod:`regio.errors`, where the relief book
names a lost original with it; it is importable from here and from
:mod:`regio.persistence.store`.)

* :class:`SessionNotFoundError`: no such session;
* :class:`SessionConflictError`: another writer saved first (reload and redo the turn), or
  holds the session's lease (:class:`SessionLeasedError`: wait, or try later);
* :class:`SessionLostError`: the store no longer holds a session this engine saved (a Redis
  restart without persistence, a deleted session): the engine holds it, save it again with
  ``save_to(..., create=True)``; never reload, which would find nothing. Of an engine loaded
  from the store, the parts its load left unread are gone too
  (:class:`SessionHistoryLostError`): that save keeps everything else and warns which;
* :class:`StoreUnavailableError`: the store cannot do it now (disk full, I/O error, a lock
  held too long, a server that cannot be reached or is out of memory); nothing was written and
  the engine still holds the session: fix the cause and save again;
* :class:`SessionDamagedError`: what is stored cannot be read (a malformed database file, a
  record that does not decode, a Redis key of another type, a counter that is no integer);
  nothing was changed: restore the session from a backup or a file save, or delete it.
"""

from __future__ import annotations

from regio.errors import SessionStoreError
from regio.session._stored import StoredRecordsLostError

__all__ = [
    "LeaseTimeError",
    "SessionConflictError",
    "SessionDamagedError",
    "SessionHistoryLostError",
    "SessionLeasedError",
    "SessionLostError",
    "SessionNotFoundError",
    "SessionStoreError",
    "StoreUnavailableError",
]


class SessionNotFoundError(SessionStoreError, KeyError):
    """No session with that id is in the store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SessionConflictError(SessionStoreError):
    """Another writer saved the session after this engine loaded it; nothing was written.

    ``expected`` is the version this engine last saw, ``found`` the stored one. Reload the
    session (``Engine.load_from``) and redo the turn."""

    def __init__(
        self,
        message: str,
        *,
        session_id: str,
        expected: int,
        found: int,
        key: str | None = None,
    ) -> None:
        super().__init__(message, session_id=session_id, key=key)
        self.expected = expected
        self.found = found


class SessionLeasedError(SessionConflictError):
    """Another writer holds the session's lease (:meth:`regio.persistence.store.SQLiteStore.lease`,
    :meth:`regio.persistence.store.RedisStore.lease`), or this writer's lease was taken over after
    it expired; nothing was written. ``expires_in``: seconds until the holder's lease expires
    (``None``: unknown). Wait for it (``lease(..., wait=SECONDS)``; ``regio repair --wait``)
    or try later."""

    def __init__(
        self,
        message: str,
        *,
        session_id: str,
        expires_in: float | None = None,
        key: str | None = None,
    ) -> None:
        super().__init__(message, session_id=session_id, expected=-1, found=-1, key=key)
        self.expires_in = expires_in


class LeaseTimeError(SessionStoreError, ValueError):
    """A lease's ``ttl`` or ``wait`` that is not a number of seconds it can use (``ttl``
    outside ``(0, MAX_TTL]``: an infinite lease would hold the session forever; NaN; a bool or
    text); nothing was taken. Also a :class:`ValueError`, which it was before."""


class SessionLostError(SessionStoreError):
    """The store no longer holds a session this engine saved (``expected``: the version the
    engine saved last): the store was emptied (a Redis restart without persistence) or the
    session was deleted. The engine still holds the session; ``save_to(store, id,
    create=True)`` writes it again. Never reload it: a reload finds nothing, or another
    engine's new session."""

    def __init__(self, message: str, *, session_id: str, expected: int) -> None:
        super().__init__(message, session_id=session_id)
        self.expected = expected


class SessionHistoryLostError(SessionLostError, StoredRecordsLostError):
    """What a load left to read on first use (the transcript or usage records, the relief
    originals stored before the load) is gone from the store: the session was deleted, or the
    server restarted without persistence, since the load. The engine holds the window and
    everything added since: ``engine.save(path)`` or ``engine.save_to(store, id,
    create=True)`` saves it without the lost parts and warns which
    (:mod:`regio.persistence._lostparts`)."""


class StoreUnavailableError(SessionStoreError):
    """The store cannot do it now (disk full, I/O error, lock timeout, server unreachable or
    out of memory): nothing was written, the engine still holds the session. Fix the cause
    named in the message and save again."""


class SessionDamagedError(SessionStoreError):
    """What is stored cannot be read (malformed database file, undecodable record, a key of
    another type, a non-integer counter): nothing was changed. Restore the session from a
    backup or a file save (``Engine.save``), or delete it."""


def conflict(
    store: str, session_id: str, expected: int, found: int
) -> SessionConflictError | SessionLostError:
    """The :class:`SessionConflictError` of a lost race (message names the versions), or the
    :class:`SessionLostError` of a session the engine saved (``expected`` > 0) that the store
    no longer holds (``found`` 0)."""
    if expected > 0 and found == 0:
        return SessionLostError(
            f"{store}: session {session_id!r} is no longer in the store (this engine saved "
            f"version {expected}; the store was emptied, as by a Redis restart without "
            "persistence, or the session was deleted); nothing was written. The engine still "
            f"holds the session: write it again with engine.save_to(store, {session_id!r}, "
            "create=True). Do not reload it: a reload finds nothing",
            session_id=session_id,
            expected=expected,
        )
    if 0 < found < expected:  # versions only grow: this is another session under the id
        return SessionLostError(
            f"{store}: session {session_id!r} in the store is not the one this engine saved "
            f"(stored version {found}, this engine saved version {expected}: the session was "
            "deleted and another one saved under its id); nothing was written. The engine "
            "still holds its session: save it under another id with engine.save_to(store, "
            "'<new id>', create=True), or delete the other session first",
            session_id=session_id,
            expected=expected,
        )
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
