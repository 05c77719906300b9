"""The driver errors of the stores turned into :class:`SessionStoreError` s that name the store,
the session, the cause and the fix (:mod:`regio.persistence.store.errors`), the driver's error kept
as ``__cause__``.

:func:`sqlite_failure` reads SQLite's result code (``sqlite3.Error.sqlite_errorname``,
https://www.sqlite.org/rescode.html): a full disk, an I/O error, a lock held past the timeout or
a file that cannot be opened or written is :class:`StoreUnavailableError`; a malformed or foreign
file, a constraint the stored rows break and text that is no UTF-8 is
:class:`SessionDamagedError`. :func:`redis_failure` does the same for the ``redis`` package:
a connection or timeout error, a server out of memory (``OOM``), read-only (``READONLY``) or
loading its data (``LOADING``) is unavailable; ``WRONGTYPE`` is damage, named by its key.
:data:`DECODE_ERRORS` are the errors a decoder raises on damaged bytes.
"""

from __future__ import annotations

import sqlite3

import msgspec

from .errors import SessionDamagedError, SessionStoreError, StoreUnavailableError

__all__ = [
    "DECODE_ERRORS",
    "damaged_record",
    "incomplete_session",
    "redis_failure",
    "sqlite_failure",
]

#: What decoding damaged stored bytes raises: msgspec's errors, and ``UnicodeDecodeError``
#: (msgspec raises it for a string that is no UTF-8).
DECODE_ERRORS: tuple[type[Exception], ...] = (
    msgspec.DecodeError,
    msgspec.ValidationError,
    UnicodeDecodeError,
)

_UNAVAILABLE = {
    "SQLITE_FULL": "the disk is full (or the database reached its size limit): free space",
    "SQLITE_BUSY": "another process held the database lock past the timeout: try again, or "
    "open the store with a longer timeout=",
    "SQLITE_LOCKED": "the database is locked by another connection: try again",
    "SQLITE_IOERR": "the disk reported an I/O error: check the disk",
    "SQLITE_CANTOPEN": "the file cannot be opened: check the path and its folder's permissions",
    "SQLITE_READONLY": "the file is read-only: check its permissions",
    "SQLITE_PERM": "access to the file is denied: check its permissions",
    "SQLITE_NOMEM": "SQLite ran out of memory: free memory",
    "SQLITE_PROTOCOL": "the database's lock protocol failed: try again",
}


def sqlite_failure(
    where: str, action: str, exc: Exception, *, wrote: bool, session_id: str | None = None
) -> SessionStoreError:
    """The :class:`SessionStoreError` of ``exc`` (a ``sqlite3.Error`` or a
    ``UnicodeDecodeError`` of a text column) raised while the store at ``where`` did
    ``action`` (``"save session 'a'"``); ``wrote``: the action writes (the message says that
    nothing was written and the engine still holds the session)."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    base = name.split("_", 2)
    family = "_".join(base[:2]) if len(base) > 2 else name  # SQLITE_IOERR_WRITE -> SQLITE_IOERR
    kept = (
        "nothing was written and this engine still holds the session"
        if wrote
        else "the store is unchanged"
    )
    fix = _UNAVAILABLE.get(name) or _UNAVAILABLE.get(family)
    if fix is not None and isinstance(exc, sqlite3.Error):
        return StoreUnavailableError(
            f"{where}: cannot {action} ({exc}); {kept}: {fix}, then try again",
            session_id=session_id,
        )
    return SessionDamagedError(
        f"{where}: cannot {action}: the database file is damaged ({type(exc).__name__}: {exc}); "
        f"{kept}. Restore the file from a backup or the session from a file save "
        "(Engine.save), or use another file",
        session_id=session_id,
    )


def damaged_record(
    where: str, key: str, exc: Exception, session_id: str | None = None
) -> SessionDamagedError:
    """The :class:`SessionDamagedError` of the stored record ``key`` that did not decode."""
    return SessionDamagedError(
        f"{where}: the stored record {key!r} is damaged ({type(exc).__name__}: {exc}); the "
        "store is unchanged. Restore the session from a backup or a file save (Engine.save), "
        "or delete it",
        session_id=session_id,
        key=key,
    )


def incomplete_session(where: str, session_id: str, missing: str) -> SessionDamagedError:
    """The :class:`SessionDamagedError` of a save that found the stored session without
    ``missing`` (what its last save left there: window records, transcript or usage records;
    a table or key was dropped, or rows deleted, since). The save wrote nothing: a save of
    the changes alone would report success over a session no load can read."""
    return SessionDamagedError(
        f"{where}: session {session_id!r} no longer holds {missing} its last save left (a "
        "table or key was dropped, or rows deleted, since); nothing was written, so no save "
        "reports success over a session that cannot be loaded. This engine still holds the "
        f"session: save it whole under a new id (engine.save_to(store, 'new-id', "
        f"create=True)), or delete the damaged one (store.delete({session_id!r})) and save it "
        "again with create=True; engine.save(path) keeps a copy in a file",
        session_id=session_id,
    )


_REDIS_UNAVAILABLE = {
    "OOM": "the server is out of memory (maxmemory): free memory or raise maxmemory",
    "READONLY": "the server is a read-only replica: point the store at the primary",
    "LOADING": "the server is loading its data: try again in a moment",
    "BUSY": "the server is busy running a script: try again",
    "MASTERDOWN": "the replica lost its primary: try again",
    "NOAUTH": "the server wants a password: put it in the URL (redis://:password@host)",
    "WRONGPASS": "the server refused the credentials: check the URL's user and password",
    "NOPERM": "the server's ACL denies a command regio needs: grant it to the user",
}


def redis_failure(
    where: str, action: str, exc: Exception, *, wrote: bool, session_id: str | None = None
) -> SessionStoreError:
    """The :class:`SessionStoreError` of ``exc`` (a ``redis.RedisError``) raised while the store
    at ``where`` did ``action``. ``WRONGTYPE`` is :class:`SessionDamagedError` (the caller names
    the key: :func:`regio.persistence.store.redis_store`), everything else
    :class:`StoreUnavailableError`."""
    text = str(exc)
    code = text.split(" ", 1)[0]
    kept = (
        "nothing was written and this engine still holds the session"
        if wrote
        else "the store is unchanged"
    )
    if code == "WRONGTYPE":
        return SessionDamagedError(
            f"{where}: cannot {action}: a key of the session holds another type of value "
            f"({text}); {kept}. Another program writes under regio's key prefix: delete the "
            "session's keys, or give the store another prefix",
            session_id=session_id,
        )
    fix = _REDIS_UNAVAILABLE.get(code, "check that the server is up and reachable")
    return StoreUnavailableError(
        f"{where}: cannot {action} ({type(exc).__name__}: {text}); {kept}: {fix}, then try again",
        session_id=session_id,
    )
