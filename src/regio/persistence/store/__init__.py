"""Session stores: many engine sessions saved incrementally by id.

::

    from regio.persistence.store import SQLiteStore

    store = SQLiteStore("sessions.db")
    engine.save_to(store, "user-42")               # appends this turn's records
    engine = Engine.load_from(store, "user-42")    # the same window, transcript and ledger

* :class:`SQLiteStore`: embedded default (standard library), many sessions in one WAL-mode
  file, safe across processes on one machine;
* :class:`RedisStore`: for agent servers whose workers share sessions (extra ``regio[redis]``);
* :func:`open_store` opens either from a URL (``sqlite:///path.db``, ``redis://host:6379/0``).

Saves are optimistic: a save by an engine that did not see the last stored version raises
:class:`SessionConflictError` and writes nothing (see :mod:`regio.persistence.store.base`). A writer
that works on a session for a while (a proxy's request, a compaction) takes its lease first
(``store.lease(id)``, :mod:`regio.persistence.store.lease`) so no other writer starts on it
meanwhile; :func:`compact_session` compacts a stored session under its lease. Every failure is a
:class:`SessionStoreError` naming the cause and the fix (:mod:`regio.persistence.store.errors`).
What a store reads of an engine and of its class: :mod:`regio.persistence.store.engines`.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

import msgspec

from regio.persistence._lostparts import save_held

from .base import (
    SessionRecords,
    SessionStore,
    StoreMark,
    decode_session,
    encode_save,
    encode_save_memo,
    read_head,
)
from .errors import (
    LeaseTimeError,
    SessionConflictError,
    SessionDamagedError,
    SessionHistoryLostError,
    SessionLeasedError,
    SessionLostError,
    SessionNotFoundError,
    SessionStoreError,
    StoreUnavailableError,
)
from .lazy import lazy_transcript, lazy_usage
from .lease import DEFAULT_TTL, DEFAULT_WAIT, SessionLease, acquire_async
from .lists import entry_digest
from .originals import ORIGINALS_PREFIXES, StoredOriginals, head_seq, originals_memo
from .redis_store import RedisStore
from .sqlite import SQLiteStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from regio.session._session import CompactionResult

    from .engines import EngineLoader, StoredEngine, StoredT

__all__ = [
    "LeaseTimeError",
    "RedisStore",
    "SQLiteStore",
    "SessionConflictError",
    "SessionDamagedError",
    "SessionHistoryLostError",
    "SessionLease",
    "SessionLeasedError",
    "SessionLostError",
    "SessionNotFoundError",
    "SessionRecords",
    "SessionStore",
    "SessionStoreError",
    "StoreMark",
    "StoreUnavailableError",
    "acquire_async",
    "compact_session",
    "encode_save",
    "load_session",
    "load_state",
    "open_store",
    "save_session",
    "split_url",
]


def open_store(url: str, *, create: bool = True) -> SQLiteStore | RedisStore:
    """The store at ``url``: ``sqlite:///relative.db``, ``sqlite:////abs/path.db`` or
    ``redis://host:port/db``; with ``create=False`` a missing SQLite file is an error instead
    of a new store. Raises :class:`SessionStoreError` for another scheme or a missing file."""
    if url.startswith("sqlite://"):
        path = url[len("sqlite://") :]
        path = path[1:] if path.startswith("/") else path
        if not path:
            raise SessionStoreError(f"{url}: give a file, e.g. sqlite:///sessions.db")
        if not create and not os.path.exists(path):
            raise SessionStoreError(f"{url}: no such session database ({path})")
        return SQLiteStore(path)
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore.from_url(url)
    raise SessionStoreError(
        f"{url!r} is not a session store URL; use sqlite:///path.db or redis://host:6379/0"
    )


def split_url(target: str) -> tuple[str, str]:
    """``(store URL, session id)`` of ``URL#session``. Raises :class:`SessionStoreError`
    when the ``#session`` part is missing."""
    url, sep, session = target.rpartition("#")
    if not sep or not url or not session:
        raise SessionStoreError(f"{target!r}: name the session after '#', e.g. {target}#my-session")
    return url, session


def save_session(
    engine: StoredEngine,
    store: SessionStore,
    session_id: str,
    *,
    lease: SessionLease | None = None,
    create: bool = False,
) -> StoreMark:
    """Save ``engine`` as ``session_id`` in ``store`` incrementally (the records after the
    engine's :class:`StoreMark` for that store and session, and the head). ``lease``: the
    writer's lease on the session (:mod:`regio.persistence.store.lease`); ``create``: write the
    whole engine as a new session whatever its mark says (the save a :class:`SessionLostError`
    asks for); a whole-engine save (``create``, another session or store) of an engine whose
    store lost the parts its load left unread keeps everything the engine holds and warns
    which parts are left out (:mod:`regio.persistence._lostparts`). Returns the new mark (also kept
    as ``engine.store_mark``). Raises :class:`SessionConflictError`
    (:class:`SessionLeasedError` while another writer holds the lease),
    :class:`SessionLostError` or :class:`SessionStoreError`; nothing is written then."""
    mark = getattr(engine, "store_mark", None)
    if create or (mark is not None and (mark.store, mark.session_id) != (store.url, session_id)):
        mark = None
    if lease is not None and (lease.store.url != store.url or lease.session_id != session_id):
        raise SessionStoreError(
            f"{store.url}: the lease given to save session {session_id!r} is on session "
            f"{lease.session_id!r} of {lease.store.url}; pass the lease of this session",
            session_id=session_id,
        )
    records, memo = save_held(engine, lambda: encode_save_memo(engine, mark))
    expected = mark.version if mark else 0
    if lease is not None:
        version = store.save(session_id, records, expected=expected, lease=lease)
    else:
        version = store.save(session_id, records, expected=expected)
    new = StoreMark(
        store.url,
        session_id,
        version,
        records.transcript_count,
        records.ledger_count,
        records.digests,
        memo,
    )
    engine.store_mark = new
    return new


def _load(store: SessionStore, session_id: str, *, lazy: bool) -> tuple[Any, StoreMark, Any]:
    """``(state, mark, lazy parts)``: the stored state (its transcript and, from a store with
    ``load_window``, its usage ledger left empty with ``lazy``), its mark, and with ``lazy``
    ``(transcript, usage)``: the transcript decoded on first use and the usage records read on
    first use (``None``: in the state), read on first use from a store that can
    (``load_window`` / ``transcript_records`` / ``usage_records``). From a store that reads
    records by key (``entry_records`` / ``original_records``), the relief originals of a
    ``regio.session-head/6`` head are read on demand (:class:`StoredOriginals`)."""
    where = f"{store.url}#{session_id}"
    load_window = getattr(store, "load_window", None) if lazy else None
    usage, originals = None, None
    if load_window is not None:
        head, count, n_usage, newest, version, entries = load_window(session_id)
        wrapped = read_head(head)  # the one decode of the head
        seq = wrapped.originals_seq if wrapped is not None else None
        records: Any = functools.partial(store.transcript_records, session_id, count)  # type: ignore[attr-defined]
        read_usage = functools.partial(store.usage_records, session_id, n_usage)  # type: ignore[attr-defined]
        totals = wrapped.usage if wrapped is not None else None
        usage = lazy_usage(where, read_usage, n_usage, newest, totals)
        transcript: list[bytes] = []
        ledger: list[bytes] = []
        if seq is None and hasattr(store, "original_records"):
            # an older head: its originals are read whole (a window read leaves them out)
            entries = {**entries, **store.original_records(session_id)}
        elif seq is not None and hasattr(store, "entry_records") and wrapped is not None:
            originals = StoredOriginals(
                where,
                functools.partial(store.entry_records, session_id),
                functools.partial(store.original_records, session_id),  # type: ignore[attr-defined]
                limit=seq,
                count=wrapped.originals_count,
            )
    else:
        head, transcript, ledger, version, entries = store.load(session_id)
        count, records, n_usage = len(transcript), transcript, len(ledger)
        wrapped = read_head(head)
        seq = wrapped.originals_seq if wrapped is not None else None
    state = decode_session(
        where, head, transcript, ledger, entries, lazy=lazy, originals=originals, wrapped=wrapped
    )
    digests = {
        key: entry_digest(data)
        for key, data in entries.items()
        if seq is None or not key.startswith(ORIGINALS_PREFIXES)
    }
    memo = originals_memo(state.book.relief.originals, seq)
    mark = StoreMark(store.url, session_id, version, count, n_usage, digests, memo)
    if not lazy:
        return state, mark, None
    last_turn = wrapped.last_turn if wrapped is not None else None
    return state, mark, (lazy_transcript(where, records, count, last_turn), usage)


def load_state(store: SessionStore, session_id: str) -> tuple[Any, StoreMark]:
    """The stored :class:`regio.persistence._statefile.EngineState` of ``session_id`` (its whole
    transcript decoded) and its mark. Raises :class:`SessionNotFoundError` /
    :class:`SessionStoreError`."""
    state, mark, _ = _load(store, session_id, lazy=False)
    return state, mark


def load_session(
    cls: Callable[..., StoredT], store: SessionStore, session_id: str, **kwargs: Any
) -> StoredT:
    """An engine of class ``cls`` restored from ``session_id`` (keywords as
    ``Engine.load``), carrying its :class:`StoreMark`. The transcript is decoded on first
    use (:class:`regio.session._transcript.Transcript`), and from a store with
    ``load_window`` the usage records too (the newest is read with the window): a load
    decodes the head and the window entries, not the history."""
    from regio.errors import RuntimeStateError
    from regio.persistence._load import restore_engine

    state, mark, (transcript, usage) = _load(store, session_id, lazy=True)
    try:
        engine = restore_engine(cls, state, transcript=transcript, usage=usage, **kwargs)
    except RuntimeStateError as exc:
        where = f"{store.url}#{session_id}"
        if exc.__cause__ is None:  # the session asks for what the load was not given
            raise SessionStoreError(f"{where}: {exc}", session_id=session_id) from exc
        raise SessionDamagedError(
            f"{where}: the stored session is damaged ({exc}); the store is unchanged. Restore "
            "it from a backup or a file save (Engine.save), or delete it",
            session_id=session_id,
        ) from exc
    # the engine owns a copy of the state's book: the memo names the engine's originals
    memo = dict(mark.memo)
    memo.update(originals_memo(engine.book.relief.originals, head_seq(mark.memo)))
    engine.store_mark = msgspec.structs.replace(mark, memo=memo)
    return engine


def compact_session(
    cls: EngineLoader,
    store: SessionStore,
    session_id: str,
    instructions: str | None = None,
    *,
    ttl: float = DEFAULT_TTL,
    wait: float = DEFAULT_WAIT,
    keep_tokens: int | None = None,
    keep_messages: int | None = None,
    keep_fraction: float | None = None,
    **kwargs: Any,
) -> CompactionResult | None:
    """Compact stored session ``session_id`` under its lease: take the lease (waiting up to
    ``wait`` seconds for another writer's), load the session into an engine of class ``cls``
    (keywords as ``Engine.load_from``: the summarizer, the token counter...), compact it
    (``Engine.compact(instructions, keep_tokens=..., keep_messages=..., keep_fraction=...)``)
    and save the result, then release the lease. The save is
    one atomic step in the store, so a reader sees the session before or after the compaction,
    never in between; a second writer waits for the lease or gets
    :class:`SessionLeasedError`, and one whose lease was taken over (it outlived ``ttl``)
    gets it at the save, having written nothing. Returns the
    :class:`regio.session.CompactionResult` (``None``: nothing to compact, nothing
    saved). Raises :class:`SessionNotFoundError` and the other :class:`SessionStoreError` s."""
    lease_of = getattr(store, "lease", None)
    if lease_of is None:
        raise SessionStoreError(
            f"{store.url}: this store has no leases; use SQLiteStore or RedisStore, or compact "
            "with Engine.load_from / compact / save_to",
            session_id=session_id,
        )
    with lease_of(session_id, ttl=ttl, wait=wait) as lease:
        engine = cls.load_from(store, session_id, **kwargs)
        result = engine.compact(
            instructions,
            keep_tokens=keep_tokens,
            keep_messages=keep_messages,
            keep_fraction=keep_fraction,
        )
        if result is not None:
            engine.save_to(store, session_id, lease=lease)
        return result
