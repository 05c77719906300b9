"""All-or-nothing batches of writes.

:func:`write_many` first plays the batch on a throw-away copy of the window (same state, its
own event bus, so nothing is emitted); only when every write is admitted there does it apply
the batch to the real window, where the same deterministic rules give the same results and
the usual events. A refusal leaves the real window untouched: entries, content hashes,
versions, the compaction queue and the event history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from regio.content import Block, Entry
from regio.regions.base import Refusal, WriteResult
from regio.regions.protocols import WindowSurface

__all__ = ["BatchItem", "write_many"]

#: One write of a batch: ``(key, content)``; ``key`` is ``None`` for unkeyed regions.
BatchItem = tuple[str | None, "Entry | str | Block | Sequence[Block]"]


def _play(window: WindowSurface, region: str, items: Sequence[Any]) -> list[WriteResult] | Refusal:
    results: list[WriteResult] = []
    for key, content in items:
        result = window.write(region, content, key=key)
        if isinstance(result, Refusal):
            return result
        results.append(result)
    return results


def write_many(
    window: WindowSurface, region: str, items: Sequence[Any], *, strict: bool = False
) -> list[WriteResult] | Refusal:
    """Write ``items`` (``(key, content)`` pairs, in order) into ``region``, all or nothing.

    Returns one :class:`WriteResult` per item, or the :class:`Refusal` of the first item that
    was refused (its message names the entry; nothing changed, no event emitted). With
    ``strict`` a refusal raises its :class:`regio.errors.RegionFullError` instead. Raises what
    :meth:`Window.write` raises for a programming error (unknown region, system role)."""
    # custom regions keep their own allow_custom_hooks option in the state
    trial = type(window).from_state(window.snapshot_state(), counter=window.counter)
    played = _play(trial, region, items)
    if isinstance(played, Refusal):
        if strict:
            raise played.error()
        return played
    saved = window.snapshot_state()
    history = list(window.events.history)
    results = _play(window, region, items)
    if isinstance(results, Refusal):  # pragma: no cover - the trial said it fits
        window.restore_state(saved)
        window.events.history[:] = history
        if strict:
            raise results.error()
        return results
    return results
