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

In an asyncio event loop (a server holding many sessions' leases at once), the same lease is
taken with :func:`acquire_async`, which waits with ``asyncio.sleep`` instead of blocking a
thread, and kept with :meth:`SessionLease.keep_alive` (renewed every third of its lifetime
until cancelled); :meth:`SessionLease.arenew` / :meth:`SessionLease.arelease` are the async
forms of the two calls. The store's own calls (a SQLite transaction, a Redis round trip) run
through ``offload`` (default ``asyncio.to_thread``), so the loop never waits on them::

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
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from .errors import SessionLeasedError

__all__ = ["DEFAULT_TTL", "DEFAULT_WAIT", "Offload", "SessionLease", "acquire", "acquire_async"]

#: Runs a blocking call off the event loop: ``await offload(fn, *args)`` returns ``fn(*args)``
#: (``asyncio.to_thread``, ``anyio.to_thread.run_sync``).
Offload = Callable[..., Awaitable[Any]]

#: Seconds a lease lasts without a renewal (a request of a proxy or a compaction, with room).
DEFAULT_TTL = 30.0
#: Seconds :func:`acquire` waits for another writer's lease by default.
DEFAULT_WAIT = 30.0
#: Longest pause between two tries while waiting (seconds).
_POLL = 0.05


@attrs.define(eq=False)
class SessionLease:
    """One writer's hold on ``session_id`` in ``store`` (see the module doc): ``token`` (random,
    names the holder), ``ttl`` (seconds). Use it as a context manager (released on exit) or
    call :meth:`release`; pass it to every save made under it."""

    store: Any
    session_id: str
    token: str
    ttl: float
    released: bool = False

    def renew(self, ttl: float | None = None) -> None:
        """Extend the lease to ``ttl`` (default its own) seconds from now. Raises
        :class:`SessionLeasedError` when it expired and another writer took the session (stop:
        whatever this writer saves now is refused)."""
        self.ttl = ttl if ttl is not None else self.ttl
        if self.released or not self.store.renew_lease(self.session_id, self.token, self.ttl):
            raise self._lost()

    def release(self) -> None:
        """Give the session back (no-op when already released or expired)."""
        if not self.released:
            self.released = True
            self.store.release_lease(self.session_id, self.token)

    async def arenew(self, ttl: float | None = None, *, offload: Offload | None = None) -> None:
        """:meth:`renew` with the store's call run through ``offload`` (module doc)."""
        self.ttl = ttl if ttl is not None else self.ttl
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
        """Renew the lease every ``every`` seconds (default a third of its ``ttl``) until
        cancelled. Raises :class:`SessionLeasedError` when a renewal finds it lost (the writer
        must stop: its saves are refused)."""
        while True:
            await asyncio.sleep(every if every is not None else self.ttl / 3)
            await self.arenew(offload=offload)

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


def _check(ttl: float, wait: float) -> None:
    if not ttl > 0 or not wait >= 0:
        raise ValueError(f"a lease needs ttl > 0 and wait >= 0 seconds, got {ttl} and {wait}")


def _busy(store: Any, session_id: str, left: float, wait: float) -> SessionLeasedError:
    return SessionLeasedError(
        f"{store.url}: session {session_id!r} is leased by another writer for "
        f"{left:.1f} s more (waited {wait:g} s); nothing was done: try again later, or "
        "wait longer (lease(..., wait=...))",
        session_id=session_id,
        expires_in=left,
    )


def acquire(
    store: Any, session_id: str, *, ttl: float = DEFAULT_TTL, wait: float = DEFAULT_WAIT
) -> SessionLease:
    """Take the lease on ``session_id`` in ``store`` for ``ttl`` seconds, waiting up to ``wait``
    seconds (0: one try) while another writer holds it. Raises :class:`SessionLeasedError`
    (``expires_in``: when the holder's lease runs out) when it is still held after ``wait``,
    ``ValueError`` for ``ttl <= 0`` or ``wait < 0``."""
    _check(ttl, wait)
    token = secrets.token_hex(16)
    deadline = time.monotonic() + wait
    while True:
        left = store.try_lease(session_id, token, ttl)
        if left is None:
            return SessionLease(store, session_id, token, ttl)
        now = time.monotonic()
        if now >= deadline:
            raise _busy(store, session_id, left, wait)
        time.sleep(max(0.001, min(_POLL, left, deadline - now)))


async def acquire_async(
    store: Any,
    session_id: str,
    *,
    ttl: float = DEFAULT_TTL,
    wait: float = DEFAULT_WAIT,
    offload: Offload | None = None,
) -> SessionLease:
    """:func:`acquire` in an asyncio event loop: the wait is ``asyncio.sleep`` (the loop serves
    other work meanwhile) and each try runs through ``offload`` (default
    ``asyncio.to_thread``). Same arguments, result and errors."""
    _check(ttl, wait)
    run = offload or asyncio.to_thread
    token = secrets.token_hex(16)
    deadline = time.monotonic() + wait
    while True:
        left = await run(store.try_lease, session_id, token, ttl)
        if left is None:
            return SessionLease(store, session_id, token, ttl)
        now = time.monotonic()
        if now >= deadline:
            raise _busy(store, session_id, left, wait)
        await asyncio.sleep(max(0.001, min(_POLL, left, deadline - now)))
