"""The canonical transcript: an append-only log of everything that happened.

The prompt view (the window's regions, laid out) is shaped by eviction, compaction, clearing
and reclaim; the transcript is not. Every conversation message, region write, release, clear
and compaction adds a :class:`TranscriptRecord`; nothing is ever removed or edited, so the
full history stays available after the view has shrunk (only the prompt view is
compacted; the full transcript is kept).

A loaded session's transcript may be decoded lazily: the records stored before the load are
``pending`` (a function that decodes them, and their count; optionally ``pending_encoded``, the
records as a save writes them) until something reads them (the
records, the messages, ``context_restore`` looking up a result by call id); appending and
counting never decode them, so a load and the turns after it cost what the window needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import attrs
import msgspec

from regio.content import Entry, Message, ToolResult

__all__ = ["RecordKind", "Transcript", "TranscriptRecord"]

RecordKind = Literal["message", "write", "release", "clear", "compaction"]


class TranscriptRecord(msgspec.Struct, frozen=True):
    """One log record.

    * ``seq``: position in the log (0-based); ``turn``: the window's turn index;
    * ``kind``: ``message`` (a conversation message; ``entry`` is the admitted entry),
      ``write`` (a region write; ``entry``), ``release`` / ``clear`` (``ids`` removed from the
      view), ``compaction`` (``ids`` replaced by the summary ``entry``);
    * ``region``: the region concerned; ``at``: the engine clock's time (seconds).
    """

    seq: int
    turn: int
    kind: RecordKind
    region: str
    entry: Entry | None = None
    ids: tuple[str, ...] = ()
    at: float = 0.0


@attrs.define(eq=False)
class Transcript:
    """Append-only list of :class:`TranscriptRecord` s. ``pending`` decodes the
    ``pending_count`` records stored before a load (module doc); they come before the ones
    added since, and are decoded once, on first read (the error of a damaged record is raised
    then). An index of its conversation messages by entry id and by the call id of each tool
    result they carry is built from the records on first use (so a loaded transcript has it
    too, after decoding) and extended as records come."""

    _records: list[TranscriptRecord] = attrs.field(factory=list, alias="records")
    _pending: Callable[[], list[TranscriptRecord]] | None = attrs.field(
        default=None, kw_only=True, alias="pending"
    )
    _pending_count: int = attrs.field(default=0, kw_only=True, alias="pending_count")
    _pending_last_turn: int | None = attrs.field(
        default=None, kw_only=True, alias="pending_last_turn"
    )
    _pending_encoded: Callable[[bool], list[Any]] | None = attrs.field(
        default=None, kw_only=True, alias="pending_encoded"
    )
    _indexed: int = attrs.field(default=0, init=False, repr=False)
    _by_entry: dict[str, int] = attrs.field(factory=dict, init=False, repr=False)
    _by_result: dict[str, int] = attrs.field(factory=dict, init=False, repr=False)

    @property
    def records(self) -> list[TranscriptRecord]:
        """Every record, in order (decodes the pending ones on first use)."""
        if self._pending is not None:
            earlier = self._pending()
            if len(earlier) != self._pending_count:
                raise ValueError(
                    f"the stored transcript has {len(earlier)} records, not the "
                    f"{self._pending_count} saved with the session"
                )
            self._records[:0] = earlier
            self._pending, self._pending_count = None, 0
            self._pending_encoded = None
        return self._records

    def for_save(self, msgpack: bool) -> list[Any]:
        """Every record as a save encodes it (JSON, or msgpack when ``msgpack``): pending
        records not yet read come from ``pending_encoded`` (as they were stored, not
        decoded) when it is given, so a save never fails on a record nobody read."""
        if self._pending is not None and self._pending_encoded is not None:
            return self._pending_encoded(msgpack) + self._records
        return list(self.records)

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
    ) -> TranscriptRecord:
        """Append one record and return it."""
        record = TranscriptRecord(
            seq=len(self),
            turn=turn,
            kind=kind,
            region=region,
            entry=entry,
            ids=tuple(ids),
            at=at,
        )
        self._records.append(record)
        return record

    def __len__(self) -> int:
        return self._pending_count + len(self._records)

    def _catch_up(self) -> None:
        for i in range(self._indexed, len(self.records)):
            entry = self.records[i].entry
            if self.records[i].kind != "message" or entry is None:
                continue
            self._by_entry[entry.id] = i
            for b in entry.blocks:
                if isinstance(b, ToolResult):
                    self._by_result[b.tool_use_id] = i
        self._indexed = len(self.records)

    def message(self, entry_id: str) -> Entry | None:
        """The conversation message admitted as entry ``entry_id`` (the last one with that id;
        ``None``: none). O(1) amortized."""
        self._catch_up()
        i = self._by_entry.get(entry_id)
        return self.records[i].entry if i is not None else None

    def tool_result(self, call_id: str) -> ToolResult | None:
        """The tool result of call ``call_id`` as the conversation admitted it (the last
        message carrying one; ``None``: none). O(1) amortized."""
        self._catch_up()
        i = self._by_result.get(call_id)
        entry = self.records[i].entry if i is not None else None
        for b in entry.blocks if entry is not None else ():
            if isinstance(b, ToolResult) and b.tool_use_id == call_id:
                return b
        return None

    def messages(self) -> list[Entry]:
        """Every conversation message ever admitted, in order (the full conversation log)."""
        return [r.entry for r in self.records if r.kind == "message" and r.entry is not None]

    def new_items(self, turn: int) -> list[Entry]:
        """The conversation messages admitted in ``turn``, in order (from the log, never from
        the view). Records are in turn order, so this walks back from the end and decodes the
        stored records of a lazy load only when ``turn`` can reach into them (or when the load
        did not say which turn the stored records end with)."""
        tail = self._records
        last = self._pending_last_turn  # the turn of the last stored record (None: unknown)
        if self._pending is not None and (last is None or last >= turn):
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
