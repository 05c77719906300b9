"""Per-session leases: one writer at a time works on a session, across threads, processes and
machines.

A save is already atomic and versioned (a writer that did not see the last version gets
:class:`SessionConflictError` and writes nothing). A lease adds the other half: while one
writer holds a session's lease, no other writer starts work on it (a second worker compacting
the same session, paying the summarizer for nothing, then losing the save). The holder's saves
pass the lease (``engine.save_to(store, id, lease=lease)``); a save without it, or with a lease
that expired and was taken over, while another writer holds the session's lease raises
:class:`SessionLeasedError` and writes nothing, and the version check still guards a save
whose lease expired unclaimed::

    with store.lease("user-42", ttl=60, wait=30) as lease:   # waits up to 30 s for it
        engine = Engine.load_from(store, "user-42")
        ...                                                  # the whole request or compaction
        engine.save_to(store, "user-42", lease=lease)        # refused if the lease was lost

A lease expires ``ttl`` seconds after it was taken or last renewed (:meth:`SessionLease.renew`),
so a writer that died frees the session by itself. The store keeps it: a ``leases`` row in
SQLite (the processes' wall clocks, one machine), a key with a server-side expiry in Redis
(``SET NX PX``; the clock is the server's). A store offers :meth:`acquire` through its
``lease(session_id, *, ttl, wait)`` method by implementing ``try_lease(session_id, token, ttl)
-> None | float`` (``None``: taken; else seconds until the holder's lease expires),
``renew_lease(session_id, token, ttl) -> bool`` and ``release_lease(session_id, token) ->
bool``.

A ``ttl`` is a number of seconds in ``(0, MAX_TTL]`` (one day) and a ``wait`` one >= 0
(``inf``: until the lease is free); anything else (an infinite or NaN ttl, a bool, text) is
refused with :class:`LeaseTimeError` before anything is taken or renewed. A lease that can never
expire (a Redis key without expiry, which regio never writes; an SQLite row expiring at
infinity) is reported as :class:`SessionDamagedError` naming how to delete it, never waited on.

In an asyncio event loop (a server holding many sessions' leases at once), the same lease is
taken with :func:`acquire_async` (the same checks and errors), which waits with
``asyncio.sleep`` instead of blocking a thread, and kept with :meth:`SessionLease.keep_alive`
(renewed every third of its lifetime until cancelled); :meth:`SessionLease.arenew` /
:meth:`SessionLease.arelease` are the async forms of the two calls. The store's own calls (a
SQLite transaction, a Redis round trip) run through ``offload`` (default ``asyncio.to_thread``),
so the loop never waits on them::

    lease = await acquire_async(store, "user-42", ttl=30, wait=600)
    keeper = asyncio.create_task(lease.keep_alive())   # raises SessionLeasedError when lost
    try:
        ...                                            # await the model, stream, save
    finally:
        keeper.cancel()
        await lease.arelease()
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import attrs

from .errors import LeaseTimeError, SessionLeasedError

__all__ = [
    "DEFAULT_TTL",
    "DEFAULT_WAIT",
    "MAX_TTL",
    "LeaseStore",
    "Offload",
    "SessionLease",
    "acquire",
    "acquire_async",
    "check_ttl",
]

#: Runs a blocking call off the event loop: ``await offload(fn, *args)`` returns ``fn(*args)``
#: (``asyncio.to_thread``, ``anyio.to_thread.run_sync``).
Offload = Callable[..., Awaitable[Any]]

#: Seconds a lease lasts without a renewal (a request of a proxy or a compaction, with room).
DEFAULT_TTL = 30.0
#: Seconds :func:`acquire` waits for another writer's lease by default.
DEFAULT_WAIT = 30.0
#: Longest lease (seconds, one day): a lease is renewed while its writer works, and one that
#: outlives its writer holds the session until it expires.
MAX_TTL = 86_400.0
#: Longest pause between two tries while waiting (seconds).
_POLL = 0.05
#: What :func:`acquire` tells a caller whose wait ran out (a CLI names its own option).
WAIT_ADVICE = "wait longer (lease(..., wait=SECONDS))"


def _seconds(value: object) -> float | None:
    """``value`` as seconds, or ``None`` for anything that is not a real number (a bool, text,
    NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def check_ttl(ttl: object, where: str) -> float:
    """``ttl`` as a lease's seconds; raises :class:`LeaseTimeError` naming ``where`` for
    anything but a number of seconds in ``(0, MAX_TTL]`` (no infinite lease: it would hold the
    session forever once its writer is gone; a long job renews its lease instead)."""
    seconds = _seconds(ttl)
    if seconds is None or not 0 < seconds <= MAX_TTL:
        raise LeaseTimeError(
            f"{where}: ttl is the seconds a lease lasts without a renewal, a number in (0, "
            f"{MAX_TTL:g}], got {ttl!r}; a longer job renews its lease (lease.renew()) while "
            "it works"
        )
    return seconds


def _check_wait(wait: object, where: str) -> float:
    seconds = _seconds(wait)
    if seconds is None or seconds < 0:
        raise LeaseTimeError(
            f"{where}: wait is the seconds to wait for another writer's lease, a number >= 0 "
            f"(0: one try; inf: until it is free), got {wait!r}"
        )
    return seconds


class LeaseStore(Protocol):
    """A store that leases sessions (:class:`regio.persistence.store.SQLiteStore`,
    :class:`regio.persistence.store.RedisStore`): ``try_lease`` returns ``None`` when the lease
    is taken, else the seconds the holder's lease has left; ``renew_lease`` /
    ``release_lease`` return whether the token still held it."""

    @property
    def url(self) -> str: ...

    def try_lease(self, session_id: str, token: str, ttl: float) -> float | None: ...

    def renew_lease(self, session_id: str, token: str, ttl: float) -> bool: ...

    def release_lease(self, session_id: str, token: str) -> bool: ...


@attrs.define(eq=False)
class SessionLease:
    """One writer's hold on ``session_id`` in ``store`` (see the module doc): ``token`` (random,
    names the holder), ``ttl`` (seconds). Use it as a context manager (released on exit) or
    call :meth:`release`; pass it to every save made under it."""

    store: LeaseStore
    session_id: str
    token: str
    ttl: float
    released: bool = False

    def renew(self, ttl: float | None = None) -> None:
        """Extend the lease to ``ttl`` (default its own) seconds from now. Raises
        :class:`SessionLeasedError` when it expired and another writer took the session (stop:
        whatever this writer saves now is refused), :class:`LeaseTimeError` for a ``ttl`` that
        is not a number of seconds in ``(0, MAX_TTL]``."""
        self._new_ttl(ttl)
        if self.released or not self.store.renew_lease(self.session_id, self.token, self.ttl):
            raise self._lost()

    def release(self) -> None:
        """Give the session back (no-op when already released or expired)."""
        if not self.released:
            self.released = True
            self.store.release_lease(self.session_id, self.token)

    async def arenew(self, ttl: float | None = None, *, offload: Offload | None = None) -> None:
        """:meth:`renew` with the store's call run through ``offload`` (module doc); the same
        errors."""
        self._new_ttl(ttl)
        run = offload or asyncio.to_thread
        if self.released or not await run(
            self.store.renew_lease, self.session_id, self.token, self.ttl
        ):
            raise self._lost()

    async def arelease(self, *, offload: Offload | None = None) -> None:
        """:meth:`release` with the store's call run through ``offload`` (module doc)."""
        if not self.released:
            self.released = True
            await (offload or asyncio.to_thread)(
                self.store.release_lease, self.session_id, self.token
            )

    async def keep_alive(
        self, every: float | None = None, *, offload: Offload | None = None
    ) -> None:
        """Renew the lease every ``every`` seconds (default a third of its ``ttl``; a number in
        ``(0, ttl)``, else :class:`LeaseTimeError`) until cancelled. Raises
        :class:`SessionLeasedError` when a renewal finds it lost (the writer must stop: its
        saves are refused)."""
        if every is not None:
            seconds = _seconds(every)
            if seconds is None or not 0 < seconds < self.ttl:
                raise LeaseTimeError(
                    f"{self.store.url}: keep the lease on session {self.session_id!r} alive: "
                    f"every is the seconds between renewals, a number in (0, ttl={self.ttl:g}) "
                    f"(a longer pause lets the lease expire between them), got {every!r}"
                )
        while True:
            await asyncio.sleep(every if every is not None else self.ttl / 3)
            await self.arenew(offload=offload)

    def _new_ttl(self, ttl: float | None) -> None:
        """Take a renewal's ``ttl`` (checked: :func:`check_ttl`); ``None`` keeps the lease's."""
        if ttl is not None:
            where = f"{self.store.url}: renew the lease on session {self.session_id!r}"
            self.ttl = check_ttl(ttl, where)

    def _lost(self) -> SessionLeasedError:
        return SessionLeasedError(
            f"{self.store.url}: the lease on session {self.session_id!r} was lost (it "
            "expired, or was released, and another writer may have taken the session); "
            "take a new lease and reload the session",
            session_id=self.session_id,
        )

    def __enter__(self) -> SessionLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _checked(store: LeaseStore, session_id: str, ttl: object, wait: object) -> tuple[float, float]:
    """``(ttl, wait)`` as seconds (:func:`check_ttl`, :func:`_check_wait`), before any try."""
    where = f"{store.url}: lease session {session_id!r}"
    return check_ttl(ttl, where), _check_wait(wait, where)


def _busy(
    store: LeaseStore, session_id: str, left: float, wait: float, advice: str
) -> SessionLeasedError:
    return SessionLeasedError(
        f"{store.url}: session {session_id!r} is leased by another writer for "
        f"{left:.1f} s more (waited {wait:g} s); nothing was done: try again later, or "
        f"{advice}",
        session_id=session_id,
        expires_in=left,
    )


def acquire(
    store: LeaseStore,
    session_id: str,
    *,
    ttl: float = DEFAULT_TTL,
    wait: float = DEFAULT_WAIT,
    advice: str = WAIT_ADVICE,
) -> SessionLease:
    """Take the lease on ``session_id`` in ``store`` for ``ttl`` seconds, waiting up to ``wait``
    seconds (0: one try; ``inf``: until it is free) while another writer holds it. Raises
    :class:`SessionLeasedError` (``expires_in``: when the holder's lease runs out; its message
    ends with ``advice``, how the caller waits longer) when it is still held after ``wait``,
    :class:`LeaseTimeError` (a ``ValueError``) for a ``ttl`` outside ``(0, MAX_TTL]`` or a
    ``wait`` that is not a number >= 0, :class:`SessionDamagedError` for a holder's lease that
    never expires (module doc)."""
    ttl, wait = _checked(store, session_id, ttl, wait)
    token = secrets.token_hex(16)
    deadline = time.monotonic() + wait
    while True:
        left = store.try_lease(session_id, token, ttl)
        if left is None:
            return SessionLease(store, session_id, token, ttl)
        now = time.monotonic()
        if now >= deadline:
            raise _busy(store, session_id, left, wait, advice)
        time.sleep(max(0.001, min(_POLL, left, deadline - now)))


async def acquire_async(
    store: LeaseStore,
    session_id: str,
    *,
    ttl: float = DEFAULT_TTL,
    wait: float = DEFAULT_WAIT,
    advice: str = WAIT_ADVICE,
    offload: Offload | None = None,
) -> SessionLease:
    """:func:`acquire` in an asyncio event loop: the wait is ``asyncio.sleep`` (the loop serves
    other work meanwhile) and each try runs through ``offload`` (default
    ``asyncio.to_thread``). Same arguments, checks, result and errors."""
    ttl, wait = _checked(store, session_id, ttl, wait)
    run = offload or asyncio.to_thread
    token = secrets.token_hex(16)
    deadline = time.monotonic() + wait
    while True:
        left = await run(store.try_lease, session_id, token, ttl)
        if left is None:
            return SessionLease(store, session_id, token, ttl)
        now = time.monotonic()
        if now >= deadline:
            raise _busy(store, session_id, left, wait, advice)
        await asyncio.sleep(max(0.001, min(_POLL, left, deadline - now)))
