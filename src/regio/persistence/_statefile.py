"""Saving and loading an engine (``Engine.save`` / ``Engine.load``).

:func:`save_engine` writes an :class:`EngineState` (msgspec) as JSON, or msgpack when the file
name ends in ``.msgpack`` / ``.mpk``. :func:`load_engine` restores everything: the window
(entries, versions, pending compactions, counters), the layout state, calibration, transcript,
usage ledger and compaction bookkeeping, so a loaded engine renders the same bytes as the one
that was saved.

**Atomic, no debris.** A save writes a temporary file in the target's directory, named
``.<target name>.<pid>.<random>.regio-tmp``, fsyncs it, renames it over the target with
``os.replace`` and fsyncs the directory: a crash leaves the previous save or the new one, never
half of one. A failed save removes its temporary. A process killed during a save (``kill -9``)
cannot remove its own; the next save or load of the same target removes every temporary of a
process that no longer runs (and temporaries of older regio versions, ``.<name>.*.tmp``, an hour
after they were written). Temporaries are never read.

**A state file is data, never code** (trust model). A custom region's hooks (``module:function``)
come only from the blueprint the engine was created with: the state records the sha256 of that
blueprint (``config.blueprint_sha256``), and a state with hooked custom regions loads only when
the caller passes that blueprint (``blueprint=``, whose hash must match) and allows custom hooks;
the hook references written in the state must then equal the blueprint's. The token counter and
the summarizer are code too: a counter named by a known tokenizer (``o200k_base``,
``cl100k_base``, ``heuristic``) is rebuilt, any other must be passed to :func:`load_engine`; the
summarizer defaults to an :class:`ExtractiveSummarizer` with the saved limits.

**Corrupt, truncated or foreign files** raise :class:`RuntimeStateError` naming the file and the
problem, never another exception: not a regular file, larger than :data:`MAX_STATE_BYTES`,
nested deeper than :data:`MAX_STATE_DEPTH`, undecodable, of another format or version, or
decodable but inconsistent (the objects it describes cannot be rebuilt), or a transcript
record without a record's fields; the entries inside the records, decoded on first read
(:mod:`regio.persistence._stateread`), raise it then (a save writes them back as loaded, so a save
never fails for them). A calibration
factor outside its range is reset with a :class:`regio.tokens.CalibrationResetWarning` naming
the file (the factor is learned again; the session is not lost for it).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from regio.compaction._flush import CompactionBook
from regio.errors import RegioError, RuntimeStateError
from regio.layout import LayoutState, Request, ToolSpec
from regio.regions import Window, WindowState
from regio.regions.registry import KIND_ALIASES
from regio.regions.state import RegionState
from regio.relief._book import Originals
from regio.session._state import AdapterCursor
from regio.session._stored import StoredRecords
from regio.session._transcript import Transcript, TranscriptRecord
from regio.session._usage import PriceLookup, UsageLedger, UsageRecord
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers._protocol import summarizer_limits
from regio.tokens import (
    COUNTER_NAMES,
    Calibration,
    CalibrationResetWarning,
    CalibrationState,
    get_counter,
)

from ._lostparts import save_held
from ._savedconfig import ConfigExtras, EngineConfig, config_options, engine_config
from ._stateread import lazy_state_type, split_transcript
from ._statescan import max_json_depth, max_msgpack_depth
from ._tempfiles import TEMP_SUFFIX, fsync_dir, remove_stale_temporaries, stale_temporaries

__all__ = [
    "FORMAT",
    "MAX_STATE_BYTES",
    "MAX_STATE_DEPTH",
    "READ_FORMATS",
    "TEMP_SUFFIX",
    "EngineConfig",
    "EngineState",
    "engine_state",
    "load_engine",
    "read_state",
    "remove_stale_temporaries",
    "restore_engine",
    "save_engine",
    "stale_temporaries",
]

#: Identifies an engine state file of this version's layout: the layout state saved once (as
#: ``last_request.state``), the last request's tools saved (``request_tools``).
FORMAT = "regio.engine/2"

#: The formats :func:`read_state` reads: :data:`FORMAT` and ``regio.engine/1`` (regio before
#: 2026-12: the layout state in both places, no request tools; it loads the same session).
READ_FORMATS = ("regio.engine/1", FORMAT)
_MSGPACK_SUFFIXES = (".msgpack", ".mpk")

#: Largest state file :func:`read_state` reads (bytes, 1 GiB); a larger one is refused.
MAX_STATE_BYTES = 1 << 30

#: Deepest nesting of arrays / objects (maps) accepted in a state file. regio's own structures
#: use about 10 levels; the rest is tool-call input and metadata. Checked before decoding.
MAX_STATE_DEPTH = 200

_HOOKS = ("render", "on_write", "on_overflow")


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
    (``EngineBudget.layout_tokens``), so a loaded elastic region has the room it had."""

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
    #: Framework adapter name -> its place in the framework's history (files without: none).
    adapters: dict[str, AdapterCursor] = msgspec.field(default_factory=dict)


#: :class:`EngineState` with the transcript's records left raw (decoded on first use).
_LAZY_STATE = lazy_state_type(EngineState)


def saved_layout_state(state: EngineState) -> LayoutState | None:
    """The layout state the next request of ``state`` carries on from (module doc of
    :class:`EngineState`: saved once, as the last request's)."""
    if state.layout_state is not None or state.last_request is None:
        return state.layout_state
    return state.last_request.state


def own_book(book: CompactionBook) -> CompactionBook:
    """A copy of ``book`` that shares nothing mutable with it (tallies, strikes, versions, the
    relief originals: :meth:`regio.relief._book.Originals.detached`), so that each
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
    engine: Any, *, transcript: bool = True, msgpack: bool = False, ledger: bool = True
) -> EngineState:
    """The :class:`EngineState` of ``engine`` (what :func:`save_engine` writes, as JSON or
    ``msgpack``: the transcript's records a lazy load has not read are written as loaded,
    never decoded); without ``transcript`` its transcript is left empty (a session store
    appends the new records itself, without decoding the ones a lazily loaded transcript has
    not read yet); without ``ledger`` its usage ledger is left empty too (the same, for the
    usage records). With ``transcript`` the relief originals a store load left to read on
    demand are read (a session store saves them itself, the new ones only)."""
    if transcript:
        engine.book.relief.originals.load_all()
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


def encode_state(engine: Any, *, msgpack: bool = False) -> bytes:
    """The engine's state as JSON (default) or msgpack bytes."""
    state = engine_state(engine, msgpack=msgpack)
    return msgspec.msgpack.encode(state) if msgpack else msgspec.json.encode(state)


def save_engine(engine: Any, path: str | os.PathLike[str]) -> Path:
    """Write the engine's state to ``path`` atomically (module doc); returns the path. A part
    of a store-loaded engine its store lost since the load is left out with a warning
    (:mod:`regio.persistence._lostparts`)."""
    target = Path(path)
    msgpack = target.suffix.lower() in _MSGPACK_SUFFIXES
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


# ----- reading -----------------------------------------------------------------------------
def _read_bytes(source: Path, max_bytes: int) -> bytes:
    try:
        info = source.stat()
    except OSError as exc:
        raise RuntimeStateError(f"{source}: cannot read the state file ({exc.strerror})") from exc
    if not stat.S_ISREG(info.st_mode):
        raise RuntimeStateError(
            f"{source}: not a regular file; a state file is a file written by Engine.save()"
        )
    if info.st_size > max_bytes:
        raise RuntimeStateError(
            f"{source}: {info.st_size:,} bytes is over the state file limit of {max_bytes:,}"
        )
    try:
        with source.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise RuntimeStateError(f"{source}: cannot read the state file ({exc.strerror})") from exc
    if len(data) > max_bytes:
        raise RuntimeStateError(f"{source}: the state file grew over {max_bytes:,} bytes")
    return data


def read_state(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_STATE_BYTES,
    max_depth: int = MAX_STATE_DEPTH,
    state_type: Any = EngineState,
) -> Any:
    """Decode an engine state file (JSON or msgpack by suffix). Raises
    :class:`RuntimeStateError` naming the file for anything that is not an engine state
    (module doc); ``max_bytes`` / ``max_depth`` override the limits; ``state_type`` is
    :class:`EngineState` or its :func:`regio.persistence._stateread.lazy_state_type`."""
    source = Path(path)
    data = _read_bytes(source, max_bytes)
    if not data:
        raise RuntimeStateError(f"{source}: the state file is empty; save one with Engine.save()")
    msgpack = source.suffix.lower() in _MSGPACK_SUFFIXES
    depth = max_msgpack_depth(data, max_depth) if msgpack else max_json_depth(data, max_depth)
    if depth > max_depth:
        raise RuntimeStateError(
            f"{source}: values nested more than {max_depth} levels deep; not a state written "
            "by Engine.save()"
        )
    try:
        if msgpack:
            state = msgspec.msgpack.decode(data, type=state_type)
        else:
            state = msgspec.json.decode(data, type=state_type)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise RuntimeStateError(
            f"{source}: not a regio engine state ({exc}); save one with Engine.save()"
        ) from exc
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        raise RuntimeStateError(
            f"{source}: not a regio engine state ({type(exc).__name__}: {exc})"
        ) from exc
    if state.format not in READ_FORMATS:
        raise RuntimeStateError(
            f"{source}: state format {state.format!r} is not one of {', '.join(READ_FORMATS)}; "
            "it was written by another regio version"
        )
    return state


def _counter(source: Path, config: EngineConfig, given: Any) -> Any:
    if given is not None:
        return given
    name = config.tokenizer or config.counter_name
    if name in COUNTER_NAMES:
        return get_counter(
            name, chat_format=config.chat_format or "openai_chat", model=config.model
        )
    raise RuntimeStateError(
        f"{source}: the saved engine used token counter {config.counter_name!r}, which regio "
        "cannot rebuild; pass token_counter= to Engine.load"
    )


def _blueprint_hash(source: Path, config: EngineConfig) -> str | None:
    """The saved blueprint's hash, checked against the saved text."""
    text, saved = config.blueprint_text, config.blueprint_sha256
    if text is None:
        if saved is not None:
            raise RuntimeStateError(f"{source}: a blueprint hash is saved without its blueprint")
        return None
    actual = text_sha256(text)
    if saved is not None and saved != actual:
        raise RuntimeStateError(
            f"{source}: the saved blueprint does not match its saved sha256 (the file was "
            "edited or damaged)"
        )
    return actual


def _given_blueprint(source: Path, config: EngineConfig, blueprint: Any) -> Any:
    """The caller's blueprint, loaded, checked to be the one the engine was created with."""
    from regio.blueprint import Blueprint, dump_blueprint, load_blueprint

    saved = _blueprint_hash(source, config)
    if saved is None:
        raise RuntimeStateError(
            f"{source}: the engine was not created from a blueprint, so blueprint= cannot "
            "apply; load without it"
        )
    try:
        if isinstance(blueprint, Blueprint):
            bp = blueprint
        else:
            bp = load_blueprint(blueprint if isinstance(blueprint, Path) else str(blueprint))
        given = text_sha256(dump_blueprint(bp, inline_seeds=True))
    except RegioError as exc:
        raise RuntimeStateError(f"{source}: the blueprint given to load is invalid: {exc}") from exc
    if given != saved:
        raise RuntimeStateError(
            f"{source}: saved with blueprint sha256 {saved[:12]}..., but the blueprint given "
            f"hashes to {given[:12]}...; pass the blueprint the engine was created with"
        )
    return bp


def _hooks_of(options: dict[str, Any]) -> dict[str, str]:
    return {h: options[h] for h in _HOOKS if options.get(h)}


def _trusted_regions(
    source: Path, state: WindowState, blueprint: Any, allow_custom_hooks: bool
) -> list[RegionState]:
    """``state.regions`` with every custom region's hooks taken from the trusted blueprint
    (module doc, trust model); the state's own hook references never select code."""
    specs = {spec.name: spec for spec in blueprint.regions} if blueprint is not None else {}
    if blueprint is not None:
        declared = [
            (spec.name, KIND_ALIASES.get(spec.kind, spec.kind)) for spec in blueprint.regions
        ]
        saved = [(rs.name, KIND_ALIASES.get(rs.kind, rs.kind)) for rs in state.regions]
        if declared != saved:
            raise RuntimeStateError(
                f"{source}: the saved regions {saved} are not the blueprint's {declared}"
            )
    regions: list[RegionState] = []
    for rs in state.regions:
        if rs.kind != "custom":
            regions.append(rs)
            continue
        options = {k: v for k, v in rs.options.items() if k != "allow_custom_hooks"}
        named = _hooks_of(options)
        if named:
            where = f"{source}: custom region {rs.name!r} has hooks ({', '.join(named)})"
            if blueprint is None:
                raise RuntimeStateError(
                    f"{where}; hooks come only from the blueprint the engine was created with, "
                    "never from a state file: pass blueprint= and allow_custom_hooks=True"
                )
            if not allow_custom_hooks:
                raise RuntimeStateError(
                    f"{where}; pass allow_custom_hooks=True if you trust the blueprint's code"
                )
            spec = specs.get(rs.name)
            trusted = {h: getattr(spec, h, None) for h in _HOOKS} if spec is not None else {}
            trusted = {h: ref for h, ref in trusted.items() if ref}
            if spec is None or spec.kind != "custom" or trusted != named:
                raise RuntimeStateError(
                    f"{where} that the blueprint does not declare ({trusted or 'none'}); the "
                    "state file was edited: refusing to import code it names"
                )
        regions.append(msgspec.structs.replace(rs, options=options))
    return regions


def _calibration(source: Path, state: CalibrationState) -> Calibration:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CalibrationResetWarning)
        calibration = Calibration.from_state(state, source=str(source), reset_invalid=True)
    for warning in caught:
        warnings.warn(warning.message, CalibrationResetWarning, stacklevel=4)
    return calibration


def _build(
    cls: Any,
    source: Path,
    state: EngineState,
    options: dict[str, Any],
    blueprint: Any,
    allow_custom_hooks: bool,
) -> Any:
    config = state.config
    counter = _counter(source, config, options.pop("token_counter"))
    transcript = options.pop("transcript", None)
    if transcript is None:
        transcript = Transcript(list(state.transcript))
    _blueprint_hash(source, config)
    trusted = _given_blueprint(source, config, blueprint) if blueprint is not None else None
    regions = _trusted_regions(source, state.window, trusted, allow_custom_hooks)
    window = Window.from_state(
        msgspec.structs.replace(state.window, regions=regions),
        counter=counter,
        allow_custom_hooks=allow_custom_hooks and trusted is not None,
    )
    if options.get("summarizer") is None:
        options["summarizer"] = ExtractiveSummarizer(
            context_window=config.summarizer_window, max_summary_tokens=config.summarizer_max_tokens
        )
    prices = options.pop("prices")
    usage = options.pop("usage", None)
    ledger = UsageLedger(prices=prices) if prices is not None else UsageLedger()
    if usage is None:
        ledger.records = list(state.ledger)
    else:
        ledger = UsageLedger(prices=ledger.prices, stored=usage)
    engine = cls(
        window=window,
        **options,
        **config_options(config, str(source)),
        calibration=_calibration(source, state.calibration),
        ledger=ledger,
        transcript_log=transcript,
        book=own_book(state.book),
        layout_state=saved_layout_state(state),
        layout_fingerprint=state.layout_input[0],
        layout_input=state.layout_input[1],
        last_request=state.last_request,
        last_estimate=state.last_estimate,
        last_provider=state.last_provider,
        last_model=state.last_model,
        overflow_retry=state.overflow_retry,
        adapters=dict(state.adapters),
        allow_custom_hooks=allow_custom_hooks and trusted is not None,
    )
    engine.budget.request_tools = tuple(state.request_tools)
    engine.budget.beside_tokens = state.beside_tokens
    engine.budget.layout_tokens = state.layout_tokens
    engine.budget.reserve(state.last_provider or None, state.last_model or None)  # same room
    return engine


def load_engine(
    cls: Any,
    path: str | os.PathLike[str],
    *,
    summarizer: Any = None,
    token_counter: Any = None,
    allow_custom_hooks: bool = False,
    clock: Callable[[], float] | None = None,
    prices: PriceLookup | None = None,
    blueprint: Any = None,
) -> Any:
    """Rebuild an engine of class ``cls`` from ``path`` (see module doc).

    ``blueprint`` (a path, YAML text or :class:`regio.blueprint.Blueprint`) is the blueprint
    the engine was created with; it is needed, with ``allow_custom_hooks=True``, only when a
    custom region has hooks, and when given its hash must match the saved one. Stale
    temporaries of earlier saves are removed first. Raises :class:`RuntimeStateError` naming
    the file for every state that cannot be loaded (module doc).
    """
    source = Path(path)
    remove_stale_temporaries(source)
    lazy = read_state(source, state_type=_LAZY_STATE)
    msgpack = source.suffix.lower() in _MSGPACK_SUFFIXES
    state, transcript = split_transcript(lazy, EngineState, msgpack=msgpack, source=source)
    return restore_engine(
        cls,
        state,
        transcript=transcript,
        source=source,
        summarizer=summarizer,
        token_counter=token_counter,
        allow_custom_hooks=allow_custom_hooks,
        clock=clock,
        prices=prices,
        blueprint=blueprint,
    )


def restore_engine(
    cls: Any,
    state: EngineState,
    *,
    source: str | os.PathLike[str] = "the saved state",
    summarizer: Any = None,
    token_counter: Any = None,
    allow_custom_hooks: bool = False,
    clock: Callable[[], float] | None = None,
    prices: PriceLookup | None = None,
    blueprint: Any = None,
    transcript: Transcript | None = None,
    usage: StoredRecords[UsageRecord] | None = None,
) -> Any:
    """Rebuild an engine of class ``cls`` from a decoded :class:`EngineState` (what
    :func:`load_engine` does after reading the file; session stores call it directly).
    ``source`` names the state in errors; ``transcript``, when given, is the engine's
    transcript instead of ``state.transcript`` (a store's, decoded on first use); ``usage``,
    when given, is the :class:`StoredRecords` of the usage records instead of
    ``state.ledger`` (a store's, read on first use: :class:`UsageLedger`'s ``stored``).
    Raises :class:`RuntimeStateError` as :func:`load_engine`."""
    where = Path(source)
    options: dict[str, Any] = {
        "summarizer": summarizer,
        "token_counter": token_counter,
        "prices": prices,
        "transcript": transcript,
        "usage": usage,
    }
    if clock is not None:
        options["clock"] = clock
    try:
        return _build(cls, where, state, options, blueprint, allow_custom_hooks)
    except RuntimeStateError:
        raise
    except RegioError as exc:
        raise RuntimeStateError(f"{where}: the saved state cannot be restored: {exc}") from exc
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError) as exc:
        # decodable but inconsistent: the objects it describes refuse their own values
        raise RuntimeStateError(
            f"{where}: the saved state is inconsistent ({type(exc).__name__}: {exc})"
        ) from exc
