"""Captured region operations applied through engines (:mod:`regio.capture.rules`): a write,
a replace, a release, a park that displaces the oldest parked output, and the moves that took
text out of a message, which an engine whose region refuses one undoes by adding the message as
sent (nothing is lost).

Several engines can file one stream at once (the bench replays one capture stream through an
engine per layout); ``trackers`` (engine -> anything with a ``compacted`` flag, the bench's
:class:`regio.bench.tracking.Tracker`) learn when an engine cut content it was sending (a
displaced parked output, a refused write of text held nowhere else).

An engine that raises (:data:`ENGINE_ERRORS`) while an operation is applied through it is
handed to ``on_error(name, error)`` and left out of the rest of that operation (default: the
error is re-raised): the bench's replay records it as that strategy's failure on the trace (it
is broken from that call on) and the other strategies carry on
(:mod:`regio.bench.enginepass`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import attrs

from regio.content import Entry
from regio.errors import RegioError
from regio.layout import LayoutError
from regio.regions import PARKED_ADMITTED, PARKED_CALL, PARKED_STUB, Refusal

from .rules import AddMessage, RegionOp

if TYPE_CHECKING:
    from regio.engine import Engine

__all__ = ["ENGINE_ERRORS", "Cuts", "Filed", "OnError", "apply_all", "apply_op", "file_moves"]

#: What an engine raises when it refuses or cannot do what the session asks (a region that
#: refuses a write, a request that cannot fit, a layout it cannot build): a failure of that
#: engine (the bench: of that strategy on the trace), not of the caller.
ENGINE_ERRORS: tuple[type[Exception], ...] = (RegioError, LayoutError)

#: ``on_error(name, error)``: the engine ``name`` raised one of :data:`ENGINE_ERRORS`.
OnError = Callable[[str, Exception], None]


def _raise(name: str, error: Exception) -> None:
    raise error


class Cuts(Protocol):
    """What filing reports to: ``compacted`` is set when an engine cut content it was
    sending."""

    compacted: bool


def apply_op(engine: Engine, op: RegionOp) -> bool:
    """Apply one region operation through the engine; False when the region refused it."""
    if op.action == "release":
        if op.key is not None:
            with contextlib.suppress(KeyError):
                engine.release(op.region, key=op.key)
        else:
            engine.clear(op.region)
        return True
    if op.action == "replace":
        engine.clear(op.region)
    elif op.action == "trim" and op.keep is not None:
        extra = len(engine.window.region(op.region).entries) - (op.keep - 1)
        if extra > 0:
            engine.release(op.region, oldest=extra)
    content: Entry | str = op.text
    if op.stub:  # a parked output knows what stands for it in the conversation
        meta = {PARKED_STUB: op.stub} | ({PARKED_CALL: op.call} if op.call else {})
        meta |= {PARKED_ADMITTED: op.admitted} if op.admitted else {}
        content = engine.window.make_entry(op.text, key=op.key, meta=meta)
    result = engine.write(op.region, content, key=op.key)
    return not isinstance(result, Refusal)


def _displaces(engine: Engine, op: RegionOp) -> bool:
    """Whether ``op`` drops an entry the engine was sending: a ``trim`` (a parked tool output
    displacing the oldest one, :class:`regio.capture.rules.ParkRule`) on a full region."""
    if op.action != "trim" or op.keep is None:
        return False
    return len(engine.window.region(op.region).entries) > op.keep - 1


def apply_all(
    engines: Mapping[str, Engine],
    trackers: Mapping[str, Cuts],
    op: RegionOp,
    on_error: OnError = _raise,
) -> bool:
    """Apply ``op`` through every engine; an engine that drops content it was sending (a
    displaced parked output) or whose region refused content it holds nowhere else (a
    refused write that is not a ``copy``) has cut something. False when any refused. An
    engine that raises goes to ``on_error`` (module doc; default: re-raised)."""
    ok = True
    for s, engine in engines.items():
        dropped = _displaces(engine, op)
        try:
            admitted = apply_op(engine, op)
        except ENGINE_ERRORS as exc:
            on_error(s, exc)
            continue
        trackers[s].compacted |= dropped or not (admitted or op.copy)
        ok = ok and admitted
    return ok


def _holds(engine: Engine, op: RegionOp) -> bool:
    """Whether ``op``'s region already holds its text (under its key, for a keyed write)."""
    region = engine.window.region(op.region)
    return any(e.text == op.text and (op.key is None or e.key == op.key) for e in region.entries)


@attrs.frozen
class Filed:
    """What :func:`file_moves` did with one message's moves: ``by_engine`` (engine -> whether
    its regions took every move: ``False`` adds the message as recorded), ``written`` (moves
    some engine tried to write, refused ones included, as ``region_writes`` always counted: a
    repeat only when a region had to take it again) and ``refused``
    (moves some engine's region refused, a repeat counted once)."""

    by_engine: dict[str, bool]
    written: int = 0
    refused: int = 0


def file_moves(
    engines: Mapping[str, Engine],
    trackers: Mapping[str, Cuts] | None,
    item: AddMessage,
    names: set[str],
    notes: list[str],
    on_error: OnError = _raise,
) -> Filed:
    """Apply ``item``'s moves (:class:`regio.capture.rules.AddMessage`) through every engine
    (:class:`Filed`). An engine whose region refused one (or any engine, for a move to a region
    not in the blueprint) adds the fallback message instead, so nothing is lost and nothing is
    cut; its later moves of the message are not tried. A ``repeat`` state the region already
    holds is not written again. A parked output displacing an older one is a cut in
    ``trackers`` (``None``: not tracked). An engine that raises goes to ``on_error`` (module
    doc; default: re-raised) and takes no further move of the message."""
    for op in item.moves:
        if op.region not in names:
            notes.append(f"{op.rule}: region {op.region!r} is not in the blueprint")
            return Filed(dict.fromkeys(engines, False))
    filed = dict.fromkeys(engines, True)
    written: set[int] = set()
    refused: set[int] = set()
    for s, engine in engines.items():
        for i, op in enumerate(item.moves):
            if op.repeat and _holds(engine, op):
                continue
            dropped = _displaces(engine, op)
            written.add(i)
            if trackers is not None:
                trackers[s].compacted |= dropped
            try:
                admitted = apply_op(engine, op)
            except ENGINE_ERRORS as exc:
                on_error(s, exc)
                filed[s] = False
                break
            if not admitted:
                filed[s] = False
                if not op.repeat:  # a repeat was counted when it was first refused
                    refused.add(i)
                break
    return Filed(filed, len(written), len(refused))
