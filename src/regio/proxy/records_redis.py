"""The proxy's records in Redis (:class:`regio.proxy.records.Records`), beside the engine
sessions of :class:`regio.store.RedisStore` on the same server.

Keys (``regio:proxy:`` prefix; one hash tag per session, so its keys share a Cluster slot):
``{id}:meta`` (msgpack meta), ``{id}:pos`` (hash: position -> 16-byte digest + tokens),
``{id}:stats`` (list of msgpack stats), ``{id}:lease`` (the lease token, with a Redis expiry:
a worker killed mid-request lets it lapse by itself), ``index:<key>`` (sorted set of sessions
by updated time) and ``sessions`` (all sessions by updated time).

Leases follow the single-instance Redis lock pattern (https://redis.io/docs/latest/develop/
use/patterns/distributed-locks/): ``SET key token NX PX ttl`` to take it; renewing and
releasing are Lua scripts that act only when the key still holds the caller's token. A fenced
write (:meth:`RedisRecords.prepare`, :meth:`RedisRecords.commit`) is one Lua script that checks
the lease first and then writes the session's keys, atomically on the server. The two indexes
are written after it (they are hints for finding sessions; a stale entry is skipped).
"""

from __future__ import annotations

from typing import Any

from .errors import ProxyError
from .records import RequestStat, SessionMeta, decode_meta, decode_stat, encode

__all__ = ["RedisRecords"]

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
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
    """The proxy's records on the Redis server at ``url`` (module doc). Raises
    :class:`regio.proxy.errors.ProxyError` naming the install command when ``redis`` is
    missing."""

    def __init__(self, url: str, *, prefix: str = "regio:proxy:") -> None:
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ProxyError(
                "the Redis store needs the redis package: pip install 'regio[redis]'"
            ) from exc
        self.url = url
        self.prefix = prefix
        self.client: Any = redis.Redis.from_url(url)
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)
        self._prepare = self.client.register_script(_PREPARE)
        self._commit = self.client.register_script(_COMMIT)

    def close(self) -> None:
        """Close the connection pool."""
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
        keys = [self._key(session, "lease"), self._key(session, "meta"), self._key(session, "pos")]
        return bool(self._prepare(keys=keys, args=args))

    def commit(self, session: str, token: str, meta: SessionMeta, stat: RequestStat) -> bool:
        keys = [self._key(session, p) for p in ("lease", "meta", "stats")]
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

    def acquire(self, session: str, token: str, ttl: float) -> bool:
        key = self._key(session, "lease")
        if self.client.set(key, token, nx=True, px=max(1, int(ttl * 1000))):
            return True
        return bool(self._renew(keys=[key], args=[token, max(1, int(ttl * 1000))]))

    def renew(self, session: str, token: str, ttl: float) -> bool:
        key = self._key(session, "lease")
        return bool(self._renew(keys=[key], args=[token, max(1, int(ttl * 1000))]))

    def release(self, session: str, token: str) -> None:
        self._release(keys=[self._key(session, "lease")], args=[token])
