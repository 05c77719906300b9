"""A state file's transcript decoded on first use (``Engine.load``).

:func:`lazy_state_type` is the engine state with its transcript as :class:`RawRecord` s: each
record's fields are checked (a record that is not one refuses the load, naming the file) but
its entry is left raw (``msgspec.Raw``: checked as well-formed JSON / msgpack, not built into
objects). :func:`split_transcript` turns a decoded one into the state without its transcript
and a :class:`regio.session._transcript.Transcript` that decodes the entries when the records are
first read (the records, the messages, ``context_restore`` looking up a result by call id), or
one record at a time where a lookup knows the turn it needs (the records' turns are read at
load; :meth:`regio.session._transcript.Transcript.message`). A
save writes the records it has not read back as they were loaded (converted, not decoded, into
the other format), so saving never decodes them and a damaged entry never fails a save. The
entries are most of a long session's file (a 2,000-turn state: about 90% of the decoding time),
and the window is all a load needs; checking the records' fields costs about a third of
decoding them (measured on a 2,000-turn, 6 MB JSON state: 10 ms against 31 ms).

The transcript is held as :class:`regio.session._stored.StoredRecords`, the one mechanism
behind every record list a load leaves to read on first use.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import msgspec

from regio.content import Entry
from regio.errors import RuntimeStateError
from regio.session._stored import stored_records
from regio.session._transcript import RecordKind, Transcript, TranscriptRecord

__all__ = ["LazyState", "RawRecord", "lazy_state_type", "split_transcript"]

S = TypeVar("S", bound=msgspec.Struct)


class RawRecord(msgspec.Struct, frozen=True):
    """A :class:`TranscriptRecord` as a state file holds it: every field checked, ``entry``
    raw (empty: no entry)."""

    seq: int
    turn: int
    kind: RecordKind
    region: str
    entry: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    ids: tuple[str, ...] = ()
    at: float = 0.0
    kept: tuple[str, ...] = ()


def _field(info: msgspec.structs.FieldInfo) -> tuple[str, Any, Any] | tuple[str, Any]:
    kind = list[RawRecord] if info.name == "transcript" else info.type
    if info.default is not msgspec.NODEFAULT:
        return info.name, kind, info.default
    if info.default_factory is not msgspec.NODEFAULT:
        return info.name, kind, msgspec.field(default_factory=info.default_factory)
    return info.name, kind


def lazy_state_type(state_type: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """``state_type`` (a msgspec struct with a ``transcript`` list) with the transcript's
    records as :class:`RawRecord` s (module doc)."""
    fields = [_field(info) for info in msgspec.structs.fields(state_type)]
    return msgspec.defstruct(f"Lazy{state_type.__name__}", fields, omit_defaults=True)


class LazyState(Protocol):
    """A decoded :func:`lazy_state_type` value: its transcript's records left raw."""

    @property
    def transcript(self) -> Sequence[RawRecord]: ...


def _encodable(raws: list[RawRecord], module: Any | None) -> list[Any]:
    """``raws`` as a save writes them: as loaded (``module`` ``None``, same format), or with
    their entries decoded by ``module`` into plain values (the other format: converted, never
    built into entries); a record loaded without an entry has ``None``."""
    out: list[Any] = []
    for raw in raws:
        if len(raw.entry) and module is None:
            out.append(raw)
            continue
        entry = module.decode(raw.entry) if len(raw.entry) and module is not None else None
        out.append(msgspec.structs.replace(raw, entry=entry))
    return out


def split_transcript(
    lazy: LazyState, state_type: type[S], *, msgpack: bool, source: Path
) -> tuple[S, Transcript]:
    """``(state, transcript)`` of a decoded :func:`lazy_state_type` value: the
    ``state_type`` value with an empty transcript, and the records decoded on first read (a
    damaged entry raises :class:`RuntimeStateError` naming ``source`` then; the window loaded
    is intact) and saved as they were loaded until then."""
    raws: list[RawRecord] = list(lazy.transcript)
    values = {name: getattr(lazy, name) for name in state_type.__struct_fields__}
    values["transcript"] = []
    state = state_type(**values)
    module: Any = msgspec.msgpack if msgpack else msgspec.json

    decoder = module.Decoder(Entry | None)

    def record(raw: RawRecord) -> TranscriptRecord:
        entry = decoder.decode(raw.entry) if len(raw.entry) else None
        return TranscriptRecord(
            raw.seq, raw.turn, raw.kind, raw.region, entry, raw.ids, raw.at, raw.kept
        )

    def damaged(exc: Exception) -> RuntimeStateError:
        return RuntimeStateError(
            f"{source}: a transcript record is damaged ({exc}); the window and the usage "
            "ledger are intact"
        )

    def encoded(to_msgpack: bool) -> list[Any]:
        return _encodable(raws, None if to_msgpack == msgpack else module)

    last_turn = raws[-1].turn if raws else None
    stored = stored_records(
        lambda: raws,
        len(raws),
        record,
        damaged,
        operator.attrgetter("turn"),
        encoded=encoded,
        last_turn=last_turn,
    )
    return state, Transcript(stored=stored)
