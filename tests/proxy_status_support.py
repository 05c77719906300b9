"""A stand-in for the proxy's records store holding given sessions: the two reads
:func:`regio.proxy.status.status_data` makes (for tests of the status figures)."""

from __future__ import annotations

from regio.proxy.records import RequestStat, SessionMeta


class ListedRecords:
    """``sessions``: ``(meta, stats)`` per session, in the order ``sessions()`` lists them."""

    def __init__(self, sessions: list[tuple[SessionMeta, list[RequestStat]]]) -> None:
        self._sessions = sessions

    def sessions(self, limit: int) -> list[SessionMeta]:
        """The first ``limit`` sessions' metas."""
        return [m for m, _ in self._sessions][:limit]

    def stats(self, session: str, limit: int) -> list[RequestStat]:
        """The last ``limit`` stats of ``session``."""
        return next(s for m, s in self._sessions if m.id == session)[-limit:]
