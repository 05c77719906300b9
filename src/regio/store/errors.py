"""The errors of the session stores (re-exported by :mod:`regio.store` and
:mod:`regio.store.base`)."""

from __future__ import annotations

from regio.errors import RegioError

__all__ = ["SessionConflictError", "SessionNotFoundError", "SessionStoreError"]


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
