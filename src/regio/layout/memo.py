"""Bounded memo tables that make :func:`regio.layout.assemble` incremental (DESIGN.md section 6:
per-turn cost proportional to what changed, not to the window).

The conversation is append-only between compactions, so almost every block of a request is the
very same (frozen, immutable) object as in the previous request. These tables remember, per
object, what ``assemble`` derived from it — a block's digest, an entry's per-block token split
— and, per (previous prefix hash, digest), the next prefix hash, so an unchanged prefix costs
dictionary look-ups instead of sha256 and canonical JSON.

Purity: a table only ever returns what the function it stands for would compute from the same
inputs. Object-keyed tables hold a strong reference to the key object and check identity
(``is``) on every hit, so a recycled ``id()`` can never return another object's value. Every
table is bounded by ``maxsize`` entries, the oldest inserted dropped first (module-level; not
part of the serialized :class:`regio.layout.LayoutState`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["ByIdentity", "ByKey", "clear_memos", "register"]

V = TypeVar("V")
#: Default bound of each table (entries).
MAXSIZE = 200_000


class ByIdentity(Generic[V]):
    """``get(obj, compute)`` = ``compute(obj)``, remembered per object identity."""

    def __init__(self, maxsize: int = MAXSIZE) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[tuple[int, Hashable], tuple[Any, V]] = OrderedDict()

    def get(self, obj: Any, compute: Callable[[Any], V], extra: Hashable = None) -> V:
        """The value for ``obj`` (and the hashable ``extra`` qualifier)."""
        key = (id(obj), extra)
        hit = self._items.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = compute(obj)
        self._items[key] = (obj, value)
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget everything."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class ByKey(Generic[V]):
    """``get(key, compute)`` = ``compute()`` for a hashable value key."""

    def __init__(self, maxsize: int = MAXSIZE) -> None:
        self.maxsize = maxsize
        self._items: dict[Hashable, V] = {}

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The value for ``key``; computed once per key while it stays in the table."""
        try:
            return self._items[key]
        except KeyError:
            pass
        value = compute()
        if len(self._items) >= self.maxsize:  # drop the oldest half (insertion order)
            for k in list(self._items)[: self.maxsize // 2]:
                del self._items[k]
        self._items[key] = value
        return value

    def clear(self) -> None:
        """Forget everything."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class Clearable(Protocol):
    """Anything :func:`clear_memos` can clear."""

    def clear(self) -> None: ...


_TABLES: list[Clearable] = []


def register(table: Clearable) -> Any:
    """Register a table so :func:`clear_memos` clears it; returns it."""
    _TABLES.append(table)
    return table


def clear_memos() -> None:
    """Clear every memo table (tests; frees memory after a long session)."""
    for t in _TABLES:
        t.clear()
