"""Checklist operations of the window: ``todo_add`` / ``todo_done`` / ``todo_note`` and the
"no open items" finish gate."""

from __future__ import annotations

from regio.content import Entry
from regio.errors import RegionConfigError, UnknownKeyError
from regio.regions import events as ev
from regio.regions.base import Region
from regio.regions.keyed import Checklist
from regio.regions.protocols import WindowSurface
from regio.regions.results import Refusal, WriteResult
from regio.regions.state import FinishGate, OpenItem

__all__ = ["finish_gate", "todo_add", "todo_done", "todo_note"]


def _checklist(window: WindowSurface, region: str | Region) -> Checklist:
    r = window.region(region)
    if not isinstance(r, Checklist):
        raise RegionConfigError(f"region {r.name!r} is a {r.kind}, not a checklist")
    return r


def _item(
    window: WindowSurface,
    cl: Checklist,
    item_id: str,
    text: str,
    status: str,
    notes: tuple[str, ...],
) -> Entry:
    line = Checklist.item_line(item_id, text, status, notes)
    meta = {"status": status, "text": text, "notes": list(notes)}
    return window.make_entry(
        line,
        key=item_id,
        meta=meta,
        tokens=None if window.counter is not None else len(line.split()),
    )


def todo_add(window: WindowSurface, region: str | Region, text: str) -> WriteResult | Refusal:
    """Add an open item; the same text as an open item is a no-op (``unchanged``)."""
    cl = _checklist(window, region)
    text = text.strip()
    if not text:
        raise RegionConfigError("todo_add needs a non-empty item text")
    dup = cl.find_open(text)
    if dup is not None:
        window.events.emit(ev.Unchanged(cl.name, dup.key or "", dup.id))
        return WriteResult(cl.name, dup.id, cl.version, unchanged=True)
    item_id = str(cl._next_item)
    result = window.write(cl, _item(window, cl, item_id, text, "open", ()))
    if isinstance(result, WriteResult):
        cl.new_item_id()
    return result


def _update_item(
    window: WindowSurface,
    region: str | Region,
    item_id: str,
    *,
    status: str | None = None,
    note: str | None = None,
) -> WriteResult | Refusal:
    cl = _checklist(window, region)
    old = cl.get(item_id)
    if old is None:
        raise UnknownKeyError(
            f"checklist {cl.name!r} has no item {item_id!r} (items: "
            f"{', '.join(cl.keys()) or 'none'})"
        )
    notes = tuple(old.meta.get("notes", ())) + ((note,) if note else ())
    return window.write(
        cl, _item(window, cl, item_id, old.meta["text"], status or old.meta["status"], notes)
    )


def todo_done(window: WindowSurface, region: str | Region, item_id: str) -> WriteResult | Refusal:
    """Mark an item done (a no-op when it already is)."""
    return _update_item(window, region, item_id, status="done")


def todo_note(
    window: WindowSurface, region: str | Region, item_id: str, note: str
) -> WriteResult | Refusal:
    """Add a note to an item."""
    return _update_item(window, region, item_id, note=note.strip())


def finish_gate(window: WindowSurface) -> FinishGate:
    """Whether a gated checklist blocks finishing (the agent loop asks before stopping)."""
    items = tuple(
        OpenItem(r.name, e.key or "", e.meta.get("text", ""))
        for r in window.regions
        if isinstance(r, Checklist) and r.gate
        for e in r.open_items()
    )
    return FinishGate(bool(items), items)
