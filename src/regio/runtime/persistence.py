"""Saving and loading an engine (DESIGN.md section 4, "Persistence").

:func:`save_engine` writes an :class:`EngineState` (msgspec) as JSON, or msgpack when the file
name ends in ``.msgpack`` / ``.mpk``, atomically: a temporary file in the same directory, then
``os.replace`` (a crash leaves the old file or the new one, never half of one).
:func:`load_engine` restores everything: the window (entries, versions, pending compactions,
counters), the layout state, calibration, transcript, usage ledger and compaction bookkeeping,
so a loaded engine renders the same bytes as the one that was saved.

The token counter and the summarizer are code, not data: a counter named by a known tokenizer
(``o200k_base``, ``cl100k_base``, ``heuristic``) is rebuilt; any other must be passed to
:func:`load_engine`. The summarizer defaults to an :class:`ExtractiveSummarizer` with the saved
limits.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from regio.layout import LayoutState, Request, ToolSpec
from regio.regions import Window, WindowState
from regio.tokens import COUNTER_NAMES, Calibration, CalibrationState, get_counter

from .compaction import CompactionBook
from .errors import RuntimeStateError
from .extractive import ExtractiveSummarizer
from .summarizer import summarizer_limits
from .transcript import Transcript, TranscriptRecord
from .usage import PriceLookup, UsageLedger, UsageRecord

__all__ = [
    "FORMAT",
    "EngineConfig",
    "EngineState",
    "engine_state",
    "load_engine",
    "restore_engine",
    "save_engine",
]

#: Identifies an engine state file.
FORMAT = "regio.engine/1"
_MSGPACK_SUFFIXES = (".msgpack", ".mpk")


class EngineConfig(msgspec.Struct):
    """The engine's options (see :class:`regio.runtime.Engine`)."""

    provider: str
    model: str
    context_window: int | None
    output_reserve: int
    strategy: str
    ttl: str
    chunk_tokens: int
    settle_share: float
    targets: dict[str, int]
    compact_trigger: int | None
    auto_compact: bool
    no_progress_limit: int
    carry_forward: str
    standing_instructions: str
    session_id: str | None
    blueprint_text: str | None
    tokenizer: str | None
    counter_name: str
    chat_format: str | None
    summarizer_window: int
    summarizer_max_tokens: int
    extra_tools: list[ToolSpec] = msgspec.field(default_factory=list)
    cut_at_turns: bool = False


#: Engine options saved and restored as they are (``targets`` and ``extra_tools`` are copied).
_OPTIONS = (
    "provider",
    "model",
    "context_window",
    "output_reserve",
    "strategy",
    "ttl",
    "chunk_tokens",
    "settle_share",
    "compact_trigger",
    "auto_compact",
    "no_progress_limit",
    "carry_forward",
    "standing_instructions",
    "session_id",
    "blueprint_text",
    "tokenizer",
    "cut_at_turns",
)


class EngineState(msgspec.Struct):
    """Everything an engine needs to continue (``format`` is :data:`FORMAT`)."""

    format: str
    config: EngineConfig
    window: WindowState
    layout_state: LayoutState | None
    last_request: Request | None
    last_estimate: int
    last_provider: str
    last_model: str
    overflow_retry: bool
    calibration: CalibrationState
    ledger: list[UsageRecord]
    transcript: list[TranscriptRecord]
    book: CompactionBook


def engine_state(engine: Any) -> EngineState:
    """The :class:`EngineState` of ``engine`` (what :func:`save_engine` writes)."""
    window, reserve, max_summary = summarizer_limits(engine.summarizer)
    del reserve
    counter = engine.counter
    last = engine.state.last_request
    if last is not None:
        last = msgspec.structs.replace(last, events=())
    return EngineState(
        format=FORMAT,
        config=EngineConfig(
            **{name: getattr(engine.options, name) for name in _OPTIONS},
            targets=dict(engine.options.targets),
            counter_name=str(getattr(counter, "name", "")),
            chat_format=getattr(counter, "chat_format", None),
            summarizer_window=window,
            summarizer_max_tokens=max_summary,
            extra_tools=list(engine.options.extra_tools),
        ),
        window=engine.window.snapshot_state(),
        layout_state=engine.state.layout_state,
        last_request=last,
        last_estimate=engine.state.last_estimate,
        last_provider=engine.state.last_provider,
        last_model=engine.state.last_model,
        overflow_retry=engine.state.overflow_retry,
        calibration=engine.calibration.to_state(),
        ledger=list(engine.ledger.records),
        transcript=list(engine.transcript_log.records),
        book=engine.book,
    )


def encode_state(engine: Any, *, msgpack: bool = False) -> bytes:
    """The engine's state as JSON (default) or msgpack bytes."""
    state = engine_state(engine)
    return msgspec.msgpack.encode(state) if msgpack else msgspec.json.encode(state)


def save_engine(engine: Any, path: str | os.PathLike[str]) -> Path:
    """Write the engine's state to ``path`` atomically (module doc); returns the path."""
    target = Path(path)
    data = encode_state(engine, msgpack=target.suffix.lower() in _MSGPACK_SUFFIXES)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
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
    return target


def read_state(path: str | os.PathLike[str]) -> EngineState:
    """Decode an engine state file (JSON or msgpack by suffix). Raises
    :class:`RuntimeStateError` naming the file for anything that is not an engine state."""
    source = Path(path)
    data = source.read_bytes()
    try:
        if source.suffix.lower() in _MSGPACK_SUFFIXES:
            state = msgspec.msgpack.decode(data, type=EngineState)
        else:
            state = msgspec.json.decode(data, type=EngineState)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise RuntimeStateError(
            f"{source}: not a regio engine state ({exc}); save one with Engine.save()"
        ) from exc
    if state.format != FORMAT:
        raise RuntimeStateError(
            f"{source}: state format {state.format!r} is not {FORMAT!r}; it was written by "
            "another regio version"
        )
    return state


def _counter(config: EngineConfig, given: Any) -> Any:
    if given is not None:
        return given
    name = config.tokenizer or config.counter_name
    if name in COUNTER_NAMES:
        return get_counter(name, chat_format=config.chat_format or "openai_chat")
    raise RuntimeStateError(
        f"the saved engine used token counter {config.counter_name!r}, which regio cannot "
        "rebuild; pass token_counter= to Engine.load"
    )


def load_engine(
    cls: Any,
    path: str | os.PathLike[str],
    *,
    summarizer: Any = None,
    token_counter: Any = None,
    allow_custom_hooks: bool = False,
    clock: Callable[[], float] | None = None,
    prices: PriceLookup | None = None,
) -> Any:
    """Rebuild an engine of class ``cls`` from ``path`` (see module doc)."""
    return restore_engine(
        cls,
        read_state(path),
        summarizer=summarizer,
        token_counter=token_counter,
        allow_custom_hooks=allow_custom_hooks,
        clock=clock,
        prices=prices,
    )


def restore_engine(
    cls: Any,
    state: EngineState,
    *,
    summarizer: Any = None,
    token_counter: Any = None,
    allow_custom_hooks: bool = False,
    clock: Callable[[], float] | None = None,
    prices: PriceLookup | None = None,
) -> Any:
    """Rebuild an engine of class ``cls`` from a decoded :class:`EngineState` (module doc)."""
    config = state.config
    counter = _counter(config, token_counter)
    window = Window.from_state(state.window, counter=counter, allow_custom_hooks=allow_custom_hooks)
    if summarizer is None:
        summarizer = ExtractiveSummarizer(
            context_window=config.summarizer_window, max_summary_tokens=config.summarizer_max_tokens
        )
    options: dict[str, Any] = {}
    if clock is not None:
        options["clock"] = clock
    ledger = UsageLedger(prices=prices) if prices is not None else UsageLedger()
    ledger.records = list(state.ledger)
    return cls(
        window=window,
        summarizer=summarizer,
        **{name: getattr(config, name) for name in _OPTIONS},
        targets=dict(config.targets),
        extra_tools=tuple(config.extra_tools),
        calibration=Calibration.from_state(state.calibration),
        ledger=ledger,
        transcript_log=Transcript(list(state.transcript)),
        book=state.book,
        layout_state=state.layout_state,
        last_request=state.last_request,
        last_estimate=state.last_estimate,
        last_provider=state.last_provider,
        last_model=state.last_model,
        overflow_retry=state.overflow_retry,
        allow_custom_hooks=allow_custom_hooks,
        **options,
    )
