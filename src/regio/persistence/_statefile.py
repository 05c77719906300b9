"""The engine state file and saving it (``Engine.save``).

:func:`save_engine` writes an :class:`EngineState` (msgspec) as JSON, or msgpack when the file
name ends in ``.msgpack`` / ``.mpk``: the window (entries, versions, pending compactions,
counters), the layout state, calibration, transcript, usage ledger and compaction bookkeeping,
everything a load (:mod:`regio.persistence._load`) needs to render the same bytes again.

**Atomic, no debris.** A save writes a temporary file in the target's directory, named
``.<target name>.<pid>.<random>.regio-tmp``, fsyncs it, renames it over the target with
``os.replace`` and fsyncs the directory: a crash leaves the previous save or the new one, never
half of one. A failed save removes its temporary. A process killed during a save (``kill -9``)
cannot remove its own; the next save or load of the same target removes every temporary of a
process that no longer runs (and temporaries of older regio versions, ``.<name>.*.tmp``, an hour
after they were written). Temporaries are never read.

Loading is :mod:`regio.persistence._load` (``Engine.load``): a state file is data, never code,
and a corrupt, truncated or foreign file raises :class:`RuntimeStateError`.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from regio.compaction._flush import CompactionBook
from regio.layout import LayoutState, Request, ToolSpec
from regio.regions import WindowState
from regio.session._reliefbook import Originals
from regio.session._state import AdapterCursor
from regio.session._transcript import TranscriptRecord
from regio.session._usage import UsageRecord
from regio.summarizers._protocol import summarizer_limits
from regio.tokens import (
    CalibrationState,
)

from ._lostparts import save_held
from ._savedconfig import ConfigExtras, EngineConfig, engine_config
from ._tempfiles import TEMP_SUFFIX, fsync_dir, remove_stale_temporaries, stale_temporaries

if TYPE_CHECKING:
    from ._engineparts import EngineParts

__all__ = [
    "FORMAT",
    "MAX_STATE_BYTES",
    "MAX_STATE_DEPTH",
    "READ_FORMATS",
    "TEMP_SUFFIX",
    "EngineConfig",
    "EngineState",
    "engine_state",
    "remove_stale_temporaries",
    "save_engine",
    "stale_temporaries",
]

#: Identifies an engine state file of this version's layout: the layout state saved once (as
#: ``last_request.state``), the last request's tools saved (``request_tools``).
FORMAT = "regio.engine/2"

#: The formats :func:`read_state` reads: :data:`FORMAT` and ``regio.engine/1`` (regio before
#: 2026-12: the layout state in both places, no request tools; it loads the same session).
READ_FORMATS = ("regio.engine/1", FORMAT)
MSGPACK_SUFFIXES = (".msgpack", ".mpk")

#: Largest state file :func:`read_state` reads (bytes, 1 GiB); a larger one is refused.
MAX_STATE_BYTES = 1 << 30

#: Deepest nesting of arrays / objects (maps) accepted in a state file. regio's own structures
#: use about 10 levels; the rest is tool-call input and metadata. Checked before decoding.
MAX_STATE_DEPTH = 200


class EngineState(msgspec.Struct, omit_defaults=True):
    """Everything an engine needs to continue (``format`` is :data:`FORMAT`).

    The layout state carried to the next request is saved once, as ``last_request.state``;
    ``layout_state`` holds it only when it is not that one (an engine restored with a layout
    state and no request yet), and files of regio before 2026-12 hold it in both (either
    loads). ``request_tools`` are the tools of the last ``Engine.request(tools=...)``, counted
    as sent again until a request passes others (:class:`regio.session._budget.EngineBudget`);
    files without them load with none. ``beside_tokens`` counts the text the caller sends
    beside the window (``EngineBudget.send_beside``, tokens); files without it load with 0.
    ``layout_tokens``: the most layout overhead a request carried
    (``EngineBudget.layout_tokens``), so a loaded elastic region has the room it had.
    ``last_sent_at`` (clock seconds) and ``last_next_entry``: when the last request was laid out
    and the window's next entry number then (``SessionState``), so a loaded engine still knows
    which tool results no request carried yet (never cut before one does:
    :mod:`regio.compaction._cuts`) and whether the cache expired; files without them load as
    an engine that laid out no request (nothing held back, the cache taken as warm)."""

    format: str
    config: EngineConfig
    window: WindowState
    last_request: Request | None
    last_estimate: int
    last_provider: str
    last_model: str
    overflow_retry: bool
    calibration: CalibrationState
    ledger: list[UsageRecord]
    transcript: list[TranscriptRecord]
    book: CompactionBook
    layout_input: tuple[str | None, LayoutState | None] = (None, None)  # (fingerprint, state)
    layout_state: LayoutState | None = None
    request_tools: list[ToolSpec] = msgspec.field(default_factory=list)
    beside_tokens: int = 0  # EngineBudget.beside_tokens (tokens sent beside the window)
    layout_tokens: int = 0  # EngineBudget.layout_tokens (an elastic region's room leaves it)
    last_sent_at: float | None = None  # SessionState.last_sent_at (clock seconds)
    last_next_entry: int = 0  # SessionState.last_next_entry
    #: Framework adapter name -> its place in the framework's history (files without: none).
    adapters: dict[str, AdapterCursor] = msgspec.field(default_factory=dict)


#: :class:`EngineState` with the transcript's records left raw (decoded on first use).


def saved_layout_state(state: EngineState) -> LayoutState | None:
    """The layout state the next request of ``state`` carries on from (module doc of
    :class:`EngineState`: saved once, as the last request's)."""
    if state.layout_state is not None or state.last_request is None:
        return state.layout_state
    return state.last_request.state


def own_book(book: CompactionBook) -> CompactionBook:
    """A copy of ``book`` that shares nothing mutable with it (tallies, strikes, versions, the
    relief originals: :meth:`regio.session._reliefbook.Originals.detached`), so that each
    engine restored from one loaded state owns its bookkeeping. Reads no stored original."""
    relief = book.relief
    originals = relief.originals
    own = originals.detached() if isinstance(originals, Originals) else Originals(originals)
    stages = {k: msgspec.structs.replace(v) for k, v in relief.stages.items()}
    return msgspec.structs.replace(
        book,
        strikes=dict(book.strikes),
        blocked=list(book.blocked),
        versions=dict(book.versions),
        relief=msgspec.structs.replace(relief, stages=stages, originals=own),
    )


def text_sha256(text: str) -> str:
    """Hex sha256 of the UTF-8 bytes of ``text`` (the blueprint hash of a state)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def engine_state(
    engine: EngineParts, *, transcript: bool = True, msgpack: bool = False, ledger: bool = True
) -> EngineState:
    """The :class:`EngineState` of ``engine`` (what :func:`save_engine` writes, as JSON or
    ``msgpack``: the transcript's records a lazy load has not read are written as loaded,
    never decoded); without ``transcript`` its transcript is left empty (a session store
    appends the new records itself, without decoding the ones a lazily loaded transcript has
    not read yet); without ``ledger`` its usage ledger is left empty too (the same, for the
    usage records). With ``transcript`` the relief originals a store load left to read on
    demand are read (a session store saves them itself, the new ones only)."""
    if transcript:
        originals = engine.book.relief.originals
        assert isinstance(originals, Originals)  # ReliefBook.__post_init__ makes it one
        originals.load_all()
    window, _reserve, max_summary = summarizer_limits(engine.summarizer)
    counter = engine.counter
    last = engine.state.last_request
    if last is not None:
        last = msgspec.structs.replace(last, events=())
    layout_state = engine.state.layout_state
    if last is not None and layout_state == last.state:
        layout_state = None  # saved once, as the last request's
    blueprint_text = engine.options.blueprint_text
    extras = ConfigExtras(
        counter_name=str(getattr(counter, "name", "")),
        chat_format=getattr(counter, "chat_format", None),
        summarizer_window=window,
        summarizer_max_tokens=max_summary,
        blueprint_sha256=text_sha256(blueprint_text) if blueprint_text is not None else None,
    )
    return EngineState(
        format=FORMAT,
        config=engine_config(engine.options, extras),
        window=engine.window.snapshot_state(),
        layout_state=layout_state,
        request_tools=list(engine.budget.request_tools),
        beside_tokens=engine.budget.beside_tokens,
        layout_tokens=engine.budget.layout_tokens,
        last_sent_at=engine.state.last_sent_at,
        last_next_entry=engine.state.last_next_entry,
        adapters=dict(engine.state.adapters),
        layout_input=(engine.state.layout_fingerprint, engine.state.layout_input),
        last_request=last,
        last_estimate=engine.state.last_estimate,
        last_provider=engine.state.last_provider,
        last_model=engine.state.last_model,
        overflow_retry=engine.state.overflow_retry,
        calibration=engine.calibration.to_state(),
        ledger=list(engine.ledger.records) if ledger else [],
        transcript=engine.transcript_log.for_save(msgpack) if transcript else [],
        book=engine.book,
    )


def encode_state(engine: EngineParts, *, msgpack: bool = False) -> bytes:
    """The engine's state as JSON (default) or msgpack bytes."""
    state = engine_state(engine, msgpack=msgpack)
    return msgspec.msgpack.encode(state) if msgpack else msgspec.json.encode(state)


def save_engine(engine: EngineParts, path: str | os.PathLike[str]) -> Path:
    """Write the engine's state to ``path`` atomically (module doc); returns the path. A part
    of a store-loaded engine its store lost since the load is left out with a warning
    (:mod:`regio.persistence._lostparts`)."""
    target = Path(path)
    msgpack = target.suffix.lower() in MSGPACK_SUFFIXES
    data = save_held(engine, lambda: encode_state(engine, msgpack=msgpack))
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=target.parent
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)
    return target
