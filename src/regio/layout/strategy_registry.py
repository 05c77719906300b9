"""The registry of layout strategies: a strategy found by name, and the calls that take one.

The built-in strategies are registered here: ``regio`` (:data:`regio.layout.strategy.REGIO`)
and the comparison layouts ``naive``, ``kind``, ``volatility``
(:mod:`regio.layout.comparison`); :func:`register_strategy` adds another (a later
registration of a name replaces it). :func:`strategy_for` returns the object for a name and
raises :class:`regio.layout.LayoutError` naming the known ones for an unknown name;
:func:`plan_breakpoints` and :func:`system_and_tail` take a name or a strategy object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from regio.content import Entry

from .comparison import KIND, NAIVE, VOLATILITY
from .model import Breakpoint, ChunkState, LayoutBlock
from .protocols import RegionLike, WindowLike
from .repair import LayoutError
from .sections import NO_MEMO, LayoutMemo, Section
from .strategy import REGIO, LayoutStrategy

__all__ = ["STRATEGIES", "plan_breakpoints", "register_strategy", "strategy_for", "system_and_tail"]

#: Strategy names, in report order (the comparison layouts first).
STRATEGIES: tuple[str, ...] = ("naive", "kind", "volatility", "regio")

_REGISTRY: dict[str, LayoutStrategy] = {s.name: s for s in (NAIVE, KIND, VOLATILITY, REGIO)}


def register_strategy(strategy: LayoutStrategy) -> LayoutStrategy:
    """Register ``strategy`` under its ``name`` (a later registration replaces it)."""
    _REGISTRY[strategy.name] = strategy
    return strategy


def strategy_for(strategy: str | LayoutStrategy) -> LayoutStrategy:
    """The strategy object for ``strategy`` (an object is returned as is). Raises
    :class:`LayoutError` naming the known strategies for an unknown name."""
    if not isinstance(strategy, str):
        return strategy
    found = _REGISTRY.get(strategy)
    if found is None:
        names = dict.fromkeys([*STRATEGIES, *_REGISTRY])
        raise LayoutError(f"unknown layout strategy {strategy!r}; use one of {', '.join(names)}")
    return found


def plan_breakpoints(
    strategy: str | LayoutStrategy, blocks: Sequence[LayoutBlock], **options: Any
) -> list[Breakpoint]:
    """The markers ``strategy`` (a name or a :class:`regio.layout.LayoutStrategy`) plans for
    ``blocks``; ``options`` as for :meth:`LayoutStrategy.plan_breakpoints` (``ttl``,
    ``stable_ttl``, ``min_tokens``, ``previous_newest``, ``previous_marks``, ``tail_index``,
    ``system_changed``). Raises ``ValueError`` for an unknown strategy or TTL."""
    return strategy_for(strategy).plan_breakpoints(blocks, **options)


def system_and_tail(
    window: WindowLike,
    strategy: str | LayoutStrategy,
    regions: Sequence[RegionLike],
    *,
    settled: Mapping[str, Sequence[Entry]] | None = None,
    previous_chunks: Mapping[str, Sequence[ChunkState]] | None = None,
    chunk_tokens: int,
    memo: LayoutMemo | None = None,
    placement: Mapping[str, str] | None = None,
) -> tuple[list[Section], list[Section], dict[str, tuple[ChunkState, ...]]]:
    """System sections, tail sections and the chunk boundaries used by ``strategy`` (a name or
    a :class:`regio.layout.LayoutStrategy`) for ``regions`` (the window's non-conversation
    regions in declaration order; ``placement``: region -> laid-out volatility where it is
    not the declared one). Raises ``ValueError`` for an unknown strategy."""
    return strategy_for(strategy).sections(
        window,
        regions,
        settled=settled,
        previous_chunks=previous_chunks or {},
        chunk_tokens=chunk_tokens,
        memo=memo or NO_MEMO,
        **({"placement": placement} if placement is not None else {}),
    )
