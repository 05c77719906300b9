"""Which session a request belongs to, and the session's state once its lease is held.

**Finding the session.** A request names its session with the ``x-regio-session`` header, else
it is looked up by its fingerprint (the system prompt, the tools and the first user message,
:func:`regio.proxy.history.fingerprint`). Either gives a key (``name:<header>`` /
``fp:<fingerprint>``) under which the store indexes every session found by it, newest first.
Among them the request joins the one whose whole known history it extends (its digests are a
prefix of the request's; the longest such history wins). When none does, the client edited or
rewound its history: it gets a **branch**, a new session under the same key (its parent and the
position where they part are recorded), built from the client's history as sent. The parent is
never touched, so a client can go back to it. A header's first session is named by the header;
branches and fingerprint sessions get generated ids (``<name>~<hex>``, ``<fingerprint>``).

**Opening it** (:meth:`Directory.open`, under the session's lease,
:mod:`regio.persistence.store.lease`): the meta is read again, a ``pending`` mark left by a worker
killed mid-commit is adopted or dropped (:mod:`regio.proxy.records`), and the request is checked to
still extend the session (another request may have moved it on meanwhile; then the request is
resolved again). The engine is the worker's warm one when no other worker saved the session since,
else loaded from the store.

What each session's history digests are, the worker keeps in memory too (:class:`DigestCache`)
and reads from the store only the positions added since it last saw the session: a request costs
the new items, not the history.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
import msgspec

from regio.persistence.store import SessionLease, SessionNotFoundError

from .accounting import CachePrediction
from .engines import EngineCache, EngineFactory, Warm
from .errors import ClientRequestError
from .history import common_prefix
from .records import Records, SessionMeta

if TYPE_CHECKING:
    from regio.engine import Engine
    from regio.persistence.store import RedisStore, SQLiteStore

__all__ = ["DigestCache", "Directory", "Handle", "Target", "session_key"]

#: Sessions compared per request (the most recently updated under the key).
CANDIDATES = 8
_NAME = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")


def session_key(header: str | None, fp: str) -> str:
    """``name:<header>`` when the client named its session, else ``fp:<fingerprint>``. Raises
    :class:`ClientRequestError` for a header that is not 1-128 letters, digits or ``._:@/+=-``."""
    if header is None:
        return f"fp:{fp}"
    if not _NAME.fullmatch(header):
        raise ClientRequestError(
            "x-regio-session: use 1-128 letters, digits or ._:@/+=- (e.g. x-regio-session: "
            "ticket-4711)"
        )
    return f"name:{header}"


@attrs.frozen
class Target:
    """Where a request goes: session ``id`` under ``key``; a new session (``parent`` set for a
    branch, parting from it after ``forked_at`` items) or an existing one."""

    id: str
    key: str
    new: bool
    parent: str | None = None
    forked_at: int = 0


@attrs.define
class Handle:
    """One request's hold on a session: its ``meta`` (pending mark resolved), its ``engine``,
    the session's ``lease`` in the engine store, ``fresh`` when the engine starts from
    nothing, and the session's cache ``prediction`` state (kept with its warm engine)."""

    id: str
    meta: SessionMeta
    engine: Engine
    lease: SessionLease
    fresh: bool
    leased_at: float = 0.0
    prediction: CachePrediction = attrs.field(factory=CachePrediction)

    @property
    def token(self) -> str:
        """The lease's token (what the records' fenced writes check)."""
        return self.lease.token


@attrs.define
class DigestCache:
    """Per session, the history digests this worker has seen (a prefix of the stored ones)."""

    size: int = 4096
    _known: OrderedDict[str, list[bytes]] = attrs.field(factory=OrderedDict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def known(self, records: Records, meta: SessionMeta) -> list[bytes]:
        """The digests of ``meta``'s ``count`` items, reading only the ones not seen yet."""
        with self._lock:
            have = list(self._known.get(meta.id, ()))
        if len(have) > meta.count:
            have = have[: meta.count]
        if len(have) < meta.count:
            have.extend(d for d, _ in records.positions(meta.id, len(have), meta.count))
            self._extend(meta.id, have)
        return have

    def remember(self, session: str, digests: Sequence[bytes]) -> None:
        """Keep ``digests`` as ``session``'s history (a committed request's: it replaces
        what was kept)."""
        with self._lock:
            self._keep(session, digests)

    def _extend(self, session: str, digests: Sequence[bytes]) -> None:
        """Keep ``digests`` (read by :meth:`known`) unless a longer history was kept
        meanwhile: another thread's commit may :meth:`remember` between :meth:`known`'s read
        of the cache and this write, and a session's positions only grow, so the longer is
        the newer (checked and written under one lock)."""
        with self._lock:
            if len(self._known.get(session, ())) < len(digests):
                self._keep(session, digests)

    def _keep(self, session: str, digests: Sequence[bytes]) -> None:
        self._known[session] = list(digests)
        self._known.move_to_end(session)
        while len(self._known) > self.size:
            self._known.popitem(last=False)


@attrs.define
class Directory:
    """Finds and opens sessions (module doc)."""

    records: Records
    store: SQLiteStore | RedisStore
    factory: EngineFactory
    engines: EngineCache = attrs.field(factory=EngineCache)
    digests: DigestCache = attrs.field(factory=DigestCache)

    def resolve(self, key: str, header: str | None, incoming: Sequence[bytes]) -> Target:
        """The session a request with history digests ``incoming`` goes to (module doc)."""
        best: tuple[int, float, str] | None = None
        fork: tuple[int, float, str] | None = None
        ids = self.records.candidates(key, CANDIDATES)
        for sid in ids:
            meta = self.records.meta(sid)
            if meta is None:
                continue
            shared = common_prefix(self.digests.known(self.records, meta), incoming)
            score = (shared, meta.updated, sid)
            if shared == meta.count and (best is None or score > best):
                best = score
            if fork is None or score > fork:
                fork = score
        if best is not None:
            return Target(best[2], key, new=False)
        if header is not None and not ids and self.records.meta(header) is None:
            return Target(header, key, new=True)
        stem = header if header is not None else key.split(":", 1)[1][:16]
        if fork is None and header is None and self.records.meta(stem) is None:
            return Target(stem, key, new=True)
        sid = f"{stem}~{secrets.token_hex(3)}"
        if fork is None:
            return Target(sid, key, new=True)
        return Target(sid, key, new=True, parent=fork[2], forked_at=fork[0])

    def open(
        self, target: Target, lease: SessionLease, incoming: Sequence[bytes], api: str
    ) -> Handle | None:
        """The session of ``target`` under its ``lease`` (module doc); ``None`` when the
        request no longer extends it (resolve again)."""
        meta = self.records.meta(target.id)
        if meta is None:
            now = time.time()
            meta = SessionMeta(
                target.id, target.key, api, now, now, target.parent, target.forked_at
            )
        warm = self._engine(meta)
        fresh = warm is None
        if warm is None:  # nothing stored: the whole history is admitted
            warm = Warm(self.factory.new(meta.id))
            meta = msgspec.structs.replace(meta, count=0, tokens=0, engine_version=0)
        engine = warm.engine
        if meta.pending is not None:
            version = engine.store_mark.version if engine.store_mark is not None else 0
            if version == meta.pending.engine_version:
                p = meta.pending
                meta = msgspec.structs.replace(
                    meta, count=p.count, tokens=p.tokens, engine_version=p.engine_version
                )
            meta = msgspec.structs.replace(meta, pending=None)
        known = self.digests.known(self.records, meta)
        if common_prefix(known, incoming) < meta.count:
            if not fresh:
                self.engines.put(meta.id, engine, warm.prediction)
            return None
        return Handle(meta.id, meta, engine, lease, fresh, time.time(), warm.prediction)

    def _engine(self, meta: SessionMeta) -> Warm | None:
        """The session's engine (and prediction state) at its stored version (the pending one
        when a save may have happened), or ``None`` when nothing is stored."""
        versions = [meta.engine_version]
        if meta.pending is not None:
            versions.insert(0, meta.pending.engine_version)
        for version in versions:
            warm = self.engines.take(meta.id, version)
            if warm is not None:
                return warm
        if meta.engine_version == 0 and meta.pending is None:
            return None
        try:
            return Warm(self.factory.load(self.store, meta.id))
        except SessionNotFoundError:
            return None
