"""The session store contract and the record codec every store shares.

A session is stored as

* a **head**: the engine's state without its transcript, usage ledger, window entries, the
  last request's blocks and the parts sized by the window (options, calibration, counters,
  compaction bookkeeping), replaced on every save; a few kB however full the window;
* the head's **parts** sized by the window (each region's entry ids in order, the window's
  call index, the last request's block index and its two layout states), linked lists of
  small records of which a save writes the items that changed
  (:mod:`regio.persistence.store.parts`);
* **window entries**, keyed records ``<region>/<entry id>`` -> the encoded entry: a save puts
  the entries that are new or changed since the last save and drops the ones that left the
  window (eviction, compaction), so the stored set is always exactly the current window and
  there are no old deltas to fold: a load reads the head and the current entries, bounded by
  the window. The last request's blocks are kept the same way (``@lb/<key>`` records without
  the prefix hash, message index and breakpoint, which the head holds or the load rebuilds
  from the digest chain; :mod:`regio.persistence.store.blocks`), so the blocks of an unchanged
  prefix are never rewritten;
* the relief chain's kept originals (the tool results it changed on admission, for
  ``context_restore``), append-only: ``@ro/<call id>`` and ``@rn/<call id>`` records, of which a
  save writes the ones set since the last save and a load reads none
  (:mod:`regio.persistence.store.originals`). The session keeps every original: the transcript holds
  the results as admitted (trimmed, routed), so an original is the only copy of what the tool
  returned, restorable by call id after its turn group has left the window;
* **records**, append-only: the transcript records and usage records added since the last
  save, one encoded record each. A load reads the transcript on first use
  (:func:`regio.persistence.store.lazy.lazy_transcript`).

A save writes only the records after the :class:`StoreMark` the engine got from its last load
or save, the entry changes against the mark's entry digests, and the head, as one atomic step
guarded by the session's version: when another writer saved the session in between, the save
raises :class:`SessionConflictError` and nothing is written (reload with ``Engine.load_from``
and redo the turn). So the bytes written per save follow the turn, not the session or the
window (figures in :mod:`regio.persistence.store.parts`). Window entries that are the same
(immutable) objects as at the last save are not encoded again (:attr:`StoreMark.memo`).

The state encoding is :func:`regio.persistence._statefile.engine_state` /
:func:`regio.persistence._load.restore_engine` (the same state ``Engine.save`` writes), in
msgpack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import msgspec

from .blocks import BlockIndex, keyed_request, request_of
from .errors import (
    SessionConflictError,
    SessionDamagedError,
    SessionNotFoundError,
    SessionStoreError,
)
from .failures import DECODE_ERRORS
from .lists import DamagedListError, Memo, Recorder
from .parts import (
    StateRef,
    decode_parts,
    encode_parts,
    keep_last_compaction,
    last_compaction_of,
)

if TYPE_CHECKING:
    from regio.persistence._engineparts import EngineParts
    from regio.persistence._statefile import EngineState

    from .lease import SessionLease
    from .originals import StoredOriginals

__all__ = [
    "SessionConflictError",
    "SessionNotFoundError",
    "SessionRecords",
    "SessionStore",
    "SessionStoreError",
    "StoreMark",
    "decode_session",
    "encode_save",
]


class StoreMark(msgspec.Struct, frozen=True):
    """Where an engine stands in a store: ``store`` (the store's URL), ``session_id``,
    ``version`` (saves so far), the transcript / usage record counts already stored and
    ``entries``, the digest of every stored record by key (window entries are
    ``<region>/<entry id>``) but the relief originals' (append-only:
    :mod:`regio.persistence.store.originals`); ``memo``, in memory only (never stored), the window
    entries and request blocks of the last save or load by key, with their digests
    (:func:`encode_save_memo` encodes again only what is not the same object), and the relief
    originals' mapping with the position in its changes the last save reached."""

    store: str
    session_id: str
    version: int
    transcript: int
    ledger: int
    entries: dict[str, str] = msgspec.field(default_factory=dict)
    memo: dict[str, tuple[Any, str]] = msgspec.field(default_factory=dict)


class SessionRecords(msgspec.Struct, frozen=True):
    """What one save hands to a store: the new ``head``, the records to append, the window
    entries and relief originals to put (``put``: key -> encoded record) and the keys to
    remove (``drop``, applied before ``put``), all bytes; ``digests`` are the digests of the
    whole window after the save (for the next :class:`StoreMark`; the relief originals, which
    a save only ever adds, have none)."""

    head: bytes
    transcript: list[bytes]
    ledger: list[bytes]
    transcript_count: int
    ledger_count: int
    put: dict[str, bytes] = msgspec.field(default_factory=dict)
    drop: list[str] = msgspec.field(default_factory=list)
    digests: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def size(self) -> int:
        """Bytes this save writes (head, appended records, put entries and dropped keys)."""
        return (
            len(self.head)
            + sum(map(len, self.transcript))
            + sum(map(len, self.ledger))
            + sum(len(k) + len(v) for k, v in self.put.items())
            + sum(map(len, self.drop))
        )


@runtime_checkable
class SessionStore(Protocol):
    """Stores many engine sessions by id (module doc).

    ``save`` raises :class:`SessionConflictError` when ``expected`` (the version the caller
    last saw, 0 for a new session) is not the stored version, :class:`SessionLostError` when
    the session it saw is gone, and returns the new version; with ``lease`` (a
    :class:`regio.persistence.store.lease.SessionLease` or its token) it is refused with
    :class:`SessionLeasedError` while another writer holds the session's lease (without one,
    too);
    ``load`` raises :class:`SessionNotFoundError` and returns ``(head, transcript records,
    ledger records, version, window entries by key)``."""

    url: str

    def save(
        self,
        session_id: str,
        records: SessionRecords,
        *,
        expected: int,
        lease: SessionLease | str | None = None,
    ) -> int:
        """Append ``records``, put / drop the window entries and replace the head if the
        session is at ``expected`` (and no other writer holds its lease)."""
        ...

    def load(
        self, session_id: str
    ) -> tuple[bytes, list[bytes], list[bytes], int, dict[str, bytes]]:
        """The stored head, records, version and window entries of ``session_id``."""
        ...

    def sessions(self) -> list[str]:
        """The stored session ids, sorted."""
        ...

    def delete(self, session_id: str) -> bool:
        """Remove a session; ``False`` when there was none."""
        ...


#: Format tag of a head whose window entries are keyed records, whose window-sized parts are
#: linked lists of records (:mod:`regio.persistence.store.parts`) and whose relief originals are
#: append-only ``@ro/`` / ``@rn/`` records (:mod:`regio.persistence.store.originals`; the head holds
# their
#: next sequence number, ``originals_seq``).
HEAD_FORMAT = "regio.session-head/6"

#: The head formats a load reads: :data:`HEAD_FORMAT`, ``regio.session-head/5`` (regio of
#: 2026-12-01: the relief originals' call ids a linked list, ``@rl``, newest first, read whole
#: at load), ``regio.session-head/4`` (regio of
#: 2026-12-01: the relief originals' call ids in the head, ``originals``),
#: ``regio.session-head/3`` (regio of 2026-12-01: each window-sized part one record,
#: rewritten whole when it changed) and ``regio.session-head/2`` (regio before 2026-12: the
#: entry order and the layout states in the head); a head that is no ``_Head`` at all is the
#: oldest layout (the whole state, window included).
HEAD_READ_FORMATS = (
    "regio.session-head/2",
    "regio.session-head/3",
    "regio.session-head/4",
    "regio.session-head/5",
    HEAD_FORMAT,
)

#: Record keys of a ``regio.session-head/3`` head's parts sized by the window (read, no longer
#: written; :data:`regio.persistence.store.parts.PARTS_PREFIXES` are the current ones): each
#: region's entry ids in order (``@order/<region>``), the last request's block index (``@ri``),
#: the layout states by content digest (``@ls/<digest>``: the last request's and the one it
#: started from, named by the head's ``layouts``; a state carried over from the previous save
#: is the record that save wrote, never written again) and the window's index of tool calls to
#: their turn groups (``@cg``). ``@ls`` / ``@li`` are the two layout states of a
#: ``regio.session-head/2`` head (read, never written).
_ORDER, _INDEX, _LAYOUT, _INPUT, _CALLS = "@order/", "@ri", "@ls", "@li", "@cg"


class _RequestIndex(msgspec.Struct, array_like=True):
    """The last request's blocks as keyed records: each block's record key, and what depends
    on its position (message index, breakpoint TTL); ``prefix`` holds the prefix hashes only
    when they are not the chain of the digests (then they are rebuilt on load)."""

    keys: list[str]
    messages: list[int | None]
    breakpoints: list[str | None]
    prefix: list[str] | None = None


class _Head(msgspec.Struct):
    """The stored head: the format tag, each region's entry ids in order, the engine state
    (msgpack) whose regions and last request hold no content, and the last request's index;
    ``usage``: the :class:`regio.session._usage.UsageTotals` of the stored usage records, its
    fields in order (``None``: a head saved before regio of 2026-12-01 stored them, or a
    ledger whose totals were not known without reading its stored records)."""

    format: str
    order: dict[str, list[str]]
    state: msgspec.Raw
    request: _RequestIndex | None = None
    originals: list[str] | None = None  # session-head/2 to /4: relief originals' call ids
    parts: list[str] | None = None  # session-head/3: keys of the parts kept as records
    layouts: tuple[str | None, str | None] | None = None  # session-head/3: @ls/ keys
    lists: dict[str, tuple[str, int]] | None = None  # session-head/4: list roots (parts.py)
    states: tuple[StateRef | None, StateRef | None] | None = None  # session-head/4: L, C
    prefix: str | None = None  # session-head/4: the @rp record, when there is one
    last_turn: int | None = None  # no stored transcript record has a later turn (None: unknown)
    compaction: str | None = None  # session-head/4: the @bl record of book.last, if any
    originals_seq: int | None = None  # session-head/6: next sequence number of @rn/ records
    originals_count: int | None = None  # session-head/6: relief originals stored (None: unknown)
    usage: tuple[int, int, int, int, int, int, float | None] | None = None  # UsageTotals (below)


def _parts_of(
    where: str,
    state: EngineState,
    parts: Sequence[str],
    entries: Mapping[str, bytes],
    layouts: tuple[str | None, str | None] | None = None,
) -> tuple[EngineState, dict[str, list[str]], _RequestIndex | None]:
    """``state`` with its layout states from the part records, each region's entry order and
    the request index (the inverse of :func:`_keyed_parts`)."""
    from regio.layout import LayoutState

    missing = [k for k in parts if k not in entries]
    if missing:
        raise SessionDamagedError(
            f"{where}: the stored head lacks its parts {missing[:3]}; the session is damaged, "
            "restore it from a file save"
        )
    decode = msgspec.msgpack.decode
    order = {
        k[len(_ORDER) :]: decode(entries[k], type=list[str]) for k in parts if k.startswith(_ORDER)
    }
    index = decode(entries[_INDEX], type=_RequestIndex) if _INDEX in parts else None
    if _CALLS in parts:
        calls = decode(entries[_CALLS], type=dict[str, str])
        state = msgspec.structs.replace(
            state, window=msgspec.structs.replace(state.window, call_groups=calls)
        )
    if layouts is None:  # a regio.session-head/2 head
        layouts = (_LAYOUT if _LAYOUT in parts else None, _INPUT if _INPUT in parts else None)
    last, carried = layouts
    if last is not None and state.last_request is not None:
        layout = decode(entries[last], type=LayoutState)
        request = msgspec.structs.replace(state.last_request, state=layout)
        state = msgspec.structs.replace(state, last_request=request)
    if carried is not None:
        input_state = decode(entries[carried], type=LayoutState)
        state = msgspec.structs.replace(state, layout_input=(state.layout_input[0], input_state))
    return state, order, index


def encode_save(engine: EngineParts, mark: StoreMark | None) -> SessionRecords:
    """The head, the records after ``mark`` and the record changes against ``mark`` of
    ``engine`` (module doc). Raises :class:`SessionStoreError` when the engine has fewer
    records than ``mark`` says were stored (it is not the engine that was loaded or saved)."""
    return encode_save_memo(engine, mark)[0]


def encode_save_memo(engine: EngineParts, mark: StoreMark | None) -> tuple[SessionRecords, Memo]:
    """:func:`encode_save` and the memo of the next :class:`StoreMark`: each window entry
    and request block encoded now, by key, with its digest. A window entry or block that is
    the same (immutable) object as in ``mark.memo`` is not encoded again, so a save encodes
    the turn's new and changed entries, not the window."""
    from regio.persistence._statefile import engine_state

    from .originals import keyed_originals

    state = engine_state(engine, transcript=False, ledger=False)
    log, ledger = engine.transcript_log, engine.ledger
    done_t = mark.transcript if mark else 0
    done_l = mark.ledger if mark else 0
    if len(log) < done_t or ledger.count < done_l:
        raise SessionStoreError(
            f"session {mark.session_id if mark else '?'}: the engine has fewer transcript or "
            "usage records than the store; save it under a new session id"
        )
    encode = msgspec.msgpack.encode
    rec = Recorder(mark.entries if mark else {}, mark.memo if mark else {})
    order: dict[str, list[str]] = {}
    regions = []
    for region in state.window.regions:
        order[region.name] = [e.id for e in region.entries]
        rec.keep_objects(region.name, region.entries)
        regions.append(msgspec.structs.replace(region, entries=[]))
    window = msgspec.structs.replace(state.window, regions=regions)
    bare = msgspec.structs.replace(state, transcript=[], ledger=[], window=window)
    index = None
    if state.last_request is not None:
        request, index = keyed_request(state.last_request, rec)
        bare = msgspec.structs.replace(bare, last_request=request)
    bare, originals_seq, originals_count = keyed_originals(bare, rec)
    bare, roots, states, prefix = encode_parts(bare, order, index, rec)
    bare, compaction = keep_last_compaction(bare, rec)
    raw = msgspec.Raw(encode(bare))
    totals = ledger.saved_totals()  # reads no stored usage record
    new = log.since(done_t)
    last_turn = new[-1].turn if new else state.window.turn  # records carry the window's turn
    head = _Head(
        HEAD_FORMAT,
        {},
        raw,
        lists=roots,
        states=states,
        prefix=prefix,
        last_turn=last_turn,
        compaction=compaction,
        originals_seq=originals_seq,
        originals_count=originals_count,
        usage=msgspec.structs.astuple(totals) if totals is not None else None,
    )
    records = SessionRecords(
        head=encode(head),
        transcript=[encode(r) for r in new],
        ledger=[encode(r) for r in ledger.since(done_l)],
        transcript_count=len(log),
        ledger_count=ledger.count,
        put=rec.put,
        drop=sorted(rec.stored.keys() - rec.digests.keys()),
        digests=rec.digests,
    )
    return records, rec.next_memo


def _parts4_of(
    where: str, state: EngineState, head: _Head, entries: Mapping[str, bytes]
) -> tuple[EngineState, dict[str, list[str]], BlockIndex | None]:
    """The window-sized parts of a ``regio.session-head/4`` head
    (:mod:`regio.persistence.store.parts`); a broken list raises :class:`SessionStoreError` naming
    ``where``."""
    try:
        state = last_compaction_of(state, head.compaction, entries)
        return decode_parts(
            state, head.lists or {}, head.states or (None, None), head.prefix, entries
        )
    except DamagedListError as exc:
        raise SessionDamagedError(
            f"{where}: the stored head's {exc}; the session is damaged, restore it from a file save"
        ) from exc


def _window_of(
    where: str, state: EngineState, order: Mapping[str, list[str]], entries: Mapping[str, bytes]
) -> EngineState:
    """``state`` with each region's entries decoded from the keyed records, in stored order."""
    from regio.content import Entry

    dec = msgspec.msgpack.Decoder(Entry)
    regions = []
    for region in state.window.regions:
        ids = order.get(region.name, [])
        missing = [i for i in ids if f"{region.name}/{i}" not in entries]
        if missing:
            raise SessionDamagedError(
                f"{where}: the stored window lacks entries {missing[:3]} of region "
                f"{region.name!r}; the session is damaged, restore it from a file save"
            )
        items = [dec.decode(entries[f"{region.name}/{i}"]) for i in ids]
        regions.append(msgspec.structs.replace(region, entries=items))
    return msgspec.structs.replace(
        state, window=msgspec.structs.replace(state.window, regions=regions)
    )


def read_head(head: bytes) -> _Head | None:
    """The stored ``head`` decoded once per load (``None``: not a head map but the oldest
    layout, the whole state)."""
    try:
        return msgspec.msgpack.decode(head, type=_Head)
    except DECODE_ERRORS:
        return None


#: What decoding a damaged session raises: damaged bytes decode to anything, such as a list of
#: another length (``zip(strict=True)``), a missing key or a value of another type.
_DAMAGE: tuple[type[Exception], ...] = (*DECODE_ERRORS, ValueError, KeyError, TypeError, IndexError)

#: :func:`decode_session`'s default ``wrapped``: the head is not decoded yet.
_UNREAD: Any = object()


def decode_session(
    where: str,
    head: bytes,
    transcript: Sequence[bytes],
    ledger: Sequence[bytes],
    entries: Mapping[str, bytes] | None = None,
    *,
    lazy: bool = False,
    originals: StoredOriginals | None = None,
    wrapped: _Head | None = _UNREAD,
) -> EngineState:
    """The :class:`regio.persistence._statefile.EngineState` of stored parts (a head of
    :data:`HEAD_FORMAT` with its keyed window ``entries``, or an older head holding the whole
    window). With ``lazy`` its transcript is left empty (the records are decoded on first use:
    :func:`regio.persistence.store.lazy.lazy_transcript`); with ``originals`` the relief originals
    of a ``regio.session-head/6`` head are read from it on demand, else from ``entries``;
    ``wrapped``: the head as :func:`read_head` decoded it (decoded here when not given). Raises
    :class:`SessionStoreError` naming ``where`` when they are not a regio session."""
    from regio.persistence._statefile import READ_FORMATS, EngineState
    from regio.session._transcript import TranscriptRecord
    from regio.session._usage import UsageRecord

    from .originals import stored_originals

    try:
        if wrapped is _UNREAD:
            wrapped = read_head(head)
        if wrapped is not None and wrapped.format not in HEAD_READ_FORMATS:
            raise SessionStoreError(
                f"{where}: session head format {wrapped.format!r} is not one of "
                f"{', '.join(HEAD_READ_FORMATS)}; it was written by another regio version"
            )
        raw = bytes(wrapped.state) if wrapped is not None else head
        state = msgspec.msgpack.decode(raw, type=EngineState)
        t_dec = msgspec.msgpack.Decoder(TranscriptRecord)
        l_dec = msgspec.msgpack.Decoder(UsageRecord)
        records = [] if lazy else [t_dec.decode(r) for r in transcript]
        usage = [l_dec.decode(r) for r in ledger]
        if wrapped is not None:
            index: BlockIndex | None
            order, index = wrapped.order, wrapped.request
            if wrapped.lists is not None:
                state, order, index = _parts4_of(where, state, wrapped, entries or {})
            elif wrapped.parts is not None:
                state, order, index = _parts_of(
                    where, state, wrapped.parts, entries or {}, wrapped.layouts
                )
            state = _window_of(where, state, order, entries or {})
            if index is not None and state.last_request is not None:
                request = request_of(where, state.last_request, index, entries or {})
                state = msgspec.structs.replace(state, last_request=request)
            state = stored_originals(where, state, wrapped, entries or {}, originals)
    except SessionStoreError:
        raise
    except _DAMAGE as exc:
        raise SessionDamagedError(
            f"{where}: the stored session is damaged, not a regio session any more "
            f"({type(exc).__name__}: {exc}); the store is unchanged. Restore it from a backup "
            "or a file save (Engine.save), or delete it"
        ) from exc
    if state.format not in READ_FORMATS:
        raise SessionStoreError(
            f"{where}: state format {state.format!r} is not one of {', '.join(READ_FORMATS)}; "
            "it was written by another regio version"
        )
    return msgspec.structs.replace(state, transcript=records, ledger=usage)
