"""What the proxy keeps per session beside the engine, and the contract of its two stores.

The engine's own state is saved in a :class:`regio.persistence.store.SessionStore`
(``Engine.save_to``). Beside it the proxy keeps, in the same database (SQLite tables ``proxy_*``,
Redis keys ``regio:proxy:*``):

* a :class:`SessionMeta` per session: the client history it has admitted (``count`` items,
  their tokens), the engine version that holds them, how it was found (``key``: the
  ``x-regio-session`` name or the fingerprint), its parent when it is a branch, running totals
  for ``/metrics`` and the status page;
* the digest and tokens of every admitted history item, by position, append-only
  (:mod:`regio.proxy.history`): a request reads only the positions it has not seen;
* one :class:`RequestStat` per request (the status page's chart);
* an index from each key to its sessions, newest first.

A request works on its session under the session's **lease** in the engine store
(:mod:`regio.persistence.store.lease`: a token with an expiry, the one lease every writer of the
session takes, the proxy's workers and ``regio compact`` alike). It commits in three steps under it:
:meth:`Records.prepare` writes the new positions and marks them ``pending`` with the engine
version the save will make; the engine is saved; :meth:`Records.commit` writes the new meta and
the request's stat. A worker killed between two steps leaves a pending mark: the next request
adopts it when the stored engine has that version (the save happened) and drops it otherwise, so
the history and the engine never disagree and nothing the client sent is admitted twice or lost.
Both writes of the records are refused (return ``False``) when the caller's token no longer
holds a live lease, checked in the same transaction (SQLite) or script (Redis) as the write; the
engine's save is refused by the store itself (``SessionLeasedError``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import msgspec

__all__ = ["Pending", "Records", "RequestStat", "Served", "SessionMeta", "Totals"]


class Pending(msgspec.Struct, frozen=True):
    """Positions written for a save that may not have happened: the history ``count`` and its
    ``tokens`` once the engine is at ``engine_version``."""

    count: int
    tokens: int
    engine_version: int


class Served(msgspec.Struct, frozen=True):
    """A reply the client saw as one message although the engine holds it as several (an
    answered ``context_restore`` in a stream, :mod:`regio.proxy.restore`): the client's next
    item at ``position`` is its copy, recognised by ``text`` and ``call_ids``, and is not
    admitted again."""

    position: int
    text: str
    call_ids: tuple[str, ...]


class Totals(msgspec.Struct):
    """Running sums of one session (tokens; USD). ``client_tokens``: what the client sent (its
    whole history each time, regio's count); ``upstream_tokens``: what the proxy sent (regio's
    estimate of the laid-out window); ``prompt_tokens`` / ``cache_read`` / ``cache_write``: what
    the upstream reported; ``predicted_read`` / ``predicted_write``: the cache simulator's
    figures for the same requests, ``predicted`` how many requests it predicted;
    ``cost_usd``: the reported usage priced by the cache rules; ``as_is_cost_usd``: the same
    requests had the client's history been sent as it is (:mod:`regio.proxy.accounting`);
    ``first_miss``: per region, how many requests' first uncached block was that region's;
    ``summary_calls`` / ``summary_input_tokens`` / ``summary_output_tokens``: the summary
    requests of ``--summarizer upstream`` and their reported usage, ``summary_cost_usd`` the
    cost of those whose model has a price, ``summary_unpriced`` the calls whose model has none
    (their cost is in no figure). ``cost_usd`` is the client's requests whose cost has a price
    (:func:`regio.cache.billing.bill`), ``unpriced`` how many have none; ``as_is_cost_usd`` /
    ``as_is_unpriced`` the same of the as-is figure. The session's cost is
    :attr:`total_cost_usd` (:mod:`regio.proxy.status`), unpriced (``None``) once any part of
    it is."""

    requests: int = 0
    client_tokens: int = 0
    upstream_tokens: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    predicted_read: int = 0
    predicted_write: int = 0
    predicted: int = 0
    cost_usd: float = 0.0
    as_is_cost_usd: float = 0.0
    compactions: int = 0
    repairs: int = 0
    restores: int = 0
    reported: int = 0
    first_miss: dict[str, int] = msgspec.field(default_factory=dict)
    summary_calls: int = 0
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0
    summary_cost_usd: float = 0.0
    summary_unpriced: int = 0
    unpriced: int = 0
    as_is_unpriced: int = 0

    @property
    def total_cost_usd(self) -> float | None:
        """The session's cost (USD): its requests' ``cost_usd`` plus its summary requests'
        ``summary_cost_usd``; ``None`` (unpriced) when some request or summary request has no
        price, never the sum of the priced ones."""
        if self.unpriced or self.summary_unpriced:
            return None
        return self.cost_usd + self.summary_cost_usd

    @property
    def as_is_usd(self) -> float | None:
        """``as_is_cost_usd``, ``None`` (unpriced) when some request's as-is cost has no
        price."""
        return None if self.as_is_unpriced else self.as_is_cost_usd


class SessionMeta(msgspec.Struct):
    """One session (module doc). ``count`` / ``tokens``: the client history items admitted and
    their tokens; ``system``: digest (hex) of the system prompt last applied; ``served``: see
    :class:`Served`; ``last_client``: the client tokens of the last request (the as-is
    reference of the next)."""

    id: str
    key: str
    api: str
    created: float
    updated: float
    parent: str | None = None
    forked_at: int = 0
    count: int = 0
    tokens: int = 0
    engine_version: int = 0
    pending: Pending | None = None
    system: str = ""
    served: Served | None = None
    last_client: int = 0
    last_t: float = 0.0
    totals: Totals = msgspec.field(default_factory=Totals)


class RequestStat(msgspec.Struct, frozen=True):
    """One request of a session (tokens; USD; milliseconds): ``t`` when it arrived (seconds
    since the epoch), the figures of :class:`Totals` for this request, ``compacted`` whether a
    compaction ran, ``first_miss`` the region of the first uncached block (``None``: all read
    or nothing reported), ``added_ms`` the proxy's own CPU time, ``restores`` the rounds of
    regio's own tool calls answered, ``repairs`` the changes the repair of what the client sent
    made (orphaned calls closed, orphaned results dropped, reused ids renamed: ``Engine.repair``)
    and ``repaired`` the same by action, ``status`` the upstream's HTTP status;
    ``summary_calls`` the summary requests sent upstream (``--summarizer upstream``),
    ``summary_fallbacks`` the summaries of them the offline summarizer wrote instead, and
    ``summary_input_tokens`` / ``summary_output_tokens`` their usage as the upstream reported it
    (:mod:`regio.proxy.summaries`) and ``summary_cost_usd`` that usage at the summary model's
    prices (:func:`regio.proxy.accounting.summary_cost`: ``0.0`` without summary usage,
    ``None`` when the model has no price, and in a stat stored before it was kept); ``cost_usd``
    is the client's request alone and ``as_is_cost_usd`` the same request as the client sent it,
    each ``None`` when unpriced (a price its tokens need is not recorded:
    :func:`regio.cache.billing.bill`)."""

    index: int
    t: float
    client_tokens: int
    upstream_tokens: int
    prompt_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    predicted_read: int | None = None
    predicted_write: int | None = None
    cost_usd: float | None = 0.0
    as_is_cost_usd: float | None = 0.0
    compacted: bool = False
    first_miss: str | None = None
    added_ms: float = 0.0
    restores: int = 0
    repairs: int = 0
    status: int = 200
    repaired: dict[str, int] = msgspec.field(default_factory=dict)
    summary_calls: int = 0
    summary_fallbacks: int = 0
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0
    summary_cost_usd: float | None = None

    @property
    def total_cost_usd(self) -> float | None:
        """The request's cost (USD) with its summary requests': ``cost_usd`` plus
        ``summary_cost_usd``; ``None`` (unpriced) when either has no price."""
        if self.cost_usd is None or self.summary_unpriced:
            return None
        return self.cost_usd + (self.summary_cost_usd or 0.0)

    @property
    def summary_unpriced(self) -> int:
        """The request's summary requests priced in no figure: ``summary_calls`` when
        ``summary_cost_usd`` is ``None`` (no price, or a stat stored before it was kept), else
        ``0``."""
        return self.summary_calls if self.summary_cost_usd is None else 0


@runtime_checkable
class Records(Protocol):
    """The proxy's store (module doc); :mod:`regio.proxy.records.sqlite` and
    :mod:`regio.proxy.records.redis` implement it."""

    url: str

    def meta(self, session: str) -> SessionMeta | None:
        """The session's meta, or ``None`` for an unknown session."""
        ...

    def positions(self, session: str, start: int, stop: int) -> list[tuple[bytes, int]]:
        """``(digest, tokens)`` of the history items at ``start <= position < stop``."""
        ...

    def candidates(self, key: str, limit: int) -> list[str]:
        """The sessions found under ``key``, most recently updated first."""
        ...

    def prepare(
        self, session: str, token: str, meta: SessionMeta, rows: list[tuple[int, bytes, int]]
    ) -> bool:
        """Write ``rows`` (position, digest, tokens) and ``meta`` (carrying its
        :class:`Pending`) if ``token`` holds the session's live lease."""
        ...

    def commit(self, session: str, token: str, meta: SessionMeta, stat: RequestStat) -> bool:
        """Write ``meta`` and append ``stat`` if ``token`` holds the lease; index the session
        under ``meta.key``."""
        ...

    def stats(self, session: str, limit: int) -> list[RequestStat]:
        """The session's last ``limit`` request stats, oldest first."""
        ...

    def sessions(self, limit: int) -> list[SessionMeta]:
        """The ``limit`` most recently updated sessions, newest first."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


_meta_encoder = msgspec.msgpack.Encoder()
_meta_decoder = msgspec.msgpack.Decoder(SessionMeta)
_stat_decoder = msgspec.msgpack.Decoder(RequestStat)


def encode(value: SessionMeta | RequestStat) -> bytes:
    """msgpack bytes of a meta or a stat."""
    return _meta_encoder.encode(value)


def decode_meta(data: bytes) -> SessionMeta:
    """The :class:`SessionMeta` of stored bytes."""
    return _meta_decoder.decode(data)


def decode_stat(data: bytes) -> RequestStat:
    """The :class:`RequestStat` of stored bytes."""
    return _stat_decoder.decode(data)
