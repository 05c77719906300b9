"""Per-session leases: one request at a time per session, across all workers.

A request works on its session only while it holds the session's lease
(:meth:`regio.proxy.records.Records.acquire`: a token with an expiry, in the store every worker
shares). So two workers never admit into, compact or save one session at once, and a second
request of a session that is busy waits for it (polling, up to ``--lease-wait`` seconds; then
it is answered 503, which the provider SDKs retry). While the request runs, a heartbeat renews
the lease every third of its lifetime; a worker killed mid-request stops renewing, and the
lease lapses after ``--lease-seconds``, when the next request of the session, on any worker,
takes it and continues from what the store holds (:mod:`regio.proxy.records`: nothing the
killed request had not committed is lost, since the client resends it).

The stores' own per-session lease for atomic compaction commits (being added to
:mod:`regio.store`) is the place this belongs once it exists: :class:`LeaseKeeper` needs only
``acquire`` / ``renew`` / ``release`` and can take the store's instead of the proxy records'.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import anyio.to_thread
import attrs

__all__ = ["LeaseKeeper", "LeaseTimeout"]


class LeaseTimeout(Exception):
    """The session stayed busy longer than the wait allowed (answered 503)."""


@attrs.define
class LeaseKeeper:
    """Takes, renews and gives back session leases on ``table`` (anything with ``acquire``,
    ``renew``, ``release``); ``ttl`` and ``wait`` in seconds."""

    table: Any
    ttl: float
    wait: float

    async def take(self, session: str, token: str, deadline: float | None = None) -> None:
        """Wait for the lease of ``session``; raises :class:`LeaseTimeout` past ``deadline``
        (monotonic seconds; default now + ``wait``)."""
        deadline = deadline if deadline is not None else time.monotonic() + self.wait
        pause = 0.01
        while not await anyio.to_thread.run_sync(self.table.acquire, session, token, self.ttl):
            if time.monotonic() >= deadline:
                raise LeaseTimeout(f"session {session!r} is busy with another request; retry later")
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.25)

    async def keep(self, session: str, token: str, lost: anyio.Event) -> None:
        """Renew the lease until cancelled; sets ``lost`` when it could not."""
        while True:
            await anyio.sleep(self.ttl / 3)
            if not await anyio.to_thread.run_sync(self.table.renew, session, token, self.ttl):
                lost.set()
                return

    async def give_back(self, session: str, token: str) -> None:
        """Release the lease (a lost lease is left alone)."""
        await anyio.to_thread.run_sync(self.table.release, session, token)
