"""Writes and removals that keep the transcript: the engine's ``write`` / ``release`` /
``clear`` and the context tools both go through these, on the :class:`Compactor` part (a
write that does not fit a paired ``compacting`` region first summarizes to make room)."""

from __future__ import annotations

from collections.abc import Sequence

from regio.content import Block, Entry
from regio.regions import Refusal, WriteResult

from .compactor import Compactor
from .room import room_steps, window_room_steps

__all__ = ["clear_region", "entry_of", "release_from", "write_to"]


def entry_of(c: Compactor, region: str, result: WriteResult | Refusal) -> Entry | None:
    """The entry a write stored (``None`` for a refusal)."""
    if not isinstance(result, WriteResult):
        return None
    r = c.window.region(region)
    return next((e for e in reversed(r.entries) if e.id == result.entry_id), None)


def write_to(
    c: Compactor,
    region: str,
    content: Entry | str | Block | Sequence[Block],
    *,
    key: str | None = None,
    strict: bool = False,
) -> WriteResult | Refusal:
    """See ``Engine.write``."""
    if not isinstance(content, Entry):
        content = c.window.make_entry(content, key=key)
    steps = room_steps(c, region, content.tokens)
    if steps is not None:
        c.run(steps)
    room = window_room_steps(c, region, content.tokens)  # the floor the region is guaranteed
    if room is not None:
        c.run(room)
    result = c.window.write(region, content, key=key, strict=strict)
    entry = entry_of(c, region, result)
    if entry is not None and not (isinstance(result, WriteResult) and result.unchanged):
        c.record("write", region, entry=entry)
    return result


def release_from(c: Compactor, region: str, **which: int | str | None) -> list[Entry]:
    """See ``Engine.release`` (``which``: exactly one of ``key``, ``index``, ``oldest``)."""
    removed = c.window.release(region, **which)  # type: ignore[arg-type]
    if removed:
        c.record("release", region, ids=[e.id for e in removed])
    return removed


def clear_region(c: Compactor, region: str) -> list[Entry]:
    """See ``Engine.clear``."""
    removed = c.window.clear(region)
    if removed:
        c.record("clear", region, ids=[e.id for e in removed])
    return removed
