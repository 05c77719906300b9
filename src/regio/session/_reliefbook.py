"""What the relief chain did in one session (saved with the engine inside
:class:`regio.compaction._compactor.CompactionBook`): per stage how often it ran, how often it was
skipped below its minimum and the tokens it freed; and the full text of every tool result that
was changed on admission (trimmed to ``max_result_tokens`` or routed to a region), so
``context_restore`` can bring it back byte for byte (the transcript holds the others).

The originals are an :class:`Originals` mapping: append-only like the transcript (an original is
only ever added, or replaced when a later call reuses its call id; none is ever removed), with
the call ids set in order (:attr:`Originals.changes`) so that a session store's save writes the
originals set since its last save without scanning the others, and, loaded from a session
store, read on demand (:class:`OriginalsSource`) instead of all at load."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any, Protocol

import msgspec

from regio.content import ToolResult

__all__ = [
    "STAGES",
    "Originals",
    "OriginalsSource",
    "ReliefBook",
    "StageTally",
]

#: Stages of the chain in report order: ``dedupe``, ``clear`` and ``trim`` run under token
#: pressure; ``admit_trim`` (``max_result_tokens``) and ``route`` run on admission.
STAGES = ("dedupe", "clear", "trim", "admit_trim", "route")


class StageTally(msgspec.Struct):
    """One stage: ``runs`` (batches applied), ``skipped`` (times it would have freed less than
    its minimum, so it did not run), ``short`` (times its batch met its minimum but the
    stages together could not reach the target, so it did not run and the summarization ran
    instead; :func:`regio.compaction.relief._chain.relieve`), ``freed_tokens`` (tokens) and
    ``blocks`` edited."""

    runs: int = 0
    skipped: int = 0
    freed_tokens: int = 0
    blocks: int = 0
    short: int = 0


class OriginalsSource(Protocol):
    """Stored originals read on demand (a session store's, :mod:`regio.persistence.store.base`)."""

    def get(self, call_id: str) -> ToolResult | None:
        """The stored original of ``call_id`` (``None``: none is stored). Raises
        :class:`regio.persistence.store.SessionStoreError` naming the record when it is damaged."""
        ...

    #: how many originals are stored (``None``: unknown)
    count: int | None

    def exists(self, call_id: str) -> bool:
        """Whether a record of ``call_id`` is stored (never raises for a damaged one)."""
        ...

    def copy(self) -> OriginalsSource:
        """The same stored originals, with caches of its own."""
        ...

    def all(
        self, own: Collection[str] = (), replaced: Collection[str] = (), complete: bool = True
    ) -> dict[str, ToolResult]:
        """Every stored original, oldest set first, without the ``own`` call ids (set since
        the load; ``replaced``: those of them stored at the load). Raises
        :class:`regio.persistence.store.SessionStoreError` when stored originals were saved by
        another writer after the load, or (with ``complete``) are missing (fewer than ``count``);
        without ``complete`` those still stored are returned."""
        ...


class Originals(dict[str, ToolResult]):
    """Call id -> the tool result as received (module doc). A ``dict`` whose writes are
    logged: setting a call id moves it to the end (the order is the order the originals were
    last set) and appends it to :attr:`changes`. With a ``source`` the originals stored before a
    load are read from it on demand: ``get`` / ``[]`` / ``in`` read one; iterating, ``len``,
    ``==`` and :meth:`load_all` read them all (once). Encoders see the ``dict`` itself, so
    whatever encodes the state of a lazily loaded session calls :meth:`load_all` first."""

    __slots__ = ("_added", "_replaced", "_source", "changes", "where")

    def __init__(
        self,
        items: Mapping[str, ToolResult] | Iterable[tuple[str, ToolResult]] = (),
        *,
        source: OriginalsSource | None = None,
    ) -> None:
        super().__init__(items)
        #: call ids in the order they were set since this mapping was built
        self.changes: list[str] = []
        self._source = source
        #: where the originals are stored (the source's ``where``, else ``this session``)
        self.where: str = str(getattr(source, "where", None) or "this session")
        # with a source: the call ids set since the load that were not / were stored
        self._added: set[str] = set()
        self._replaced: set[str] = set()

    @property
    def count(self) -> int | None:
        """How many originals the session holds (distinct call ids), without reading the
        stored ones (``None``: a lazy mapping whose source does not know its count)."""
        if self._source is None:
            return dict.__len__(self)
        stored = self._source.count
        return None if stored is None else stored + len(self._added)

    @property
    def lazy(self) -> bool:
        """Whether stored originals may still be unread."""
        return self._source is not None

    def __setitem__(self, call_id: str, result: ToolResult) -> None:
        source = self._source
        if source is not None and not dict.__contains__(self, call_id):
            (self._replaced if source.exists(call_id) else self._added).add(call_id)
        dict.pop(self, call_id, None)
        dict.__setitem__(self, call_id, result)
        self.changes.append(call_id)

    def detached(self) -> Originals:
        """A copy of this mapping that shares no state with it (its kept originals, its
        change log and, when lazy, a copy of its source: each engine restored from one loaded
        state owns its originals). Reads nothing."""
        source = self._source
        out = Originals(source=source.copy() if source is not None else None)
        dict.update(out, dict.items(self))
        out.changes = list(self.changes)
        out._added, out._replaced = set(self._added), set(self._replaced)
        out.where = self.where
        return out

    def holds(self, call_id: str) -> bool:
        """Whether an original of ``call_id`` is kept (set since the load, or stored); never
        raises for a damaged or foreign stored record (one read of a lazy source, cached)."""
        if dict.__contains__(self, call_id):
            return True
        return self._source is not None and self._source.exists(call_id)

    def _read(self, call_id: str) -> ToolResult | None:
        if dict.__contains__(self, call_id):
            return dict.__getitem__(self, call_id)
        if self._source is None:
            return None
        return self._source.get(call_id)

    def get(self, call_id: str, default: Any = None) -> Any:
        found = self._read(call_id)
        return default if found is None else found

    def __getitem__(self, call_id: str) -> ToolResult:
        found = self._read(call_id)
        if found is None:
            raise KeyError(call_id)
        return found

    def __contains__(self, call_id: object) -> bool:
        return isinstance(call_id, str) and self._read(call_id) is not None

    def keep_stored(self) -> tuple[int | None, int | None]:
        """Read the stored originals their store still holds, giving up the others (the store
        lost them: :mod:`regio.persistence._lostparts`); those set since the load stay. Returns
        ``(lost, stored at the load)`` (``None``: the store did not say how many it held)."""
        source = self._source
        if source is None:
            return 0, 0
        count, replaced = source.count, len(self._replaced)
        stored = source.all(own=list(dict.keys(self)), replaced=self._replaced, complete=False)
        self._merge(stored)
        return (None if count is None else max(0, count - len(stored) - replaced)), count

    def load_all(self) -> Originals:
        """Read every stored original (once), in order: the stored ones not set since the
        load, then the ones set since, as set. Returns ``self``."""
        if self._source is None:
            return self
        return self._merge(self._source.all(own=list(dict.keys(self)), replaced=self._replaced))

    def _merge(self, stored: dict[str, ToolResult]) -> Originals:
        """Take ``stored`` (read from the source, which is dropped) before the originals set
        since the load."""
        self._source = None
        new = {k: dict.__getitem__(self, k) for k in dict.keys(self)}
        dict.clear(self)
        for k, v in stored.items():
            if k not in new:
                dict.__setitem__(self, k, v)
        dict.update(self, new)
        return self

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self.load_all())

    def __len__(self) -> int:
        return dict.__len__(self.load_all())

    def keys(self) -> Any:
        return dict.keys(self.load_all())

    def values(self) -> Any:
        return dict.values(self.load_all())

    def items(self) -> Any:
        return dict.items(self.load_all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Originals):
            other.load_all()
        return dict.__eq__(self.load_all(), other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return f"Originals({dict.__repr__(self.load_all())})"

    def copy(self) -> dict[str, ToolResult]:
        return dict(self.items())

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def __ior__(  # type: ignore[override,misc]
        self, other: Mapping[str, ToolResult] | Iterable[tuple[str, ToolResult]]
    ) -> Originals:
        self.update(other)  # logged like any set (dict's |= would bypass it)
        return self

    def setdefault(self, call_id: str, default: Any = None) -> Any:
        found = self._read(call_id)
        if found is None:
            self[call_id] = default
            return default
        return found

    def pop(self, *args: Any) -> Any:
        raise TypeError("relief originals are append-only: an original is never removed")

    def __delitem__(self, call_id: str) -> None:
        raise TypeError("relief originals are append-only: an original is never removed")

    def popitem(self) -> Any:
        raise TypeError("relief originals are append-only: an original is never removed")

    def clear(self) -> None:
        raise TypeError("relief originals are append-only: an original is never removed")


class ReliefBook(msgspec.Struct):
    """``stages``: stage name -> :class:`StageTally`; ``originals``: call id -> the tool
    result as received, for results changed on admission (the transcript holds the others;
    an :class:`Originals`, whatever mapping it is given)."""

    stages: dict[str, StageTally] = msgspec.field(default_factory=dict)
    originals: dict[str, ToolResult] = msgspec.field(default_factory=Originals)

    def __post_init__(self) -> None:
        if not isinstance(self.originals, Originals):
            self.originals = Originals(self.originals)

    def tally(self, stage: str) -> StageTally:
        """The tally of ``stage`` (created on first use)."""
        return self.stages.setdefault(stage, StageTally())
