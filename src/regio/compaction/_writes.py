"""Writes and removals that keep the transcript: the engine's ``write`` / ``release`` /
``clear`` and the context tools both go through these, on the :class:`Session` part (a
write that does not fit a paired ``compacting`` region first summarizes to make room).

A write is a step generator (:func:`write_steps`): the compaction that makes room yields its
summarizer jobs to whichever driver the caller chose (``Engine.write`` drives it with
:meth:`Session.run`, ``Engine.awrite`` with :meth:`Session.arun`)."""

from __future__ import annotations

from collections.abc import Sequence

from regio.content import Block, Entry
from regio.regions import Refusal, WriteResult
from regio.session._session import Session, Steps
from regio.session._sizes import admission_tokens
from regio.session._textadmit import admit_entry_text, admit_value, blocks_of

from ._compactor import run_steps
from ._room import room_steps, window_room_steps

__all__ = ["clear_region", "entry_of", "release_from", "write_steps", "write_to"]


def entry_of(c: Session, region: str, result: WriteResult | Refusal) -> Entry | None:
    """The entry a write stored (``None`` for a refusal)."""
    if not isinstance(result, WriteResult):
        return None
    r = c.window.region(region)
    return next((e for e in reversed(r.entries) if e.id == result.entry_id), None)


def write_to(
    c: Session,
    region: str,
    content: Entry | str | Block | Sequence[Block],
    *,
    key: str | None = None,
    strict: bool = False,
) -> WriteResult | Refusal:
    """:func:`write_steps` driven synchronously (:meth:`Session.run`)."""
    return run_steps(c, write_steps(c, region, content, key=key, strict=strict))


def write_steps(
    c: Session,
    region: str,
    content: Entry | str | Block | Sequence[Block],
    *,
    key: str | None = None,
    strict: bool = False,
) -> Steps[WriteResult | Refusal]:
    """See ``Engine.write``; the content and key are checked and repaired first
    (:mod:`regio.session._textadmit`). Yields the summarizer jobs of the compaction that makes
    room (:func:`regio.compaction._room.room_steps`, and for the floor the region is guaranteed
    beside an elastic conversation, :func:`regio.compaction._room.window_room_steps`)."""
    where = f"write({region})"
    key = admit_value(c.emit, key, where, "key")
    if isinstance(content, Entry):
        content = admit_entry_text(c.emit, content, where)
    else:
        blocks = blocks_of(content, where)
        blocks = admit_value(c.emit, blocks, where, "blocks")
        # counted only up to what the region could admit (regio.session._sizes)
        probe = Entry(id="", blocks=blocks, key=key)
        tokens = admission_tokens(c.window, c.window.region(region), probe)
        content = c.window.make_entry(blocks, key=key, tokens=tokens)
    steps = room_steps(c, region, content.tokens)
    if steps is not None:
        yield from steps
    room = window_room_steps(c, region, content.tokens)  # the floor the region is guaranteed
    if room is not None:
        yield from room
    result = c.window.write(region, content, key=key, strict=strict)
    entry = entry_of(c, region, result)
    if entry is not None and not (isinstance(result, WriteResult) and result.unchanged):
        c.record("write", region, entry=entry)
    return result


def release_from(c: Session, region: str, **which: int | str | None) -> list[Entry]:
    """See ``Engine.release`` (``which``: exactly one of ``key``, ``index``, ``oldest``)."""
    removed = c.window.release(region, **which)  # type: ignore[arg-type]
    if removed:
        c.record("release", region, ids=[e.id for e in removed])
    return removed


def clear_region(c: Session, region: str) -> list[Entry]:
    """See ``Engine.clear``."""
    removed = c.window.clear(region)
    if removed:
        c.record("clear", region, ids=[e.id for e in removed])
    return removed
