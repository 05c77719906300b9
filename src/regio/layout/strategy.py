"""Layout strategies as objects: the :class:`LayoutStrategy` protocol and the production one.

A :class:`LayoutStrategy` decides where each region goes (:meth:`~LayoutStrategy.sections`)
and where the cache markers go (:meth:`~LayoutStrategy.plan_breakpoints`), and says whether
it settles ``grows`` notes, keeps a freezing tail and lays regions out by what their writes
did. The production strategy is :data:`REGIO` (``regio``): stable regions, then grows regions
in frozen chunks (settled entries only), all in the system prompt; the ``compact_history``
summaries open the messages (never joined into the system text); rewritten regions in the
freezing tail after the conversation; each region by its observed volatility
(:mod:`regio.layout.observe`; docs/layout.md). The comparison layouts the bench
measures it against (``naive``, ``kind``, ``volatility``) are :mod:`regio.layout.comparison`;
:mod:`regio.layout.strategy_registry` finds any of them by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from regio.content import Entry

from .breakpoints import Wanted, check_ttls, place_marks, regio_wanted
from .model import DEFAULT_MIN_CACHE_TOKENS, Breakpoint, ChunkState, LayoutBlock
from .protocols import RegionLike, WindowLike
from .sections import (
    LayoutMemo,
    Section,
    chunked_sections,
    holds_summaries,
    renders_itself,
    whole_section,
)

__all__ = [
    "REGIO",
    "LayoutStrategy",
    "RegioStrategy",
]


class LayoutStrategy(Protocol):
    """Where regions and cache markers go. ``name``: the registry name; ``settles``: grows
    entries written mid-run travel as notes until they settle; ``freezing_tail``: rewritten
    regions go to the freezing tail; ``observes``: regions are laid out by what their writes
    did between requests, not only by their declaration (:mod:`regio.layout.observe`)."""

    name: str
    settles: bool
    freezing_tail: bool
    observes: bool

    def sections(
        self,
        window: WindowLike,
        regions: Sequence[RegionLike],
        *,
        settled: Mapping[str, Sequence[Entry]] | None,
        previous_chunks: Mapping[str, Sequence[ChunkState]],
        chunk_tokens: int,
        memo: LayoutMemo,
    ) -> tuple[list[Section], list[Section], dict[str, tuple[ChunkState, ...]]]:
        """System sections, tail sections and the chunk boundaries used for ``regions`` (the
        non-conversation regions in declaration order; ``settled``: the settled entries of
        each grows region, ``None``: all; ``memo``: the session's :class:`LayoutMemo`). A
        strategy that ``observes`` also takes ``placement``: region -> the volatility it is
        laid out with where that is not its declared one (:mod:`regio.layout.observe`)."""
        ...

    def wanted(
        self,
        blocks: Sequence[LayoutBlock],
        *,
        ttl: str,
        stable_ttl: str,
        previous_newest: str | None,
        previous_marks: Sequence[str],
        tail_index: int | None,
        system_changed: bool,
        newest_unread: bool,
    ) -> list[Wanted]:
        """The markers this strategy asks for, ``(index, ttl, slot)``, in priority order;
        ``previous_newest``: the prefix hash of the previous request's newest marker;
        ``previous_marks``: the prefix hashes earlier requests marked, the previous request's
        first (then the ``newest`` markers of the requests before it the state remembers);
        ``newest_unread``: the next request is expected to rewrite the conversation, so a
        marker on the newest block would be written and never read
        (:mod:`regio.policies.rewriteodds`)."""
        ...

    def plan_breakpoints(self, blocks: Sequence[LayoutBlock], **options: Any) -> list[Breakpoint]:
        """The markers of one request (see :func:`regio.layout.breakpoints.place_marks`)."""
        ...


class StrategyBase:
    """Shared :meth:`plan_breakpoints`: the strategy's wanted markers, placed by the common
    rules (at most 4, minimum prefix, cacheable blocks, 1h before 5m)."""

    name = ""
    settles = False
    freezing_tail = False
    observes = False
    #: ``compact_history`` summaries open the messages instead of sitting in the system.
    summaries_in_messages = False

    def wanted(
        self, blocks: Sequence[LayoutBlock], *, ttl: str, stable_ttl: str, **options: Any
    ) -> list[Wanted]:
        """The markers this strategy asks for, ``(index, ttl, slot)``, in priority order;
        ``options``: ``previous_newest``, ``previous_marks``, ``tail_index``,
        ``system_changed`` and ``newest_unread`` as :meth:`LayoutStrategy.wanted` declares
        them (a strategy names the ones it reads and takes the rest as ``**_``)."""
        raise NotImplementedError

    def plan_breakpoints(
        self,
        blocks: Sequence[LayoutBlock],
        *,
        ttl: str = "5m",
        stable_ttl: str | None = None,
        min_tokens: int = DEFAULT_MIN_CACHE_TOKENS,
        **options: Any,
    ) -> list[Breakpoint]:
        """Plan the markers of one request; returns them in block order (at most 4). Raises
        ``ValueError`` for an unknown TTL or a ``stable_ttl`` shorter than ``ttl``."""
        stable = check_ttls(ttl, stable_ttl)
        if not blocks:
            return []
        wanted = self.wanted(blocks, ttl=ttl, stable_ttl=stable, **options)
        return place_marks(blocks, wanted, min_tokens)


class RegioStrategy(StrategyBase):
    """The production layout (see the module docstring)."""

    name = "regio"
    settles = True
    freezing_tail = True
    observes = True
    summaries_in_messages = True

    def sections(
        self,
        window: WindowLike,
        regions: Sequence[RegionLike],
        *,
        settled: Mapping[str, Sequence[Entry]] | None,
        previous_chunks: Mapping[str, Sequence[ChunkState]],
        chunk_tokens: int,
        memo: LayoutMemo,
        placement: Mapping[str, str] | None = None,
    ) -> tuple[list[Section], list[Section], dict[str, tuple[ChunkState, ...]]]:
        chunks_used: dict[str, tuple[ChunkState, ...]] = {}
        placed = placement or {}

        def vol(r: RegionLike) -> str:
            return placed.get(r.name, r.volatility)

        # compact_history summaries open the messages (regio.layout.plan.summary_extras)
        regions = [r for r in regions if not holds_summaries(r)]
        shown = [r for r in regions if r.entries or renders_itself(r)]
        ordered = [r for r in regions if vol(r) == "grows"]
        stable = (whole_section(window, r) for r in shown if vol(r) == "stable")
        system = [s for s in stable if s]
        for r in ordered:
            system.extend(
                chunked_sections(
                    window, r, settled, previous_chunks, chunk_tokens, chunks_used, memo
                )
            )
        rewritten = [r for r in shown if vol(r) not in ("stable", "grows")]
        tail = [s for s in (whole_section(window, r, vol(r)) for r in rewritten) if s]
        return system, tail, chunks_used

    def wanted(self, blocks: Sequence[LayoutBlock], **options: Any) -> list[Wanted]:
        """:func:`regio.layout.breakpoints.regio_wanted` (``options`` as for
        :meth:`StrategyBase.wanted`)."""
        return regio_wanted(blocks, **options)


REGIO = RegioStrategy()
