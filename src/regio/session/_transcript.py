"""The canonical transcript: an append-only log of everything that happened.

The prompt view (the window's regions, laid out) is shaped by eviction, compaction, clearing
and reclaim; the transcript is not. Every conversation message, region write, release, clear
and compaction adds a :class:`TranscriptRecord`; nothing is ever removed or edited, so the
full history stays available after the view has shrunk (only the prompt view is
compacted; the full transcript is kept).

A loaded session's transcript may be decoded lazily: the records stored before the load are
``stored`` (a :class:`regio.session._stored.StoredRecords`: a function that decodes them,
their count, optionally the records as a save writes them) until something reads them (the
records, the messages, ``context_restore`` looking up a result by call id); appending and
counting never decode them, so a load and the turns after it cost what the window needs. A
loader that can also decode one stored record (``StoredRecords.one``) and give the turn of
each (``StoredRecords.turns``) lets :meth:`Transcript.message` with a ``turn`` decode only that
turn's stored records (the summarizer's originals after a load,
:func:`regio.compaction.relief._originals.with_originals`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs
import msgspec

from regio.content import Entry, Message, ToolResult
from regio.regions.simple import PARKED_STUB

if TYPE_CHECKING:
    from ._stored import StoredRecords

__all__ = ["RecordKind", "Transcript", "TranscriptRecord"]

RecordKind = Literal["message", "write", "release", "clear", "compaction"]


class TranscriptRecord(msgspec.Struct, frozen=True):
    """One log record.

    * ``seq``: position in the log (0-based); ``turn``: the window's turn index;
    * ``kind``: ``message`` (a conversation message; ``entry`` is the admitted entry),
      ``write`` (a region write; ``entry``), ``release`` / ``clear`` (``ids`` removed from the
      view), ``compaction`` (``ids`` replaced by the summary ``entry``);
    * ``region``: the region concerned; ``at``: the engine clock's time (seconds);
    * ``kept``: of a ``message``, the call ids of its tool results that the relief chain
      shortened on admission (trimmed to ``max_result_tokens`` or routed) after keeping the
      result as received as a relief original (``Engine.book.relief.originals``): ``entry``
      holds them shortened, so the original is the only full copy and a missing one is an
      error, never this entry's result (:func:`regio.compaction.relief._originals.restore`). Empty
      in
      records saved before regio of 2026-12-01 stored it.
    """

    seq: int
    turn: int
    kind: RecordKind
    region: str
    entry: Entry | None = None
    ids: tuple[str, ...] = ()
    at: float = 0.0
    kept: tuple[str, ...] = ()


@attrs.define(eq=False)
class Transcript:
    """Append-only list of :class:`TranscriptRecord` s. ``stored`` holds the records stored
    before a load (module doc); they come before the ones added since, and are decoded once,
    on first read (the error of a damaged record is raised then). Its ``one`` (position ->
    that stored record, decoded alone) and ``turns`` (-> the turn of every stored record, in
    order) are optional; with both, :meth:`message` given a ``turn`` decodes only the stored
    records of that turn. An index of
    its conversation messages by entry id and by the call id of each tool result they carry is
    built from the records on first use (the records added since a load without decoding the
    stored ones; those when a lookup needs them) and extended as records come."""

    _records: list[TranscriptRecord] = attrs.field(factory=list, alias="records")
    _pending: StoredRecords[TranscriptRecord] | None = attrs.field(
        default=None, kw_only=True, alias="stored"
    )
    #: the records stored before the load (positions ``0 .. _stored - 1``; fixed)
    _stored: int = attrs.field(default=0, init=False, repr=False)
    _stored_indexed: bool = attrs.field(default=True, init=False, repr=False)
    #: positions ``_stored .. _indexed - 1`` are in the index
    _indexed: int = attrs.field(default=0, init=False, repr=False)
    _by_entry: dict[str, int] = attrs.field(factory=dict, init=False, repr=False)
    _by_result: dict[str, int] = attrs.field(factory=dict, init=False, repr=False)
    #: stored records decoded one by one (``pending_one``), dropped when all are decoded
    _one: dict[int, TranscriptRecord] = attrs.field(factory=dict, init=False, repr=False)
    _turns: Sequence[int] | None = attrs.field(default=None, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._stored = self._indexed = self._pending_count
        self._stored_indexed = self._stored == 0

    @property
    def _pending_count(self) -> int:
        return self._pending.count if self._pending is not None else 0

    @property
    def records(self) -> list[TranscriptRecord]:
        """Every record, in order (decodes the pending ones on first use)."""
        if self._pending is not None:
            self._records[:0] = self._pending.all("transcript")
            self._pending = None
            self._one, self._turns = {}, None
        return self._records

    def for_save(self, msgpack: bool) -> list[Any]:
        """Every record as a save encodes it (JSON, or msgpack when ``msgpack``): pending
        records not yet read come from ``StoredRecords.encoded`` (as they were stored, not
        decoded) when it is given, so a save never fails on a record nobody read."""
        if self._pending is not None and self._pending.encoded is not None:
            return self._pending.encoded(msgpack) + self._records
        return list(self.records)

    def forget_stored(self) -> int:
        """Give up the records stored before the load, unread (their store lost them:
        :mod:`regio.persistence._lostparts`); the records added since stay, with their ``seq``.
        Returns how many were given up."""
        lost = self._pending_count
        if self._pending is None:
            return 0
        self._pending, self._one, self._turns = None, {}, None
        self._stored = self._indexed = 0
        self._stored_indexed = True
        self._by_entry, self._by_result = {}, {}
        return lost

    @property
    def decoded(self) -> bool:
        """Whether every record is in memory (no pending records left to decode)."""
        return self._pending is None

    def since(self, start: int) -> list[TranscriptRecord]:
        """The records from position ``start`` on (pending ones are decoded only when
        ``start`` reaches into them)."""
        if start >= self._pending_count:
            return self._records[start - self._pending_count :]
        return self.records[start:]

    def add(
        self,
        kind: RecordKind,
        region: str,
        *,
        turn: int,
        entry: Entry | None = None,
        ids: Iterable[str] = (),
        at: float = 0.0,
        kept: Iterable[str] = (),
    ) -> TranscriptRecord:
        """Append one record (fields as :class:`TranscriptRecord`) and return it."""
        record = TranscriptRecord(
            seq=len(self),
            turn=turn,
            kind=kind,
            region=region,
            entry=entry,
            ids=tuple(ids),
            at=at,
            kept=tuple(kept),
        )
        self._records.append(record)
        return record

    def __len__(self) -> int:
        return self._pending_count + len(self._records)

    def _record(self, i: int) -> TranscriptRecord:
        """The record at position ``i`` (a stored one is decoded alone when it can be)."""
        if self._pending is None:
            return self._records[i]
        if i >= self._pending_count:
            return self._records[i - self._pending_count]
        if self._pending.one is None:
            return self.records[i]
        record = self._one.get(i)
        if record is None:
            record = self._one[i] = self._pending.one(i)
        return record

    def _index(self, i: int, record: TranscriptRecord, newest: bool) -> None:
        """Index ``record`` at position ``i``; ``newest``: over what is indexed already (else
        only where nothing is: an earlier stored record never hides a later one)."""
        entry = record.entry
        if record.kind != "message" or entry is None:
            return
        if newest or entry.id not in self._by_entry:
            self._by_entry[entry.id] = i
        for b in entry.blocks:
            if isinstance(b, ToolResult) and (newest or b.tool_use_id not in self._by_result):
                self._by_result[b.tool_use_id] = i

    def _catch_up(self, *, stored: bool = True) -> None:
        """Index the records added since the last call (never decoding a stored one), then,
        with ``stored``, the stored records (decoding them), newest first."""
        for i in range(self._indexed, len(self)):
            self._index(i, self._record(i), True)
        self._indexed = len(self)
        if stored and not self._stored_indexed:
            records = self.records
            for i in range(self._stored - 1, -1, -1):
                self._index(i, records[i], False)
            self._stored_indexed = True

    def _in_stored_turn(self, entry_id: str, turn: int) -> int | None:
        """The position of the last stored message ``entry_id`` of ``turn``, decoding only
        that turn's stored records (``None``: none, or the loader cannot decode records one by
        one)."""
        pending = self._pending
        if pending is None or pending.one is None or pending.turns is None:
            return None
        if self._turns is None:
            self._turns = pending.turns()
        turns = self._turns
        for i in range(bisect_right(turns, turn) - 1, bisect_left(turns, turn) - 1, -1):
            record = self._record(i)
            entry = record.entry
            if record.kind == "message" and entry is not None and entry.id == entry_id:
                return i
        return None

    def message(self, entry_id: str, turn: int | None = None) -> Entry | None:
        """The conversation message admitted as entry ``entry_id`` (the last one with that id;
        ``None``: none). O(1) amortized. ``turn``: the turn it was admitted in (``Entry.turn``),
        so that after a lazy load only that turn's stored records are decoded (entry ids are
        unique in a session; a message not found there is looked up as without ``turn``)."""
        record = self.message_record(entry_id, turn)
        return record.entry if record is not None else None

    def message_record(self, entry_id: str, turn: int | None = None) -> TranscriptRecord | None:
        """The record of :meth:`message` (``None``: none), same cost."""
        i = self._message_position(entry_id, turn)
        return self._record(i) if i is not None else None

    def _message_position(self, entry_id: str, turn: int | None) -> int | None:
        """The position of :meth:`message_record` (``None``: none), same cost."""
        self._catch_up(stored=False)
        i = self._by_entry.get(entry_id)
        if i is None and not self._stored_indexed:
            i = self._in_stored_turn(entry_id, turn) if turn is not None else None
            if i is not None:
                return i
            self._catch_up()
            i = self._by_entry.get(entry_id)
        return i

    def tool_result(self, call_id: str) -> ToolResult | None:
        """The tool result of call ``call_id`` as the conversation admitted it (the last
        message carrying one; ``None``: none). O(1) amortized."""
        record = self.result_record(call_id)
        entry = record.entry if record is not None else None
        for b in entry.blocks if entry is not None else ():
            if isinstance(b, ToolResult) and b.tool_use_id == call_id:
                return b
        return None

    def result_record(self, call_id: str) -> TranscriptRecord | None:
        """The record of the last conversation message carrying a result of ``call_id``
        (``None``: none). O(1) amortized."""
        self._catch_up(stored=False)
        i = self._by_result.get(call_id)
        if i is None and not self._stored_indexed:
            self._catch_up()
            i = self._by_result.get(call_id)
        return self._record(i) if i is not None else None

    def result_turn(self, call_id: str) -> int | None:
        """The turn of the last conversation message carrying a result of ``call_id``
        (``None``: none). O(1) amortized."""
        record = self.result_record(call_id)
        return record.turn if record is not None else None

    def parked_before(self, stub: str, entry_id: str, turn: int | None = None) -> list[Entry]:
        """The outputs a ``park`` capture wrote for the conversation message admitted as entry
        ``entry_id`` (``turn``: its turn, as for :meth:`message`) with ``stub`` as what the
        conversation keeps in their place (``Entry.meta`` :data:`regio.regions.PARKED_STUB`),
        in the order they were written; each carries its call's id as the client sent it
        (:data:`regio.regions.PARKED_CALL`, absent for an observation). A capture records the
        writes of a message's moves just before the message, so this walks back from the
        message to the message before it (a message that opens a turn, such as a user message
        holding tool results and text, comes after writes of the turn before). The message is
        found as :meth:`message` finds it; after a lazy load only the records walked are
        decoded when the loader decodes records one by one. Empty when there is no such
        message."""
        i = self._message_position(entry_id, turn)
        found: list[Entry] = []
        while i is not None and i > 0:
            i -= 1
            record = self._record(i)
            if record.kind == "message":
                break
            entry = record.entry
            if record.kind == "write" and entry is not None and entry.meta.get(PARKED_STUB) == stub:
                found.append(entry)
        return found[::-1]

    def messages(self) -> list[Entry]:
        """Every conversation message ever admitted, in order (the full conversation log)."""
        return [r.entry for r in self.records if r.kind == "message" and r.entry is not None]

    def new_items(self, turn: int) -> list[Entry]:
        """The conversation messages admitted in ``turn``, in order (from the log, never from
        the view). Records are in turn order, so this walks back from the end and decodes the
        stored records of a lazy load only when ``turn`` can reach into them (or when the load
        did not say which turn the stored records end with)."""
        tail = self._records
        pending = self._pending
        last = pending.last_turn if pending is not None else None  # None: unknown
        if pending is not None and (last is None or last >= turn):
            tail = self.records  # the turn may start among the stored records
        i = len(tail)
        while i and tail[i - 1].turn >= turn:
            i -= 1
        return [
            r.entry
            for r in tail[i:]
            if r.kind == "message" and r.turn == turn and r.entry is not None
        ]

    def export(self) -> list[Message]:
        """The conversation log as messages (what really happened, uncompacted)."""
        return [e.message for e in self.messages()]
