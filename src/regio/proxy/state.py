"""Everything one proxy worker holds: built once from a :class:`ProxyConfig`, shared by its
requests (its engines, stores and counters are this worker's own: nothing is module-level)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import attrs

from regio.cache import CacheRuleError
from regio.capture import LiveCapture
from regio.persistence.store import SessionLease, acquire_async
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
    from collections.abc import Callable, Coroutine
    from typing import TypeVar, TypeVarTuple, Unpack

    import anyio.abc
    import httpx

    from regio.blueprint import Blueprint
    from regio.persistence.store import RedisStore, SQLiteStore

    #: A step's result and its arguments (typing only: ``TypeVarTuple`` is Python 3.11+).
    T = TypeVar("T")
    Ts = TypeVarTuple("Ts")

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

    async def run(self, fn: Callable[[Unpack[Ts]], T], *args: Unpack[Ts]) -> T:
        """``fn(*args)`` in a worker thread, at most ``config.threads`` at once."""
        if self.limiter is None:  # made in the event loop, on first use
            self.limiter = anyio.CapacityLimiter(self.config.threads)
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
        store, records = open_stores(config.store)
        factory = EngineFactory(blueprint, config.summarizer)
        if factory.summarizer_warning:
            log.warning("%s", factory.summarizer_warning)
        directory = Directory(records, store, factory, EngineCache(config.engines))
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
