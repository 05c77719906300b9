"""The session lease in an asyncio event loop (:func:`regio.persistence.store.acquire_async`,
:meth:`regio.persistence.store.SessionLease.keep_alive`): the same lease as ``store.lease`` (one
writer at a time, whichever API took it), taken without blocking the loop while another writer holds
it, kept alive past its lifetime while the work runs, and reported lost when it was taken over."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from regio.persistence.store import (
    LeaseTimeError,
    SessionDamagedError,
    SessionLeasedError,
    acquire_async,
)
from regio.persistence.store.lease import MAX_TTL
from store_support import redis_url, sqlite_or_redis, stray_lease

__all__ = ["redis_url"]


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Path) -> Any:
    yield from sqlite_or_redis(request, tmp_path / "sessions.db", f"alease:{request.node.name}:")


def test_an_async_writer_waits_for_the_lease_without_blocking_the_loop(store: Any) -> None:
    async def main() -> list[str]:
        order: list[str] = []
        first = await acquire_async(store, "s", ttl=30, wait=0)
        with pytest.raises(SessionLeasedError):  # the sync API sees the same lease
            store.lease("s", ttl=30, wait=0)

        async def second() -> None:
            lease = await acquire_async(store, "s", ttl=30, wait=10)
            order.append("second took it")
            await lease.arelease()

        async def other_work() -> None:  # runs while the second writer waits
            for _ in range(3):
                await asyncio.sleep(0.01)
            order.append("loop served other work")
            await first.arelease()

        await asyncio.gather(second(), other_work())
        return order

    assert asyncio.run(main()) == ["loop served other work", "second took it"]


def test_a_lease_kept_alive_outlives_its_ttl_and_a_lost_one_stops_the_keeper(store: Any) -> None:
    async def main() -> None:
        # a 1 s lease renewed every third of it: 0.67 s of slack for a renewal a loaded
        # machine delays (0.3 s left 0.2 s, and a CI run missed it)
        lease = await acquire_async(store, "s", ttl=1.0, wait=0)
        keeper = asyncio.create_task(lease.keep_alive())
        await asyncio.sleep(2.2)  # more than twice its lifetime
        with pytest.raises(SessionLeasedError):  # still held: kept alive
            await acquire_async(store, "s", ttl=30, wait=0)
        keeper.cancel()
        await asyncio.sleep(1.3)  # no more renewals: it lapses
        other = await acquire_async(store, "s", ttl=30, wait=0)
        with pytest.raises(SessionLeasedError, match="lost"):  # the first writer must stop
            await lease.keep_alive(every=0.01)
        await other.arelease()
        await lease.arelease()  # a lost lease is left alone

    asyncio.run(main())


def test_an_async_lease_still_held_after_the_wait_is_refused_with_when_it_expires(
    store: Any,
) -> None:
    async def main() -> None:
        held = store.lease("s", ttl=30, wait=0)
        with pytest.raises(SessionLeasedError) as info:
            await acquire_async(store, "s", ttl=30, wait=0.1)
        assert info.value.expires_in is not None and 0 < info.value.expires_in <= 30
        held.release()
        with pytest.raises(LeaseTimeError, match="ttl is the seconds a lease lasts"):
            await acquire_async(store, "s", ttl=0)

    asyncio.run(main())


@pytest.mark.parametrize(
    ("ttl", "wait"), [(math.inf, 0), (math.nan, 0), (MAX_TTL + 1, 0), (True, 0), (5, -1), (5, "1")]
)
def test_an_async_lease_applies_the_same_ttl_and_wait_checks_and_takes_nothing(
    store: Any, ttl: Any, wait: Any
) -> None:
    async def main() -> None:
        with pytest.raises(LeaseTimeError, match=r"(ttl|wait) is the seconds"):
            await acquire_async(store, "s", ttl=ttl, wait=wait)
        await (await acquire_async(store, "s", ttl=5, wait=0)).arelease()  # nothing was taken

    asyncio.run(main())


@pytest.mark.parametrize("ttl", [0, math.inf, math.nan])
def test_an_async_renewal_needs_a_finite_positive_ttl_and_keeps_the_lease(
    store: Any, ttl: Any
) -> None:
    async def main() -> None:
        lease = await acquire_async(store, "s", ttl=5, wait=0)
        with pytest.raises(LeaseTimeError):
            await lease.arenew(ttl)
        assert lease.ttl == 5
        with pytest.raises(SessionLeasedError):  # still held
            await acquire_async(store, "s", ttl=5, wait=0)
        await lease.arenew()
        await lease.arelease()

    asyncio.run(main())


@pytest.mark.parametrize("every", [0, -1, math.nan, 5, 10])
def test_a_keeper_that_would_let_the_lease_lapse_between_renewals_is_refused(
    store: Any, every: Any
) -> None:
    async def main() -> None:
        lease = await acquire_async(store, "s", ttl=5, wait=0)
        with pytest.raises(LeaseTimeError, match="every is the seconds between renewals"):
            await lease.keep_alive(every=every)
        await lease.arelease()

    asyncio.run(main())


def test_an_async_lease_that_never_expires_is_named_with_the_fix_not_waited_on(
    store: Any,
) -> None:
    """A stray lease without expiry (Redis: a key without one; SQLite: a row expiring at
    infinity) is reported as damage naming how to delete it, as the sync lease does."""
    stray_lease(store)

    async def main() -> None:
        with pytest.raises(SessionDamagedError, match="forever") as caught:
            await acquire_async(store, "s", ttl=5, wait=math.inf)
        assert "DEL" in str(caught.value) or "DELETE FROM leases" in str(caught.value)

    asyncio.run(asyncio.wait_for(main(), 30))
