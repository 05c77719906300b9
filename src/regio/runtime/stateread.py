"""A state file's transcript decoded on first use (``Engine.load``).

:func:`lazy_state_type` is the engine state with its transcript as raw records
(``msgspec.Raw``: checked as well-formed JSON / msgpack and counted, not built into objects);
:func:`split_transcript` turns a decoded one into the state without its transcript and a
:class:`regio.runtime.transcript.Transcript` that decodes the records when they are first read
(the records, the messages, ``context_restore`` looking up a result by call id, a save). The
records are most of a long session's file (a 2,000-turn state: about 90% of the decoding
time), and the window is all a load needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from .errors import RuntimeStateError
from .transcript import Transcript, TranscriptRecord

__all__ = ["lazy_state_type", "split_transcript"]


def _field(info: Any) -> tuple[str, Any, Any] | tuple[str, Any]:
    kind = list[msgspec.Raw] if info.name == "transcript" else info.type
    if info.default is not msgspec.NODEFAULT:
        return info.name, kind, info.default
    if info.default_factory is not msgspec.NODEFAULT:
        return info.name, kind, msgspec.field(default_factory=info.default_factory)
    return info.name, kind


def lazy_state_type(state_type: Any) -> Any:
    """``state_type`` (a msgspec struct with a ``transcript`` list) with the transcript's
    records left raw (module doc)."""
    fields = [_field(info) for info in msgspec.structs.fields(state_type)]
    return msgspec.defstruct(f"Lazy{state_type.__name__}", fields, omit_defaults=True)


def split_transcript(
    lazy: Any, state_type: Any, *, msgpack: bool, source: Path
) -> tuple[Any, Transcript]:
    """``(state, transcript)`` of a decoded :func:`lazy_state_type` value: the
    ``state_type`` value with an empty transcript, and the records decoded on first read (a
    damaged one raises :class:`RuntimeStateError` naming ``source`` then; the window loaded
    is intact)."""
    raws = list(lazy.transcript)
    values = {name: getattr(lazy, name) for name in state_type.__struct_fields__}
    values["transcript"] = []
    state = state_type(**values)

    def decode() -> list[TranscriptRecord]:
        module: Any = msgspec.msgpack if msgpack else msgspec.json
        decoder = module.Decoder(TranscriptRecord)
        try:
            return [decoder.decode(raw) for raw in raws]
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RuntimeStateError(
                f"{source}: a transcript record is damaged ({exc}); the window and the usage "
                "ledger are intact"
            ) from exc

    return state, Transcript(pending=decode, pending_count=len(raws))
