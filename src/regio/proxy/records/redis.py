"""The proxy's records in Redis (:class:`regio.proxy.records.Records`), beside the engine
sessions of :class:`regio.persistence.store.RedisStore` on the same server.

Keys (``regio:proxy:`` prefix; one hash tag per session, so its keys share a Cluster slot):
``{id}:meta`` (msgpack meta), ``{id}:pos`` (hash: position -> 16-byte digest + tokens),
``{id}:stats`` (list of msgpack stats), ``index:<key>`` (sorted set of sessions by updated
time) and ``sessions`` (all sessions by updated time). The connection pool is the store's.

The session's lease is the engine store's (:mod:`regio.persistence.store.lease`: a key holding the
holder's token with a server-side expiry, ``SET NX PX``,
:meth:`regio.persistence.store.RedisStore.lease_key`; same ``{id}`` hash tag). A fenced write
(:meth:`RedisRecords.prepare`, :meth:`RedisRecords.commit`) is one Lua script that checks that key
holds the writer's token and then writes the session's keys, atomically on the server. The two
indexes are written after it (they are hints for finding sessions; a stale entry is skipped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ProxyError
from . import RequestStat, SessionMeta, decode_meta, decode_stat, encode

if TYPE_CHECKING:
    from regio.persistence.store import RedisStore

__all__ = ["RedisRecords"]

# KEYS: lease, meta, pos; ARGV: token, meta, then position/value pairs
_PREPARE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""
# KEYS: lease, meta, stats; ARGV: token, meta, stat
_COMMIT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[3])
return 1
"""


class RedisRecords:
    """The proxy's records beside the sessions of ``store`` (a
    :class:`regio.persistence.store.RedisStore`: its connection pool and its lease keys; module
    doc)."""

    def __init__(self, store: RedisStore, *, prefix: str = "regio:proxy:") -> None:
        self.url = store.url
        self.prefix = prefix
        self.client: Any = store.client
        self._lease_key = store.lease_key
        self._prepare = self.client.register_script(_PREPARE)
        self._commit = self.client.register_script(_COMMIT)

    def close(self) -> None:
        """Close the connection pool (the store's: close the records last)."""
        self.client.close()

    def _key(self, session: str, part: str) -> str:
        return f"{self.prefix}{{{session}}}:{part}"

    def meta(self, session: str) -> SessionMeta | None:
        data = self.client.get(self._key(session, "meta"))
        return decode_meta(data) if data is not None else None

    def positions(self, session: str, start: int, stop: int) -> list[tuple[bytes, int]]:
        if stop <= start:
            return []
        values = self.client.hmget(self._key(session, "pos"), list(range(start, stop)))
        out = []
        for pos, value in zip(range(start, stop), values, strict=True):
            if value is None:
                raise ProxyError(f"{self.url}: session {session!r} has no history position {pos}")
            out.append((bytes(value[:16]), int(value[16:])))
        return out

    def candidates(self, key: str, limit: int) -> list[str]:
        found = self.client.zrevrange(f"{self.prefix}index:{key}", 0, limit - 1)
        return [s.decode() for s in found]

    def prepare(
        self, session: str, token: str, meta: SessionMeta, rows: list[tuple[int, bytes, int]]
    ) -> bool:
        args: list[Any] = [token, encode(meta)]
        for pos, digest, tokens in rows:
            args.extend((pos, digest + str(tokens).encode()))
        keys = [self._lease_key(session), self._key(session, "meta"), self._key(session, "pos")]
        return bool(self._prepare(keys=keys, args=args))

    def commit(self, session: str, token: str, meta: SessionMeta, stat: RequestStat) -> bool:
        keys = [self._lease_key(session), self._key(session, "meta"), self._key(session, "stats")]
        if not self._commit(keys=keys, args=[token, encode(meta), encode(stat)]):
            return False
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(f"{self.prefix}index:{meta.key}", {session: meta.updated})
        pipe.zadd(f"{self.prefix}sessions", {session: meta.updated})
        pipe.execute()
        return True

    def stats(self, session: str, limit: int) -> list[RequestStat]:
        return [decode_stat(d) for d in self.client.lrange(self._key(session, "stats"), -limit, -1)]

    def sessions(self, limit: int) -> list[SessionMeta]:
        ids = [s.decode() for s in self.client.zrevrange(f"{self.prefix}sessions", 0, limit - 1)]
        if not ids:
            return []
        found = self.client.mget([self._key(s, "meta") for s in ids])
        return [decode_meta(d) for d in found if d is not None]
