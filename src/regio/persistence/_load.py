"""Loading an engine from a state file (``Engine.load``): :func:`load_engine` reads an
:class:`regio.persistence._statefile.EngineState` and restores everything: the window
(entries, versions, pending compactions, counters), the layout state, calibration, transcript,
usage ledger and compaction bookkeeping, so a loaded engine renders the same bytes as the one
that was saved (:func:`read_state` decodes, :func:`restore_engine` rebuilds).

**A state file is data, never code** (trust model). A custom region's hooks (``module:function``)
come only from the blueprint the engine was created with: the state records the sha256 of that
blueprint (``config.blueprint_sha256``), and a state with hooked custom regions loads only when
the caller passes that blueprint (``blueprint=``, whose hash must match) and allows custom hooks;
the hook references written in the state must then equal the blueprint's. The token counter and
the summarizer are code too: a counter named by a known tokenizer (``o200k_base``,
``cl100k_base``, ``heuristic``) is rebuilt, any other must be passed to :func:`load_engine`; the
summarizer defaults to an :class:`ExtractiveSummarizer` with the saved limits.

**Corrupt, truncated or foreign files** raise :class:`RuntimeStateError` naming the file and the
problem, never another exception: not a regular file, larger than
:data:`regio.persistence._statefile.MAX_STATE_BYTES`, nested deeper than
:data:`regio.persistence._statefile.MAX_STATE_DEPTH`, undecodable, of another format or version,
or decodable but inconsistent (the objects it describes cannot be rebuilt), or a transcript
record without a record's fields; the entries inside the records, decoded on first read
(:mod:`regio.persistence._stateread`), raise it then (a save writes them back as loaded, so a save
never fails for them). A calibration factor outside its range is reset with a
:class:`regio.tokens.CalibrationResetWarning` naming the file (the factor is learned again; the
session is not lost for it).
"""

from __future__ import annotations

import os
import stat
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from regio.errors import RegioError, RuntimeStateError
from regio.regions import Window, WindowState
from regio.regions.registry import KIND_ALIASES
from regio.regions.state import RegionState
from regio.session._stored import StoredRecords
from regio.session._transcript import Transcript
from regio.session._usage import PriceLookup, UsageLedger, UsageRecord
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.tokens import (
    COUNTER_NAMES,
    Calibration,
    CalibrationResetWarning,
    CalibrationState,
    get_counter,
)

from ._savedconfig import EngineConfig, config_options
from ._statefile import (
    MAX_STATE_BYTES,
    MAX_STATE_DEPTH,
    MSGPACK_SUFFIXES,
    READ_FORMATS,
    EngineState,
    own_book,
    saved_layout_state,
    text_sha256,
)
from ._stateread import lazy_state_type, split_transcript
from ._statescan import max_json_depth, max_msgpack_depth
from ._tempfiles import remove_stale_temporaries

if TYPE_CHECKING:
    from regio.blueprint import Blueprint
    from regio.tokens import TokenCounter

    from ._engineparts import PartsT

__all__ = ["load_engine", "read_state", "restore_engine"]

_HOOKS = ("render", "on_write", "on_overflow")
_LAZY_STATE = lazy_state_type(EngineState)


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
    state_type: type[msgspec.Struct] = EngineState,
) -> Any:
    """Decode an engine state file (JSON or msgpack by suffix). Raises
    :class:`RuntimeStateError` naming the file for anything that is not an engine state
    (module doc); ``max_bytes`` / ``max_depth`` override the limits; ``state_type`` is
    :class:`EngineState` or its :func:`regio.persistence._stateread.lazy_state_type`."""
    source = Path(path)
    data = _read_bytes(source, max_bytes)
    if not data:
        raise RuntimeStateError(f"{source}: the state file is empty; save one with Engine.save()")
    msgpack = source.suffix.lower() in MSGPACK_SUFFIXES
    depth = max_msgpack_depth(data, max_depth) if msgpack else max_json_depth(data, max_depth)
    if depth > max_depth:
        raise RuntimeStateError(
            f"{source}: values nested more than {max_depth} levels deep; not a state written "
            "by Engine.save()"
        )
    state: Any  # a ``state_type`` value (EngineState or its lazy twin: both have ``format``)
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


def _counter(source: Path, config: EngineConfig, given: TokenCounter | None) -> TokenCounter:
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


def _given_blueprint(
    source: Path, config: EngineConfig, blueprint: Blueprint | str | os.PathLike[str]
) -> Blueprint:
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
    source: Path, state: WindowState, blueprint: Blueprint | None, allow_custom_hooks: bool
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
    cls: Callable[..., PartsT],
    source: Path,
    state: EngineState,
    options: dict[str, Any],
    blueprint: Blueprint | str | os.PathLike[str] | None,
    allow_custom_hooks: bool,
) -> PartsT:
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
        last_sent_at=state.last_sent_at,
        last_next_entry=state.last_next_entry,
        adapters=dict(state.adapters),
        allow_custom_hooks=allow_custom_hooks and trusted is not None,
    )
    engine.budget.request_tools = tuple(state.request_tools)
    engine.budget.beside_tokens = state.beside_tokens
    engine.budget.layout_tokens = state.layout_tokens
    engine.budget.reserve(state.last_provider or None, state.last_model or None)  # same room
    return engine


def load_engine(
    cls: Callable[..., PartsT],
    path: str | os.PathLike[str],
    *,
    summarizer: object = None,
    token_counter: TokenCounter | None = None,
    allow_custom_hooks: bool = False,
    clock: Callable[[], float] | None = None,
    prices: PriceLookup | None = None,
    blueprint: Blueprint | str | os.PathLike[str] | None = None,
) -> PartsT:
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
    msgpack = source.suffix.lower() in MSGPACK_SUFFIXES
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
    cls: Callable[..., PartsT],
    state: EngineState,
    *,
    source: str | os.PathLike[str] = "the saved state",
    summarizer: object = None,
    token_counter: TokenCounter | None = None,
    allow_custom_hooks: bool = False,
    clock: Callable[[], float] | None = None,
    prices: PriceLookup | None = None,
    blueprint: Blueprint | str | os.PathLike[str] | None = None,
    transcript: Transcript | None = None,
    usage: StoredRecords[UsageRecord] | None = None,
) -> PartsT:
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
