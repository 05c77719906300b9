"""The shared session store: Redis (the ``redis`` package, extra ``regio[redis]``).

For agent servers whose workers share sessions by key. A session ``id`` lives under six keys
with one hash tag (so a Redis Cluster keeps them on one slot): ``{prefix}{id}:meta`` (hash:
``version``, ``transcript``, ``ledger`` counts), ``{prefix}{id}:head``, the append-only lists
``{prefix}{id}:t`` (transcript records) and ``{prefix}{id}:l`` (usage records), the hash
``{prefix}{id}:e`` of window entries (``<region>/<entry id>`` -> encoded entry; the same keyed
records as the SQLite store) and the hash ``{prefix}{id}:o`` of the relief originals' records
(``@ro/`` and ``@rn/``, :mod:`regio.store.originals`; a session saved before
``regio.session-head/6`` has them in ``:e``), which a load leaves to be read on demand.

A save is one Lua script (atomic on the server, https://redis.io/docs/latest/develop/interact/
programmability/eval-intro/): it compares the stored version with the one the engine last saw,
and only when they match appends the records, puts and deletes window entries, replaces the
head and increments the version.
Two workers racing on one session therefore never lose a write: the second gets
:class:`SessionConflictError` and reloads. A load reads all keys in one ``MULTI`` transaction.
"""

from __future__ import annotations

from typing import Any

from .base import SessionNotFoundError, SessionRecords, SessionStoreError, conflict

__all__ = ["RedisStore"]

_SAVE = """
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local expected = tonumber(ARGV[1])
if version ~= expected then return {-1, version} end
local t = tonumber(redis.call('HGET', KEYS[1], 'transcript') or '0')
local l = tonumber(redis.call('HGET', KEYS[1], 'ledger') or '0')
local nt = tonumber(ARGV[3])
local nl = tonumber(ARGV[4])
if t ~= tonumber(ARGV[5]) or l ~= tonumber(ARGV[6]) then return {-1, version} end
for i = 1, nt do redis.call('RPUSH', KEYS[3], ARGV[6 + i]) end
for i = 1, nl do redis.call('RPUSH', KEYS[4], ARGV[6 + nt + i]) end
local at = 7 + nt + nl
if version == 0 then redis.call('DEL', KEYS[5], KEYS[6]) end
local np = tonumber(ARGV[at])
for i = 1, np do
  local key = ARGV[at + 2 * i - 1]
  local kind = string.sub(key, 1, 4)
  local hash = KEYS[5]
  if kind == '@ro/' or kind == '@rn/' then hash = KEYS[6] end
  redis.call('HSET', hash, key, ARGV[at + 2 * i])
end
at = at + 2 * np + 1
local nd = tonumber(ARGV[at])
for i = 1, nd do redis.call('HDEL', KEYS[5], ARGV[at + i]) end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'version', version + 1, 'transcript', t + nt, 'ledger', l + nl)
return {0, version + 1}
"""


class RedisStore:
    """Sessions in Redis. ``client`` is a ``redis.Redis`` (bytes responses, the default);
    :meth:`from_url` builds one. ``prefix`` namespaces the keys. Raises
    :class:`SessionStoreError` naming the URL when the server cannot be reached."""

    def __init__(self, client: Any, *, prefix: str = "regio:session:", url: str = "") -> None:
        self.client = client
        self.prefix = prefix
        self.url = url or "redis://"
        self._save = client.register_script(_SAVE)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "regio:session:") -> RedisStore:
        """A store on the server at ``url`` (``redis://host:port/db``). Raises
        :class:`SessionStoreError` naming the install command when ``redis`` is missing."""
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise SessionStoreError(
                "the Redis store needs the redis package: pip install 'regio[redis]'"
            ) from exc
        return cls(redis.Redis.from_url(url), prefix=prefix, url=url)

    def _keys(self, session_id: str) -> list[str]:
        base = f"{self.prefix}{{{session_id}}}"
        return [
            f"{base}:meta",
            f"{base}:head",
            f"{base}:t",
            f"{base}:l",
            f"{base}:e",
            f"{base}:o",
        ]

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import redis

        try:
            return fn(*args, **kwargs)
        except redis.ConnectionError as exc:
            raise SessionStoreError(f"{self.url}: cannot {what} ({exc})") from exc

    def save(self, session_id: str, records: SessionRecords, *, expected: int) -> int:
        """Append ``records`` and replace the head when the session is at version
        ``expected`` (0: new), atomically (module doc). Returns the new version; raises
        :class:`SessionConflictError` (nothing written) otherwise."""
        t_start = records.transcript_count - len(records.transcript)
        l_start = records.ledger_count - len(records.ledger)
        args = [
            expected,
            records.head,
            len(records.transcript),
            len(records.ledger),
            t_start,
            l_start,
            *records.transcript,
            *records.ledger,
            len(records.put),
            *(x for kv in records.put.items() for x in kv),
            len(records.drop),
            *records.drop,
        ]
        status, version = self._call("save", self._save, keys=self._keys(session_id), args=args)
        if int(status) != 0:
            raise conflict(self.url, session_id, expected, int(version))
        return int(version)

    def load(
        self, session_id: str
    ) -> tuple[bytes, list[bytes], list[bytes], int, dict[str, bytes]]:
        """The head, records, version and window entries of ``session_id`` (one ``MULTI``).
        Raises :class:`SessionNotFoundError`."""
        meta, head, t_key, l_key, e_key, o_key = self._keys(session_id)
        pipe = self.client.pipeline(transaction=True)
        pipe.hget(meta, "version").get(head).lrange(t_key, 0, -1).lrange(l_key, 0, -1)
        pipe.hgetall(e_key).hgetall(o_key)
        version, data, transcript, ledger, entries, originals = self._call("load", pipe.execute)
        if data is None or version is None:
            raise SessionNotFoundError(f"{self.url}: no session {session_id!r}")
        window = _window(entries) | _window(originals)
        return bytes(data), list(transcript), list(ledger), int(version), window

    def load_window(
        self, session_id: str
    ) -> tuple[bytes, int, int, bytes | None, int, dict[str, bytes]]:
        """What a load needs for the window, in one ``MULTI``: ``(head, transcript record
        count, usage record count, newest usage record or None, version, window entries)``;
        read the records with :meth:`transcript_records` / :meth:`usage_records` when they
        are needed. Raises :class:`SessionNotFoundError`."""
        meta, head, _t_key, l_key, e_key, _o_key = self._keys(session_id)
        pipe = self.client.pipeline(transaction=True)
        pipe.hmget(meta, "version", "transcript", "ledger").get(head).lindex(l_key, -1)
        pipe.hgetall(e_key)
        (version, count, n_usage), data, newest, entries = self._call("load", pipe.execute)
        if data is None or version is None:
            raise SessionNotFoundError(f"{self.url}: no session {session_id!r}")
        last = bytes(newest) if newest is not None else None
        window = _window(entries)
        return bytes(data), int(count or 0), int(n_usage or 0), last, int(version), window

    def transcript_records(self, session_id: str, count: int) -> list[bytes]:
        """The first ``count`` transcript records of ``session_id`` (append-only, so they are
        the ones a load counted, however many turns were saved since). Raises
        :class:`SessionStoreError` when fewer are stored (the session was deleted since)."""
        return self._records(self._keys(session_id)[2], session_id, count, "transcript")

    def usage_records(self, session_id: str, count: int) -> list[bytes]:
        """The first ``count`` usage records of ``session_id``, as :meth:`transcript_records`."""
        return self._records(self._keys(session_id)[3], session_id, count, "usage")

    def entry_records(self, session_id: str, keys: list[str]) -> dict[str, bytes]:
        """The stored relief original records of ``session_id`` among ``keys`` (read on
        demand, :class:`regio.store.originals.StoredOriginals`)."""
        found = self._call("read", self.client.hmget, self._keys(session_id)[5], keys)
        return {k: bytes(v) for k, v in zip(keys, found, strict=True) if v is not None}

    def original_records(self, session_id: str) -> dict[str, bytes]:
        """Every relief original record of ``session_id`` (``@ro/`` and ``@rn/``)."""
        return _window(self._call("read", self.client.hgetall, self._keys(session_id)[5]))

    def _records(self, key: str, session_id: str, count: int, what: str) -> list[bytes]:
        if count <= 0:
            return []
        rows = self._call(f"read the {what} records", self.client.lrange, key, 0, count - 1)
        if len(rows) != count:
            raise SessionStoreError(
                f"{self.url}: session {session_id!r} holds {len(rows)} of the {count} "
                f"{what} records it had when it was loaded (it was deleted since); reload it"
            )
        return [bytes(r) for r in rows]

    def sessions(self) -> list[str]:
        """The stored session ids, sorted (a ``SCAN`` over the prefix)."""
        pattern = "".join("\\" + c if c in "*?[]\\" else c for c in self.prefix) + "*:meta"
        found = self._call("list sessions", list, self.client.scan_iter(pattern))
        out = []
        for key in found:
            text = key.decode() if isinstance(key, bytes) else str(key)
            out.append(text[len(self.prefix) + 1 : -len("}:meta")])
        return sorted(out)

    def delete(self, session_id: str) -> bool:
        """Remove ``session_id``; ``False`` when there was none."""
        return bool(self._call("delete", self.client.delete, *self._keys(session_id)))


def _window(entries: dict[Any, Any]) -> dict[str, bytes]:
    """The window entries of an ``HGETALL`` reply, by key."""
    return {(k.decode() if isinstance(k, bytes) else str(k)): bytes(v) for k, v in entries.items()}
