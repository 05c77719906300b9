"""The relief originals in a session store (``regio.session-head/6``).

Each original (a tool result the relief chain changed on admission, kept whole for
``context_restore``; :class:`regio.session._reliefbook.Originals`) is the record
``@ro/<call id>``, and ``@rn/<call id>`` holds the sequence number of its last set; the head
holds the next sequence number (``originals_seq``). Originals are append-only like the
transcript (only ever added, or replaced when a later call reuses the call id), so a save writes
the records of the originals set since the last save and never reads, encodes or compares the
others (:func:`keyed_originals`), and a load from a store that can read records by key
(``entry_records``) reads none of them: :class:`StoredOriginals` reads one when it is asked for
(``context_restore``, the summarizer's input) and all of them only when something needs the
whole mapping (a file save, iteration). Heads before ``regio.session-head/6`` (the ids in the
head, or the ``@rl`` list of ``regio.session-head/5``) are read whole at load, and the first
save writes their originals in this layout.

A lazy mapping is bounded by its load, as the transcript is (it reads the records it counted):
a record whose sequence number is at or past the loaded head's ``originals_seq`` was saved by
another writer after the load and is an error, never this session's original; and the head
holds how many originals the session has (``originals_count``), so a read of them all finds
one whose records vanished (deleted, or the whole session deleted since the load) instead of
a later save losing it silently.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import msgspec

from .errors import SessionDamagedError, SessionHistoryLostError, SessionStoreError
from .failures import DECODE_ERRORS
from .lists import DamagedListError, Memo, Recorder, Root, read_ids

if TYPE_CHECKING:
    from regio.content import ToolResult
    from regio.persistence._statefile import EngineState

T = TypeVar("T")

__all__ = [
    "ORIGINALS_PREFIXES",
    "StoredOriginals",
    "keyed_originals",
    "originals_from",
    "originals_memo",
    "stored_originals",
]


def keyed_originals(state: EngineState, rec: Recorder) -> tuple[EngineState, int, int | None]:
    """``state`` without the relief originals (``book.relief.originals``, an
    :class:`regio.session._reliefbook.Originals`), the next sequence number of their
    records and how many originals the session holds (``None``: unknown, a lazy mapping loaded
    from a head that did not store it; :attr:`~regio.session._reliefbook.Originals.count`).
    Each original is the record ``@ro/<call id>``, and ``@rn/<call id>`` holds the sequence
    number of its last set (the load orders them by it). Originals are append-only
    (only ever added, or replaced under their call id), so a save puts the records of the call
    ids set since the last save (:attr:`~regio.session._reliefbook.Originals.changes` past the
    memo's position) and never looks at the others: its cost follows the turn, not the
    session. Without a memo of this mapping (a new session, one loaded from an older head, or
    from another store) every original is put, in order."""
    from regio.session._reliefbook import Originals

    originals = state.book.relief.originals
    assert isinstance(originals, Originals)  # ReliefBook.__post_init__ makes it one
    hit = rec.memo.get(_ORIGINALS_SEQ)
    if hit is not None and hit[0] is originals:
        done, seq = hit[1]
        changed = originals.changes[done:]
    else:
        seq, changed = 0, list(originals)  # reads a lazy mapping whole
    # a call id set twice since the last save is written once, at its last position
    for call_id in reversed(dict.fromkeys(reversed(changed))):
        rec.put[f"{_ORIGINAL}{call_id}"] = encode_record(originals[call_id])
        rec.put[f"{_ORIGINALS_SEQ}{call_id}"] = encode_record(seq)
        seq += 1
    rec.next_memo[_ORIGINALS_SEQ] = (originals, (len(originals.changes), seq))
    relief = msgspec.structs.replace(state.book.relief, originals={})
    book = msgspec.structs.replace(state.book, relief=relief)
    return msgspec.structs.replace(state, book=book), seq, originals.count


def originals_memo(originals: dict[str, ToolResult], seq: int | None) -> Memo:
    """The :attr:`StoreMark.memo` part of a loaded engine's relief ``originals`` (a save
    after the load writes the ones set since; ``seq`` is the head's ``originals_seq``,
    ``None`` for an older head: the first save writes them all in the current layout)."""
    from regio.session._reliefbook import Originals

    if seq is None:
        return {}
    assert isinstance(originals, Originals)  # ReliefBook.__post_init__ makes it one
    return {_ORIGINALS_SEQ: (originals, (len(originals.changes), seq))}


def head_seq(memo: Memo) -> int | None:
    """The loaded head's ``originals_seq`` kept in a memo of :func:`originals_memo`
    (``None``: none, an older head)."""
    hit = memo.get(_ORIGINALS_SEQ)
    return None if hit is None else int(hit[1][1])


def _original_ids(where: str, root: Root, entries: Mapping[str, bytes]) -> list[str]:
    """The relief originals' call ids, oldest first, from their ``@rl`` list (stored newest
    first by ``regio.session-head/5``)."""
    try:
        return read_ids(_ORIGINALS_LIST, root, entries)[::-1]
    except DamagedListError as exc:
        raise SessionDamagedError(
            f"{where}: the stored head's {exc}; the session is damaged, restore it from a file save"
        ) from exc


def _with_originals(state: EngineState, originals: dict[str, ToolResult]) -> EngineState:
    relief = msgspec.structs.replace(state.book.relief, originals=originals)
    book = msgspec.structs.replace(state.book, relief=relief)
    return msgspec.structs.replace(state, book=book)


def _originals_of(
    where: str, state: EngineState, call_ids: Sequence[str], entries: Mapping[str, bytes]
) -> EngineState:
    """``state`` with the relief originals decoded from their ``@ro/`` records (heads before
    ``regio.session-head/6``)."""
    from regio.content import ToolResult

    missing = [c for c in call_ids if f"{_ORIGINAL}{c}" not in entries]
    if missing:
        raise SessionDamagedError(
            f"{where}: the stored relief originals lack calls {missing[:3]}; the session is "
            "damaged, restore it from a file save"
        )
    dec = msgspec.msgpack.Decoder(ToolResult)
    return _with_originals(state, {c: dec.decode(entries[f"{_ORIGINAL}{c}"]) for c in call_ids})


class StoredOriginals:
    """The relief originals of a stored ``regio.session-head/6`` session, read on demand
    (:class:`regio.session._reliefbook.OriginalsSource`): ``read(keys)`` returns the stored
    records among ``keys``, ``read_all()`` every ``@ro/`` and ``@rn/`` record of the session.

    ``limit`` is the loaded head's ``originals_seq``: the load sees the records whose sequence
    number is below it, as the transcript sees its first ``count`` records; a record at or past
    it was saved after this load by another writer (this engine's own sets are in its mapping),
    and reading it raises :class:`SessionStoreError` ("reload the session") rather than
    handing this session another writer's original. ``count`` is the head's
    ``originals_count`` (``None`` for a head saved before regio stored it): :meth:`all` checks
    that the load's originals are all still stored. A damaged record, a call with one of its
    two records, or fewer stored originals than ``count`` raises :class:`SessionStoreError`
    naming ``where`` and the record's key."""

    def __init__(
        self,
        where: str,
        read: Callable[[list[str]], Mapping[str, bytes]],
        read_all: Callable[[], Mapping[str, bytes]],
        *,
        limit: int | None = None,
        count: int | None = None,
    ) -> None:
        from regio.content import ToolResult

        self.where = where
        self.limit, self.count = limit, count
        self._read, self._read_all = read, read_all
        self._dec = msgspec.msgpack.Decoder(ToolResult)
        self._found: dict[str, Mapping[str, bytes]] = {}  # call id -> its records, read once
        self._done: dict[str, Any] = {}  # call id -> original or None, decoded this far

    def copy(self) -> StoredOriginals:
        """The same stored originals and bounds, with caches of its own (each engine restored
        from one loaded state reads for itself)."""
        out = StoredOriginals(
            self.where, self._read, self._read_all, limit=self.limit, count=self.count
        )
        out._found, out._done = dict(self._found), dict(self._done)
        return out

    def _records(self, call_id: str) -> Mapping[str, bytes]:
        found = self._found.get(call_id)
        if found is None:
            keys = [f"{_ORIGINAL}{call_id}", f"{_ORIGINALS_SEQ}{call_id}"]
            found = self._found[call_id] = self._read(keys)
        return found

    def exists(self, call_id: str) -> bool:
        """Whether a record of ``call_id`` is stored (read once; never raises for a damaged
        or foreign one: a set of the call replaces it)."""
        return bool(self._records(call_id))

    def get(self, call_id: str) -> Any:
        """The stored original of ``call_id`` (``None``: none is stored); one read."""
        if call_id in self._done:
            return self._done[call_id]
        found = self._records(call_id)
        value = None
        if found:
            seq_key, key = f"{_ORIGINALS_SEQ}{call_id}", f"{_ORIGINAL}{call_id}"
            seq = _decoded(self.where, seq_key, found.get(seq_key), _SEQ)
            _check_own(self.where, key, seq, self.limit)
            value = _decoded(self.where, key, found.get(key), self._dec)
        self._done[call_id] = value
        return value

    def all(
        self, own: Collection[str] = (), replaced: Collection[str] = (), complete: bool = True
    ) -> dict[str, Any]:
        """Every stored original, by the sequence of its last set. ``own``: the call ids this
        session set since the load (their stored records, whoever saved them, are not read:
        the session holds them); ``replaced``: those of them that were stored at the load.
        Raises :class:`SessionStoreError` for another writer's record (class doc) or, with
        ``complete``, :class:`SessionHistoryLostError` when the load's originals are not all
        stored any more (``count``); without, those still stored are returned."""
        own = set(own)
        entries = self._read_all()
        stored = originals_from(self.where, entries, limit=self.limit, own=own)
        if self.count is not None and complete:
            seen = {c for c in stored if c not in own} | set(replaced)
            if len(seen) != self.count:
                raise SessionHistoryLostError(
                    f"{self.where}: the store holds {len(seen)} of the {self.count} relief "
                    "originals the session had when it was loaded (their records, or the "
                    "session, were deleted since); nothing was written. The engine holds the "
                    "window and what was added since the load: engine.save(path) or "
                    "engine.save_to(store, id, create=True) saves it and says what is left out",
                    session_id=self.where.rpartition("#")[2],
                    expected=-1,
                )
        return stored


def _check_own(where: str, key: str, seq: int, limit: int | None) -> None:
    """Raise :class:`SessionStoreError` when the record ``key`` (sequence number ``seq``) was
    saved after the load whose head's ``originals_seq`` is ``limit``."""
    if limit is not None and seq >= limit:
        raise SessionStoreError(
            f"{where}: the stored relief original {key!r} was saved by another writer after "
            f"this load (sequence number {seq}, the load saw those below {limit}); reload the "
            "session with Engine.load_from"
        )


_SEQ = msgspec.msgpack.Decoder(int)


def _decoded(where: str, key: str, data: bytes | None, dec: msgspec.msgpack.Decoder[T]) -> T:
    """``data``, the stored record ``key``, decoded; raises :class:`SessionStoreError` naming
    ``where`` and ``key`` when it is missing (``None``) or damaged."""
    if data is None:
        raise SessionDamagedError(
            f"{where}: the stored relief original {key!r} is missing (its call is listed); "
            "the session is damaged, restore it from a file save"
        )
    try:
        return dec.decode(data)
    except DECODE_ERRORS as exc:
        raise SessionDamagedError(
            f"{where}: the stored relief original {key!r} is damaged ({exc}); restore the "
            "session from a file save"
        ) from exc


def originals_from(
    where: str,
    entries: Mapping[str, bytes],
    *,
    limit: int | None = None,
    own: Collection[str] = (),
) -> dict[str, Any]:
    """The relief originals among stored ``entries`` (``@rn/`` and ``@ro/`` records of a
    ``regio.session-head/6`` head), ordered by their sequence numbers, without those of the
    ``own`` call ids. Raises :class:`SessionStoreError` naming the key of a missing or damaged
    record, or of one whose sequence number is ``limit`` or more (saved by another writer after
    the load: :class:`StoredOriginals`)."""
    from regio.content import ToolResult

    dec = msgspec.msgpack.Decoder(ToolResult)
    n = len(_ORIGINALS_SEQ)
    order = []
    for k, d in entries.items():
        if k.startswith(_ORIGINALS_SEQ) and k[n:] not in own:
            seq = _decoded(where, k, d, _SEQ)
            _check_own(where, f"{_ORIGINAL}{k[n:]}", seq, limit)
            order.append((seq, k[n:]))
    lone = [
        k for k in entries if k.startswith(_ORIGINAL) and f"{_ORIGINALS_SEQ}{k[n:]}" not in entries
    ]
    if lone:
        raise SessionDamagedError(
            f"{where}: the stored relief original {lone[0]!r} has no sequence record; the "
            "session is damaged, restore it from a file save"
        )
    return {
        c: _decoded(where, f"{_ORIGINAL}{c}", entries.get(f"{_ORIGINAL}{c}"), dec)
        for _, c in sorted(order)
    }


#: Record key prefixes of the relief originals: ``@ro/<call id>`` (the original) and, since
#: ``regio.session-head/6``, ``@rn/<call id>`` (the sequence number of its last set);
#: ``@rl`` is the list of their call ids of a ``regio.session-head/5`` head (read, not written).
_ORIGINAL, _ORIGINALS_SEQ, _ORIGINALS_LIST = "@ro/", "@rn/", "@rl"
ORIGINALS_PREFIXES = (_ORIGINAL, _ORIGINALS_SEQ)
encode_record = msgspec.msgpack.encode


class OriginalsHead(Protocol):
    """What :func:`stored_originals` reads of a stored head
    (:class:`regio.persistence.store.base._Head`; named here, as the base module imports this
    one): the ``regio.session-head/6`` sequence and count, an older head's call ids or lists."""

    @property
    def originals_seq(self) -> int | None: ...

    @property
    def originals_count(self) -> int | None: ...

    @property
    def originals(self) -> list[str] | None: ...

    @property
    def lists(self) -> dict[str, tuple[str, int]] | None: ...


def stored_originals(
    where: str,
    state: EngineState,
    head: OriginalsHead,
    entries: Mapping[str, bytes],
    source: StoredOriginals | None,
) -> EngineState:
    """``state`` with the relief originals of ``head``: read on demand from ``source`` or
    decoded from ``entries`` (``regio.session-head/6``), or the ids listed by an older head
    decoded from ``entries``."""
    from regio.session._reliefbook import Originals

    if head.originals_seq is not None:
        if source is not None:
            return _with_originals(state, Originals(source=source))
        found = originals_from(where, entries)
        if head.originals_count is not None and len(found) != head.originals_count:
            raise SessionDamagedError(
                f"{where}: the store holds {len(found)} of the session's "
                f"{head.originals_count} relief originals; the session is damaged, restore it "
                "from a file save"
            )
        return _with_originals(state, Originals(found))
    call_ids = head.originals
    if head.lists and _ORIGINALS_LIST in head.lists:
        call_ids = _original_ids(where, head.lists[_ORIGINALS_LIST], entries)
    return _originals_of(where, state, call_ids, entries) if call_ids else state
