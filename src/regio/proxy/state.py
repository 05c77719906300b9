"""Everything one proxy worker holds: built once from a :class:`ProxyConfig`, shared by its
requests (its engines, stores and counters are this worker's own: nothing is module-level).

**Trips to a worker thread.** A request's blocking steps run in worker threads
(:meth:`ProxyState.run`). Every trip from the event loop to a worker thread and back waits for a
free thread and for the interpreter (the threads and the loop share it; a thread busy with a
compaction holds it for its switch interval at a time), a wait that grows with the worker's
load, not with the request's own work. So the steps that follow each other with nothing for the
loop to do in between run in one trip:

* :meth:`ProxyState.open_session`: find the session (``Directory.resolve``), take its lease with
  one try and open it (``Directory.open``). Only a lease another request holds sends the request
  back to the loop, to wait for it there (:meth:`ProxyState.lease`: the loop serves other
  requests meanwhile), then :meth:`ProxyState.opened`.
* :meth:`ProxyState.end_turn`: the llama.cpp slot prediction, ``Turn.finish`` and
  ``Turn.commit``, the worker's warm engine, its digests and the metrics, then the lease given
  back.

None of them runs on the event loop: the stores' calls block.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import attrs

from regio.cache import CacheRuleError
from regio.capture import LiveCapture
from regio.errors import RegioError
from regio.persistence.store import SessionLease, SessionLeasedError, acquire_async
from regio.providers import cache_model_for, find_provider

from .config import ProxyConfig, open_stores
from .engines import EngineCache, EngineFactory
from .metrics import ProxyMetrics
from .records import Records
from .sessions import Directory
from .slot import SlotPredictor
from .summaries import SummaryClient
from .turn import Settings
from .upstream import Upstream

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence
    from typing import TypeVar, TypeVarTuple, Unpack

    import anyio.abc
    import httpx

    from regio.blueprint import Blueprint
    from regio.persistence.store import RedisStore, SQLiteStore

    from .records import RequestStat
    from .replies import Reply
    from .requestlog import Waits
    from .sessions import Handle, Target
    from .summaries import SummaryTally
    from .turn import Turn

    #: A step's result and its arguments (typing only: ``TypeVarTuple`` is Python 3.11+).
    T = TypeVar("T")
    Ts = TypeVarTuple("Ts")

#: The upstream statuses a client answers by changing its request (an invalid or too long
#: request); every other status is retried as it was (429, 408, 409, 5xx), so it commits.
UPSTREAM_REFUSALS = frozenset({400, 413, 422})

__all__ = ["ProxyState", "cache_profile"]

log = logging.getLogger("regio.proxy")


def cache_profile(blueprint: Blueprint) -> str | None:
    """The cache model the proxy predicts with: the blueprint's ``cache.profile``, else its
    provider's rule for its model, else its provider's default model (``None``: a provider no
    cache rule describes)."""
    if blueprint.cache.profile:
        return str(blueprint.cache.profile)
    row = find_provider(blueprint.model.provider)
    if row is None or row.cache_rule is None:
        return None
    for model in (blueprint.model.name, row.default_model):
        try:
            cache_model_for(f"{row.cache_rule.provider}:{model}")
        except (CacheRuleError, ValueError, KeyError):
            continue
        return f"{row.cache_rule.provider}:{model}"
    return None


@attrs.define
class ProxyState:
    """One worker's state (module doc)."""

    config: ProxyConfig
    blueprint: Blueprint
    store: SQLiteStore | RedisStore
    records: Records
    directory: Directory
    upstream: Upstream
    metrics: ProxyMetrics
    settings: Settings
    slot: SlotPredictor | None = None
    #: The app's task group, set while it runs (:mod:`regio.proxy.app`).
    tasks: anyio.abc.TaskGroup | None = None
    #: Engine work runs in at most ``config.threads`` threads at once (``--threads``).
    limiter: anyio.CapacityLimiter | None = None
    #: ``--summarizer upstream``: the worker's summary calls (:mod:`regio.proxy.summaries`).
    summaries: SummaryClient | None = None

    async def run(
        self, fn: Callable[[Unpack[Ts]], T], *args: Unpack[Ts], waits: Waits | None = None
    ) -> T:
        """``fn(*args)`` in a worker thread, at most ``config.threads`` at once; ``waits``: the
        request's, the trip timed into it (:mod:`regio.proxy.requestlog`)."""
        if self.limiter is None:  # made in the event loop, on first use
            self.limiter = anyio.CapacityLimiter(self.config.threads)
        if waits is not None:
            return await waits.offload(self.limiter, fn, *args)
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    async def lease(self, session: str, deadline: float) -> SessionLease:
        """The lease of ``session`` in the engine store
        (:func:`regio.persistence.store.acquire_async`), waiting until ``deadline`` (monotonic
        seconds) at most. Raises :class:`regio.persistence.store.SessionLeasedError` when it is
        still held then."""
        wait = max(0.0, deadline - time.monotonic())
        return await acquire_async(
            self.store,
            session,
            ttl=self.config.lease_seconds,
            wait=wait,
            advice="start the proxy with a longer --lease-wait",
            offload=anyio.to_thread.run_sync,
        )

    def opened(
        self, target: Target, lease: SessionLease, incoming: Sequence[bytes], api: str
    ) -> Handle | None:
        """``Directory.open`` of ``target`` under ``lease``; the lease is given back when the
        request no longer extends the session (``None``: resolve again) or the open fails."""
        try:
            handle = self.directory.open(target, lease, incoming, api)
        except BaseException:
            lease.release()
            raise
        if handle is None:
            lease.release()
        return handle

    def open_session(
        self, key: str, header: str | None, incoming: Sequence[bytes], api: str
    ) -> tuple[Target, Handle | None]:
        """The session of a request (module doc, trips to a worker thread): its target and its
        handle under its lease, or the target and ``None`` when another request holds its lease
        (the caller waits for it). Raises what ``Directory.resolve`` and ``Directory.open``
        raise."""
        while True:
            target = self.directory.resolve(key, header, incoming)
            try:
                lease = self.store.lease(target.id, ttl=self.config.lease_seconds, wait=0)
            except SessionLeasedError:
                return target, None
            handle = self.opened(target, lease, incoming, api)
            if handle is not None:
                return target, handle

    def end_turn(
        self,
        turn: Turn,
        reply: Reply | None,
        status: int,
        sent: dict[str, Any],
        summary: SummaryTally,
        lost: Callable[[], bool],
        unbind: Callable[[], None],
        refused: bool = False,
    ) -> tuple[bool, RequestStat | None]:
        """Finish and commit ``turn`` (module doc, trips to a worker thread), then ``unbind()``
        (the request's summarizer) and give its lease back: ``(committed, stat)``; ``committed``
        is false when the lease was lost (``lost()``) or the store refused (logged; ``stat`` is
        then ``None``). ``sent``: the last body sent upstream (the slot prediction's). A lease
        the store fails to release is logged (it lapses by itself after ``--lease-seconds``).
        ``refused``: the request was not served from the session (the engine refused what the
        client sent, or it went upstream unmanaged): nothing is committed and the engine this
        worker holds is dropped unless the turn never changed it (``Turn.touched``: a request
        passed through before anything was admitted), so the session stays as its last
        request left it and the next
        request reads the same items again (a shortened retry extends the session, never a
        branch; an item no reader takes is passed through again, never skipped). So is a
        request the upstream refused with a status in :data:`UPSTREAM_REFUSALS` (the client
        corrects it before it retries; a retry of any other status is the same request)."""
        handle = turn.handle
        upstream_refused = not refused and status in UPSTREAM_REFUSALS
        try:
            if upstream_refused:  # the client's retry differs: counted, nothing committed
                self.metrics.refused(handle.id, turn.client.api, status)
            if refused or upstream_refused:  # an engine the turn never changed stays warm
                if turn.touched or lost() or turn.engine.store_mark is None:
                    self.directory.engines.drop(handle.id)
                else:
                    self.directory.engines.put(handle.id, turn.engine, handle.prediction)
                return False, None
            try:
                predicted = None
                if self.slot is not None and reply is not None and reply.raw is not None:
                    predicted = self.slot.predict(sent, reply.raw)
                stat = turn.finish(reply, status, predicted, summary)
                ok = not lost() and turn.commit(self.records, self.store, stat)
            except RegioError as exc:
                self.directory.engines.drop(handle.id)
                log.warning("session %s: not committed (%s)", handle.id, exc)
                return False, None
            if ok:
                self.directory.engines.put(handle.id, turn.engine, handle.prediction)
                self.directory.digests.remember(handle.id, turn.incoming)
                self.metrics.record(handle.id, turn.client.api, stat)
            else:
                self.directory.engines.drop(handle.id)
                log.warning("session %s: lease lost, request not committed", handle.id)
            return ok, stat
        finally:
            unbind()  # before the lease goes: the next request binds its own
            try:
                handle.lease.release()
            except RegioError as exc:
                log.warning("session %s: lease not released (%s)", handle.id, exc)

    @classmethod
    def build(
        cls,
        config: ProxyConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        summary_transport: httpx.BaseTransport | None = None,
    ) -> ProxyState:
        """The state of a worker for ``config`` (``transport``: see
        :class:`regio.proxy.upstream.Upstream`; ``summary_transport``: the same for the
        summary calls of ``--summarizer upstream``, :class:`regio.proxy.summaries.SummaryClient`,
        which are synchronous). Raises
        :class:`regio.blueprint.BlueprintError` and
        :class:`regio.proxy.errors.ProxyConfigError`."""
        blueprint = config.load_blueprint()
        factory = EngineFactory(blueprint, config.summarizer)
        if factory.summarizer_warning:
            log.warning("%s", factory.summarizer_warning)
        profile = cache_profile(blueprint)
        slot = None
        if profile is not None and profile.split(":", 1)[0] == "llamacpp":
            slot, profile = SlotPredictor(config.upstream), None
        ttl_s = 3600.0 if blueprint.cache.ttl == "1h" else 300.0
        settings = Settings(
            blueprint.model.provider,
            profile,
            LiveCapture.of(blueprint),
            config.max_rounds,
            ttl_s,
            config.compact_after_send,
        )
        summaries = None
        if config.summarizer == "upstream":
            summaries = SummaryClient(config.upstream, config.summary_timeout, summary_transport)
        # opened last: nothing after it raises, so a refused start leaves no store open
        store, records = open_stores(config.store, writer=config.store_writer)
        directory = Directory(records, store, factory, EngineCache(config.engines))
        return cls(
            config,
            blueprint,
            store,
            records,
            directory,
            Upstream(config.upstream, transport=transport),
            ProxyMetrics(),
            settings,
            slot,
            summaries=summaries,
        )

    def background(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``fn()`` in the app's task group (lease keep-alives); nothing outside one."""
        if self.tasks is not None:
            self.tasks.start_soon(fn)

    async def close(self) -> None:
        """Close the upstream connections and the stores."""
        await self.upstream.close()
        if self.summaries is not None:
            self.summaries.close()
        self.records.close()
        close = getattr(self.store, "close", None)
        if callable(close):
            close()
