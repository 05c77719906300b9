"""The comparison layouts the bench measures ``regio`` against (registered by
:mod:`regio.layout.strategy_registry`).

* ``naive``: every non-conversation region in declaration order, joined into one system
  block; one marker at the end of the system prompt.
* ``kind``: one system block per region, ordered by kind (:func:`regio.layout.kind_rank`:
  pinned, compact_history; keyed, checklist, compacting, custom; temporary, clearable),
  declaration order within a rank; markers at the end of the system prompt and on the last
  message block.
* ``volatility``: one system block per region sorted by volatility (stable, grows, rewritten;
  kind rank breaks ties), grows regions in frozen chunks, everything in the system prompt;
  markers at the end of the longest all-stable prefix (>= 1,024 tokens) and on the deepest
  non-rewritten system block, plus every 16th conversation block (the last 2), none in a
  request whose system prefix changed.

None of them settles notes or keeps a freezing tail. They are not production layouts: they
exist so the bench can show what each of the ``regio`` rules buys.

The breakpoint options :meth:`regio.layout.LayoutStrategy.wanted` declares are declared here
once, as the fields of :class:`MarkOptions`, for all three layouts: an option that is not one of
them (a misspelling) is a ``TypeError`` naming it, never silently ignored. ``sections`` names
every option :meth:`regio.layout.LayoutStrategy.sections` declares, and no other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from regio.content import Entry
from regio.layout.breakpoints import MESSAGE_MARK_EVERY, Wanted, levels, stable_run_end
from regio.layout.model import DEFAULT_MIN_CACHE_TOKENS, ChunkState, LayoutBlock
from regio.layout.protocols import RegionLike, WindowLike
from regio.layout.sections import (
    LayoutMemo,
    Section,
    chunked_sections,
    kind_rank,
    whole_section,
)
from regio.layout.strategy import StrategyBase

__all__ = [
    "KIND",
    "NAIVE",
    "VOLATILITY",
    "KindLayout",
    "MarkOptions",
    "NaiveLayout",
    "VolatilityLayout",
]

_Sections = tuple[list[Section], list[Section], dict[str, tuple[ChunkState, ...]]]
_VOL_RANK: dict[str, int] = {"stable": 0, "grows": 1, "rewritten": 2}


def _shown(regions: Sequence[RegionLike]) -> list[RegionLike]:
    return [r for r in regions if r.entries or r.kind == "custom"]


def _last_system(blocks: Sequence[LayoutBlock], ttl: str) -> list[Wanted]:
    sys_idx, _ = levels(blocks)
    return [(sys_idx[-1], ttl, "system")] if sys_idx else []


@attrs.frozen(kw_only=True)
class MarkOptions:
    """The options of one :meth:`regio.layout.LayoutStrategy.wanted` call, declared once for
    every bench layout: ``ttl`` / ``stable_ttl`` (``"5m"`` | ``"1h"``, the marks' TTLs),
    ``previous_newest`` (prefix hash of the newest message block the previous request
    marked), ``previous_marks`` (prefix hashes earlier requests marked, the previous
    request's first), ``tail_index`` (index of the tail block to mark, ``None``: none) and
    ``system_changed`` (the system prefix differs from the previous request's);
    ``newest_unread`` (the next request is expected to rewrite the conversation; the bench
    layouts mark as they always did). Any other keyword is a ``TypeError`` naming it
    (attrs)."""

    ttl: str
    stable_ttl: str = ""
    previous_newest: str | None = None
    previous_marks: Sequence[str] = ()
    tail_index: int | None = None
    system_changed: bool = False
    newest_unread: bool = False


class _BenchLayout(StrategyBase):
    """:meth:`wanted` reads the options into :class:`MarkOptions` (any option it does not
    declare is a ``TypeError``) and hands them to the strategy's :meth:`marks`."""

    def wanted(
        self, blocks: Sequence[LayoutBlock], *, ttl: str, stable_ttl: str, **options: Any
    ) -> list[Wanted]:
        return self.marks(blocks, MarkOptions(ttl=ttl, stable_ttl=stable_ttl, **options))

    def marks(self, blocks: Sequence[LayoutBlock], options: MarkOptions) -> list[Wanted]:
        """The markers this layout asks for, ``(index, ttl, slot)``, in priority order."""
        raise NotImplementedError


class _WholeSectionsLayout(_BenchLayout):
    """Every shown region as one whole section, in :meth:`order`, all in the system prompt
    (:meth:`system` may join them); no chunks, no tail."""

    def sections(
        self,
        window: WindowLike,
        regions: Sequence[RegionLike],
        *,
        settled: Mapping[str, Sequence[Entry]] | None = None,
        previous_chunks: Mapping[str, Sequence[ChunkState]] | None = None,
        chunk_tokens: int = 0,
        memo: LayoutMemo | None = None,
    ) -> _Sections:
        shown = self.order(_shown(regions))
        parts = [s for s in (whole_section(window, r) for r in shown) if s]
        return self.system(parts, shown), [], {}

    def order(self, shown: list[RegionLike]) -> list[RegionLike]:
        """The shown regions in the order their sections stand (here: as given)."""
        return shown

    def system(self, parts: list[Section], shown: list[RegionLike]) -> list[Section]:
        """The system sections made of ``parts`` (here: the parts themselves)."""
        return parts


class NaiveLayout(_WholeSectionsLayout):
    """Declaration order, one system block (see the module docstring)."""

    name = "naive"

    def system(self, parts: list[Section], shown: list[RegionLike]) -> list[Section]:
        if not parts:
            return []
        vol = "stable" if all(r.volatility == "stable" for r in shown) else "mixed"
        text = "\n\n".join(p.text for p in parts)
        tokens = sum(p.tokens for p in parts)
        return [Section(text, tokens, None, f"{vol}:naive", vol)]

    def marks(self, blocks: Sequence[LayoutBlock], options: MarkOptions) -> list[Wanted]:
        return _last_system(blocks, options.ttl)


class KindLayout(_WholeSectionsLayout):
    """Regions ordered by kind (see the module docstring)."""

    name = "kind"

    def order(self, shown: list[RegionLike]) -> list[RegionLike]:
        return sorted(shown, key=kind_rank)

    def marks(self, blocks: Sequence[LayoutBlock], options: MarkOptions) -> list[Wanted]:
        msg_idx = levels(blocks)[1]
        out = _last_system(blocks, options.ttl)
        if msg_idx:
            out.append((msg_idx[-1], options.ttl, "message"))
        return out


class VolatilityLayout(_BenchLayout):
    """Regions sorted by volatility, grows regions chunked (see the module docstring)."""

    name = "volatility"

    def sections(
        self,
        window: WindowLike,
        regions: Sequence[RegionLike],
        *,
        settled: Mapping[str, Sequence[Entry]] | None = None,
        previous_chunks: Mapping[str, Sequence[ChunkState]],
        chunk_tokens: int,
        memo: LayoutMemo,
    ) -> _Sections:
        ordered = sorted(
            _shown(regions), key=lambda r: (_VOL_RANK.get(r.volatility, 2), kind_rank(r))
        )
        chunks_used: dict[str, tuple[ChunkState, ...]] = {}
        system: list[Section] = []
        for r in ordered:
            if r.volatility == "grows":
                system.extend(
                    chunked_sections(
                        window, r, None, previous_chunks, chunk_tokens, chunks_used, memo
                    )
                )
            else:
                s = whole_section(window, r)
                if s:
                    system.append(s)
        return system, [], chunks_used

    def marks(self, blocks: Sequence[LayoutBlock], options: MarkOptions) -> list[Wanted]:
        sys_idx, msg_idx = levels(blocks)
        out: list[Wanted] = []
        stable_end = stable_run_end(blocks)
        cum = sum(b.tokens for b in blocks[: stable_end + 1]) if stable_end is not None else 0
        first = stable_end if stable_end is not None and cum >= DEFAULT_MIN_CACHE_TOKENS else None
        if first is not None:
            out.append((first, options.stable_ttl, "stable"))
        deep = [k for k in sys_idx if blocks[k].level == "tools" or _vol(blocks[k]) != "rewritten"]
        if deep and (first is None or deep[-1] > first):
            out.append((deep[-1], options.stable_ttl, "system"))
        if not options.system_changed:
            # every 16th content block of the conversation, the last 2 kept (computed, not
            # scanned: no pass over the conversation per request)
            last = len(msg_idx) // MESSAGE_MARK_EVERY
            out.extend(
                (msg_idx.start + m * MESSAGE_MARK_EVERY - 1, options.ttl, "message")
                for m in range(max(1, last - 1), last + 1)
            )
        return out


def _vol(b: LayoutBlock) -> str:
    return b.volatility or ""


NAIVE = NaiveLayout()
KIND = KindLayout()
VOLATILITY = VolatilityLayout()
