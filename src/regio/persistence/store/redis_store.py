"""The shared session store: Redis (the ``redis`` package, extra ``regio[redis]``).

For agent servers whose workers share sessions by key. A session ``id`` lives under six keys
with one hash tag (so a Redis Cluster keeps them on one slot): ``{prefix}{id}:meta`` (hash:
``version``, ``transcript``, ``ledger`` counts), ``{prefix}{id}:head``, the append-only lists
``{prefix}{id}:t`` (transcript records) and ``{prefix}{id}:l`` (usage records), the hash
``{prefix}{id}:e`` of window entries (``<region>/<entry id>`` -> encoded entry; the same keyed
records as the SQLite store) and the hash ``{prefix}{id}:o`` of the relief originals' records
(``@ro/`` and ``@rn/``, :mod:`regio.persistence.store.originals`; a session saved before
``regio.session-head/6`` has them in ``:e``), which a load leaves to be read on demand.

A save is one Lua script (atomic on the server, https://redis.io/docs/latest/develop/interact/
programmability/eval-intro/): it compares the stored version with the one the engine last saw,
and only when they match appends the records, puts and deletes window entries, replaces the
head and increments the version. Before it writes anything it checks what could make a
command fail half-way (Redis does not roll a script back): each key holds its own type or
nothing, the counters are integers, no other writer holds the session's lease
(``{prefix}{id}:lease``, a string with a server-side expiry, :mod:`regio.persistence.store.lease`),
and the records and window entries the last save left are all there (a save over a session whose
keys were deleted is refused with :class:`SessionDamagedError`, never reported as done). The
scripts are :mod:`regio.persistence.store.redis_scripts`. Two
workers racing on one session therefore never lose a write and never half-apply one: the
second gets :class:`SessionConflictError` and reloads. A load reads all keys in one ``MULTI``
transaction. Every ``redis`` error becomes a :class:`SessionStoreError` naming the server, the
session (and the key of another type), the cause and the fix
(:func:`regio.persistence.store.failures.redis_failure`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import SessionNotFoundError, SessionRecords, SessionStoreError
from .errors import (
    SessionDamagedError,
    SessionHistoryLostError,
    SessionLeasedError,
    conflict,
)
from .failures import incomplete_session, redis_failure
from .lease import DEFAULT_TTL, DEFAULT_WAIT, SessionLease, acquire
from .originals import ORIGINALS_PREFIXES
from .redis_scripts import NO_EXPIRY, RELEASE, RENEW, SAVE, TAKE, TYPES

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

__all__ = ["RedisStore"]


class RedisStore:
    """Sessions in Redis. ``client`` is a ``redis.Redis`` (bytes responses, the default);
    :meth:`from_url` builds one. ``prefix`` namespaces the keys. Raises
    :class:`SessionStoreError` naming the URL when the server cannot be reached."""

    def __init__(self, client: Redis, *, prefix: str = "regio:session:", url: str = "") -> None:
        self.client = client
        self.prefix = prefix
        self.url = url or "redis://"
        self._save = client.register_script(SAVE)
        self._take = client.register_script(TAKE)
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "regio:session:") -> RedisStore:
        """A store on the server at ``url`` (``redis://host:port/db``). Raises
        :class:`SessionStoreError` naming the install command when ``redis`` is missing."""
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise SessionStoreError(
                "the redis store needs the redis package: pip install 'regio[redis]'"
            ) from exc
        try:
            client = redis.Redis.from_url(url)
        except ValueError as exc:
            raise SessionStoreError(
                f"{url!r} is not a Redis URL ({exc}); use redis://host:6379/0"
            ) from exc
        return cls(client, prefix=prefix, url=url)

    def _keys(self, session_id: str) -> list[str]:
        base = f"{self.prefix}{{{session_id}}}"
        return [
            f"{base}:meta",
            f"{base}:head",
            f"{base}:t",
            f"{base}:l",
            f"{base}:e",
            f"{base}:o",
            f"{base}:lease",
        ]

    def _call(
        self,
        what: str,
        fn: Callable[..., Any],
        *args: Any,
        session_id: str | None = None,
        wrote: bool = False,
        **kwargs: Any,
    ) -> Any:
        """``fn(*args, **kwargs)``, a ``redis`` error turned into the
        :class:`SessionStoreError` of :func:`redis_failure` (a ``WRONGTYPE`` names the key of
        ``session_id`` that holds another type)."""
        import redis

        try:
            return fn(*args, **kwargs)
        except redis.RedisError as exc:
            error = redis_failure(self.url, what, exc, wrote=wrote, session_id=session_id)
            if isinstance(error, SessionDamagedError) and session_id is not None:
                error = self._wrong_type(session_id, what, error)
            raise error from exc

    def _wrong_type(
        self, session_id: str, what: str, error: SessionDamagedError
    ) -> SessionDamagedError:
        """``error`` naming the first key of ``session_id`` whose type is not regio's (one
        ``TYPE`` per key; ``error`` unchanged when that fails too)."""
        import redis

        try:
            for key, want in zip(self._keys(session_id), TYPES, strict=True):
                found = self.client.type(key)
                found = found.decode() if isinstance(found, bytes) else str(found)
                if found not in ("none", want):
                    return _wrong_type_error(self.url, session_id, what, key, found, want)
        except redis.RedisError:
            pass
        return error

    def save(
        self,
        session_id: str,
        records: SessionRecords,
        *,
        expected: int,
        lease: SessionLease | str | None = None,
    ) -> int:
        """Append ``records`` and replace the head when the session is at version
        ``expected`` (0: new), atomically (module doc); ``lease``: the writer's lease on the
        session (or its token). Returns the new version; raises
        :class:`SessionConflictError` (another writer saved first),
        :class:`SessionLeasedError` (another writer holds the lease),
        :class:`SessionLostError` (the session this engine saved is gone) or
        :class:`SessionStoreError`; nothing is written then."""
        token = lease.token if isinstance(lease, SessionLease) else lease
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
            sum(1 for k in records.digests if not k.startswith(ORIGINALS_PREFIXES)),
            token or "",
        ]
        keys = self._keys(session_id)
        what = f"save session {session_id!r}"
        status, value = self._call(
            what, self._save, keys=keys, args=args, session_id=session_id, wrote=True
        )
        status = int(status)
        if status == -2:
            i = int(value) - 1
            found = self._call(what, self.client.type, keys[i], session_id=session_id)
            found = found.decode() if isinstance(found, bytes) else str(found)
            raise _wrong_type_error(self.url, session_id, what, keys[i], found, TYPES[i])
        if status == -3:
            field = value.decode() if isinstance(value, bytes) else str(value)
            raise _not_integer(self.url, session_id, keys[0], field)
        if status == -4:
            if int(value) == NO_EXPIRY:
                raise _forever(self.url, session_id, keys[6])
            raise _leased(self.url, session_id, int(value) / 1000, bool(token), keys[6])
        if status == -5:
            part = value.decode() if isinstance(value, bytes) else str(value)
            missing = "the window records" if part == "window" else f"the {part} records"
            raise incomplete_session(self.url, session_id, missing)
        if status != 0:
            raise conflict(self.url, session_id, expected, int(value))
        return int(value)

    # ----- leases ------------------------------------------------------------------------
    def lease(
        self, session_id: str, *, ttl: float = DEFAULT_TTL, wait: float = DEFAULT_WAIT
    ) -> SessionLease:
        """Take the lease on ``session_id`` (:func:`regio.persistence.store.lease.acquire`): ``ttl``
        seconds (the server's clock), waiting up to ``wait`` seconds for another writer's.
        Raises :class:`SessionLeasedError`."""
        return acquire(self, session_id, ttl=ttl, wait=wait)

    def lease_key(self, session_id: str) -> str:
        """The key holding ``session_id``'s lease (the holder's token; its expiry is the
        lease's): a Lua script writing other keys of the session checks it to fence its write
        (in the session's hash slot, ``{id}``)."""
        return self._keys(session_id)[6]

    def try_lease(self, session_id: str, token: str, ttl: float) -> float | None:
        """Take the lease for ``token`` when it is free: ``None``; else the seconds until the
        holder's lease expires."""
        key = self._keys(session_id)[6]
        reply = self._call(
            f"lease session {session_id!r}",
            self._take,
            keys=[key],
            args=[token, max(1, round(ttl * 1000))],
            session_id=session_id,
        )
        if int(reply[0]) == 1:
            return None
        if int(reply[1]) == NO_EXPIRY:
            raise _forever(self.url, session_id, key)
        return max(0.0, int(reply[1]) / 1000)

    def renew_lease(self, session_id: str, token: str, ttl: float) -> bool:
        """Extend ``token``'s lease to ``ttl`` seconds from now; ``False`` when it is not the
        holder's any more."""
        key = self._keys(session_id)[6]
        done = self._call(
            f"renew the lease on session {session_id!r}",
            self._renew,
            keys=[key],
            args=[token, max(1, round(ttl * 1000))],
            session_id=session_id,
        )
        return bool(int(done))

    def release_lease(self, session_id: str, token: str) -> bool:
        """Drop ``token``'s lease on ``session_id``; ``False`` when it held none."""
        key = self._keys(session_id)[6]
        done = self._call(
            f"release the lease on session {session_id!r}",
            self._release,
            keys=[key],
            args=[token],
            session_id=session_id,
        )
        return bool(int(done))

    # ----- reads -------------------------------------------------------------------------
    def _read(self, session_id: str, fill: Callable[[Pipeline], None]) -> list[Any]:
        """The replies of one ``MULTI`` that ``fill(pipe)`` queues; a reply that is an error
        (a key of another type) raises the :class:`SessionStoreError` naming it."""
        what = f"load session {session_id!r}"
        pipe = self.client.pipeline(transaction=True)
        fill(pipe)
        replies = self._call(what, pipe.execute, raise_on_error=False, session_id=session_id)
        for reply in replies:
            if isinstance(reply, Exception):
                error = redis_failure(self.url, what, reply, wrote=False, session_id=session_id)
                if isinstance(error, SessionDamagedError):
                    error = self._wrong_type(session_id, what, error)
                raise error from reply
        return list(replies)

    def load(
        self, session_id: str
    ) -> tuple[bytes, list[bytes], list[bytes], int, dict[str, bytes]]:
        """The head, records, version and window entries of ``session_id`` (one ``MULTI``).
        Raises :class:`SessionNotFoundError`."""
        meta, head, t_key, l_key, e_key, o_key, _ = self._keys(session_id)

        def fill(pipe: Pipeline) -> None:
            # redis-py types a Pipeline's commands as their replies; queued, each returns the
            # pipeline (the stub is wrong for pipelines)
            pipe.hget(meta, "version").get(head).lrange(t_key, 0, -1).lrange(l_key, 0, -1)  # type: ignore[union-attr]
            pipe.hgetall(e_key).hgetall(o_key)  # type: ignore[attr-defined]

        version, data, transcript, ledger, entries, originals = self._read(session_id, fill)
        if data is None or version is None:
            raise SessionNotFoundError(f"{self.url}: no session {session_id!r}")
        window = _window(entries) | _window(originals)
        number = _integer(self.url, session_id, meta, "version", version)
        return bytes(data), list(transcript), list(ledger), number, window

    def load_window(
        self, session_id: str
    ) -> tuple[bytes, int, int, bytes | None, int, dict[str, bytes]]:
        """What a load needs for the window, in one ``MULTI``: ``(head, transcript record
        count, usage record count, newest usage record or None, version, window entries)``;
        read the records with :meth:`transcript_records` / :meth:`usage_records` when they
        are needed. Raises :class:`SessionNotFoundError`."""
        meta, head, _t_key, l_key, e_key, _o_key, _ = self._keys(session_id)

        def fill(pipe: Pipeline) -> None:
            # the stub types the queued command as its reply (see load)
            pipe.hmget(meta, "version", "transcript", "ledger").get(head).lindex(l_key, -1)  # type: ignore[attr-defined]
            pipe.hgetall(e_key)

        (version, count, n_usage), data, newest, entries = self._read(session_id, fill)
        if data is None or version is None:
            raise SessionNotFoundError(f"{self.url}: no session {session_id!r}")
        last = bytes(newest) if newest is not None else None
        window = _window(entries)
        numbers = [
            _integer(self.url, session_id, meta, name, value or b"0")
            for name, value in (("version", version), ("transcript", count), ("ledger", n_usage))
        ]
        return bytes(data), numbers[1], numbers[2], last, numbers[0], window

    def transcript_records(self, session_id: str, count: int) -> list[bytes]:
        """The first ``count`` transcript records of ``session_id`` (append-only, so they are
        the ones a load counted, however many turns were saved since). Raises
        :class:`SessionHistoryLostError` when fewer are stored (the session was deleted, or the
        server restarted without persistence, since)."""
        return self._records(self._keys(session_id)[2], session_id, count, "transcript")

    def usage_records(self, session_id: str, count: int) -> list[bytes]:
        """The first ``count`` usage records of ``session_id``, as :meth:`transcript_records`."""
        return self._records(self._keys(session_id)[3], session_id, count, "usage")

    def entry_records(self, session_id: str, keys: list[str]) -> dict[str, bytes]:
        """The stored relief original records of ``session_id`` among ``keys`` (read on
        demand, :class:`regio.persistence.store.originals.StoredOriginals`)."""
        found = self._call(
            f"read session {session_id!r}",
            self.client.hmget,
            self._keys(session_id)[5],
            keys,
            session_id=session_id,
        )
        return {k: bytes(v) for k, v in zip(keys, found, strict=True) if v is not None}

    def original_records(self, session_id: str) -> dict[str, bytes]:
        """Every relief original record of ``session_id`` (``@ro/`` and ``@rn/``)."""
        return _window(
            self._call(
                f"read session {session_id!r}",
                self.client.hgetall,
                self._keys(session_id)[5],
                session_id=session_id,
            )
        )

    def _records(self, key: str, session_id: str, count: int, what: str) -> list[bytes]:
        if count <= 0:
            return []
        rows = self._call(
            f"read the {what} records of session {session_id!r}",
            self.client.lrange,
            key,
            0,
            count - 1,
            session_id=session_id,
        )
        if len(rows) != count:
            raise SessionHistoryLostError(
                f"{self.url}: session {session_id!r} holds {len(rows)} of the {count} {what} "
                f"records it had when this engine loaded it ({key}): the session was deleted "
                "since (or the server restarted without persistence). The window and the turns "
                "since the load are in the engine: engine.save(path) or engine.save_to(store, "
                "id, create=True) saves them and says what is left out; the history before the "
                "load is gone from this server (restore it from a backup or a file save)",
                session_id=session_id,
                expected=-1,
            )
        return [bytes(r) for r in rows]

    def sessions(self) -> list[str]:
        """The stored session ids, sorted (a ``SCAN`` over the prefix)."""
        pattern = "".join("\\" + c if c in "*?[]\\" else c for c in self.prefix) + "*:meta"
        found = self._call("list sessions", list, self.client.scan_iter(pattern))
        out = []
        for key in found:
            text = key.decode(errors="replace") if isinstance(key, bytes) else str(key)
            out.append(text[len(self.prefix) + 1 : -len("}:meta")])
        return sorted(out)

    def delete(self, session_id: str) -> bool:
        """Remove ``session_id`` (its lease too); ``False`` when there was none."""
        keys = self._keys(session_id)
        gone = self._call(
            f"delete session {session_id!r}",
            self.client.delete,
            *keys,
            session_id=session_id,
            wrote=True,
        )
        return bool(gone)


def _wrong_type_error(
    url: str, session_id: str, what: str, key: str, found: str, want: str
) -> SessionDamagedError:
    return SessionDamagedError(
        f"{url}: cannot {what}: key {key!r} holds a {found}, not the {want} regio keeps there; "
        "nothing was written. Another program writes under regio's key prefix: delete that "
        "key (the session's other keys are intact, a save then writes the session again with "
        "save_to(..., create=True)), or give the store another prefix",
        session_id=session_id,
        key=key,
    )


def _not_integer(url: str, session_id: str, key: str, field: str) -> SessionDamagedError:
    return SessionDamagedError(
        f"{url}: session {session_id!r}: field {field!r} of {key!r} is not an integer (another "
        "program wrote it); the store is unchanged. Restore the session from a backup or a file "
        "save, or delete it",
        session_id=session_id,
        key=key,
    )


def _integer(url: str, session_id: str, key: str, field: str, value: bytes | str) -> int:
    """``value`` (a ``meta`` field) as an ``int``; raises :class:`SessionDamagedError`."""
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise _not_integer(url, session_id, key, field) from exc


def _leased(
    url: str, session_id: str, left: float, had_lease: bool, key: str
) -> SessionLeasedError:
    fix = (
        "This writer's lease expired and was taken over: take a new lease, reload the session "
        "and redo the turn"
        if had_lease
        else "Save under the session's lease (store.lease), or wait for it"
    )
    return SessionLeasedError(
        f"{url}: session {session_id!r} is leased by another writer for {max(0.0, left):.1f} s "
        f"more ({key}); nothing was written. {fix}",
        session_id=session_id,
        expires_in=max(0.0, left),
        key=key,
    )


def _forever(url: str, session_id: str, key: str) -> SessionDamagedError:
    """The error of a lease key without an expiry (regio's leases always have one: it would
    hold the session forever)."""
    return SessionDamagedError(
        f"{url}: the lease key {key} of session {session_id!r} has no expiry, so it would hold "
        "the session forever; regio never sets one without (SET NX PX): another program wrote "
        f"it. Nothing was done: delete it (DEL {key}) once no writer works on the session",
        session_id=session_id,
        key=key,
    )


def _window(entries: dict[Any, Any]) -> dict[str, bytes]:
    """The window entries of an ``HGETALL`` reply, by key."""
    return {(k.decode() if isinstance(k, bytes) else str(k)): bytes(v) for k, v in entries.items()}
