"""Results of writes: :class:`WriteResult`, :class:`Refusal` (+ :class:`Releasable`) and the
internal :class:`WritePlan` a region computes before committing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import attrs
import msgspec

from regio.content import Entry
from regio.errors import RegionFullError
from regio.policies import UnitAnalysis
from regio.regions import events as ev

__all__ = [
    "HoldsEntries",
    "Refusal",
    "Refusing",
    "Releasable",
    "WritePlan",
    "WriteResult",
    "make_refusal",
    "preview",
    "refusal_message",
    "releasable_units",
]


class HoldsEntries(Protocol):
    """What a :class:`WritePlan` reads of the region it was planned for (a
    :class:`regio.regions.Region`): its entries, in order."""

    @property
    def entries(self) -> Sequence[Entry]: ...


class Releasable(msgspec.Struct, frozen=True):
    """Something the caller may release to make room: an entry (its unit), key and size."""

    entry_id: str
    tokens: int
    key: str | None = None
    preview: str = ""


class Refusal(msgspec.Struct, frozen=True):
    """A refused write. Nothing changed (entries, hash and version are as before).

    ``used``/``budget``/``available`` are the region's (or, for ``reason == "window_full"``,
    the window's) tokens; ``entry_tokens`` the refused entry; ``releasable`` the oldest
    releasable units (oldest first, up to 5); ``message`` tells an agent how full the region is
    and what to release. ``reason``: ``region_full`` | ``too_large`` | ``window_full`` |
    ``entry_limit`` | ``max_items`` | ``hook``.
    """

    region: str
    used: int
    budget: int
    entry_tokens: int
    available: int
    releasable: tuple[Releasable, ...]
    reason: str
    message: str

    def error(self) -> RegionFullError:
        """This refusal as a :class:`RegionFullError` (for callers that prefer raising)."""
        return RegionFullError(
            self.message,
            region=self.region,
            requested=self.entry_tokens,
            available=self.available,
            refusal=self,
        )


class WriteResult(msgspec.Struct, frozen=True):
    """An admitted write: ``entry_id`` now in ``region``; ``evicted`` ids that rolled off;
    ``replaced`` the id of the entry replaced in place; ``unchanged`` for a no-op write."""

    region: str
    entry_id: str
    version: int
    evicted: tuple[str, ...] = ()
    replaced: str | None = None
    unchanged: bool = False


@attrs.define
class WritePlan:
    """What a write will do once committed (computed without changing anything)."""

    entry: Entry
    evict_ids: tuple[str, ...] = ()
    evict_reason: str = "tokens"
    replace_index: int | None = None
    unchanged: bool = False
    fallback: bool = False
    over_budget_reason: str | None = None

    def delta_tokens(self, region: HoldsEntries) -> int:
        """Change of the region's used tokens when committed."""
        if self.unchanged:
            return 0
        evicted = set(self.evict_ids)
        gone = sum(e.tokens for e in region.entries if e.id in evicted) if evicted else 0
        if self.replace_index is not None:
            gone += region.entries[self.replace_index].tokens
        return self.entry.tokens - gone


def preview(entry: Entry, width: int = 60) -> str:
    text = " ".join(entry.text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def refusal_message(
    where: str,
    reason: str,
    *,
    entry_tokens: int,
    entries: int,
    used: int,
    budget: int,
    max_entry_tokens: int | None,
    releasable: tuple[Releasable, ...],
) -> str:
    """The message of a :class:`Refusal` (tokens): what was refused by ``where`` (``region
    'x'`` or ``the window``), why (``reason``) and what can be released, oldest first."""
    available = max(0, budget - used)
    if reason == "too_large":
        msg = (
            f"{where} refused an entry of {entry_tokens} tokens: it is larger than the "
            f"whole region ({budget} tokens). Shorten or split it."
        )
    elif reason == "entry_limit":
        msg = (
            f"{where} refused an entry of {entry_tokens} tokens: entries are limited to "
            f"{max_entry_tokens} tokens. Shorten it."
        )
    elif reason == "max_items":
        msg = (
            f"{where} is full: {entries} entries is its limit "
            f"({used}/{budget} tokens used). Release an entry first."
        )
    elif reason == "history_window":
        msg = (
            f"{where} is full: its history window (max_items / max_turns / "
            f"max_tool_calls) would have to drop entries ({used}/{budget} tokens used). "
            "Release an entry first."
        )
    elif reason == "hook":
        msg = f"{where} refused the entry: its on_write hook declined it."
    else:
        msg = (
            f"{where} is full: {used}/{budget} tokens used, {available} free; the entry "
            f"needs {entry_tokens}."
        )
    if releasable and reason not in ("too_large", "entry_limit", "hook"):
        names = ", ".join(
            (f"key {r.key!r}" if r.key else f"entry {r.entry_id!r}") + f" ({r.tokens} tokens)"
            for r in releasable
        )
        msg += f" Release oldest first: {names}; or write something shorter."
    return msg


def releasable_units(
    entries: Sequence[Entry], info: UnitAnalysis, limit: int = 5
) -> tuple[Releasable, ...]:
    """The first ``limit`` units of the removal order of ``entries`` (``info``: their
    :class:`regio.policies.UnitAnalysis`) as :class:`Releasable` (first entry id, unit
    tokens, key, preview), oldest first."""
    out: list[Releasable] = []
    for u in info.removable[:limit]:
        first = entries[info.units[u][0]]
        out.append(Releasable(first.id, info.unit_tokens[u], first.key, preview(first)))
    return tuple(out)


def make_refusal(
    region: str,
    entry_tokens: int,
    reason: str,
    *,
    used: int,
    budget: int,
    entries: int,
    max_entry_tokens: int | None,
    releasable: tuple[Releasable, ...],
    in_window: bool,
) -> Refusal:
    """The :class:`Refusal` of an entry of ``entry_tokens`` by ``region`` for ``reason``
    (``used`` / ``budget``: the region's tokens, or the window's with ``in_window``;
    ``entries``: the region's entry count), with its :func:`refusal_message`."""
    where = "the window" if in_window else f"region {region!r}"
    msg = refusal_message(
        where,
        reason,
        entry_tokens=entry_tokens,
        entries=entries,
        used=used,
        budget=budget,
        max_entry_tokens=max_entry_tokens,
        releasable=releasable,
    )
    available = max(0, budget - used)
    return Refusal(region, used, budget, entry_tokens, available, releasable, reason, msg)


class _Refuser(Protocol):
    """What :class:`Refusing` reads of its region."""

    name: str
    entries: Any
    events: Any
    max_entry_tokens: int | None
    _used: int

    @property
    def budget(self) -> int: ...

    def analysis(self) -> UnitAnalysis: ...

    def releasable(
        self, info: UnitAnalysis | None = None, limit: int = 5
    ) -> tuple[Releasable, ...]: ...


class Refusing:
    """The refusals of a region (mixed into :class:`regio.regions.Region`): what can be
    released, the :class:`Refusal` of an entry and its ``refused`` event."""

    def releasable(
        self: _Refuser, info: UnitAnalysis | None = None, limit: int = 5
    ) -> tuple[Releasable, ...]:
        """The oldest releasable units of the removal order (first entry id, unit tokens, key),
        up to ``limit``."""
        if not self.entries:
            return ()
        if info is None or info.size != len(self.entries):
            info = self.analysis()
        return releasable_units(self.entries, info, limit)

    def refusal(
        self: _Refuser,
        entry: Entry,
        reason: str,
        *,
        info: UnitAnalysis | None = None,
        window: tuple[int, int] | None = None,
    ) -> Refusal:
        """Build the :class:`Refusal` for ``entry`` (``window``: (used, max) of the window)."""
        used, budget = window if window else (self._used, self.budget)
        return make_refusal(
            self.name,
            entry.tokens,
            reason,
            used=used,
            budget=budget,
            entries=len(self.entries),
            max_entry_tokens=self.max_entry_tokens,
            releasable=self.releasable(info) if reason != "too_large" else (),
            in_window=window is not None,
        )

    def emit_refusal(self: _Refuser, refusal: Refusal) -> None:
        """Emit the ``refused`` event for ``refusal``."""
        self.events.emit(
            ev.Refused(
                refusal.region,
                refusal.entry_tokens,
                refusal.used,
                refusal.budget,
                refusal.available,
                refusal.reason,
                refusal.message,
            )
        )
