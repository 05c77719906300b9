"""The session lease in an asyncio event loop (:func:`regio.store.acquire_async`,
:meth:`regio.store.SessionLease.keep_alive`): the same lease as ``store.lease`` (one writer at a
time, whichever API took it), taken without blocking the loop while another writer holds it,
kept alive past its lifetime while the work runs, and reported lost when it was taken over."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from regio.store import SessionLeasedError, acquire_async
from store_support import redis_url, sqlite_or_redis

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
        lease = await acquire_async(store, "s", ttl=0.3, wait=0)
        keeper = asyncio.create_task(lease.keep_alive())
        await asyncio.sleep(0.8)  # more than twice its lifetime
        with pytest.raises(SessionLeasedError):  # still held: kept alive
            await acquire_async(store, "s", ttl=30, wait=0)
        keeper.cancel()
        await asyncio.sleep(0.45)  # no more renewals: it lapses
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
        with pytest.raises(ValueError, match="ttl > 0"):
            await acquire_async(store, "s", ttl=0)

    asyncio.run(main())
