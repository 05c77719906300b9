"""Region sections: the text blocks a strategy places in the system prompt or the tail.

A :class:`Section` is one text block with its token count, its region and typed provenance
(``volatility``, ``chunk``); ``source`` is a display label (``<volatility>:<region>[#<chunk>]``).
:func:`whole_section` renders a region as one block; :func:`chunked_sections` packs a grows
region's entries into frozen chunks (:mod:`regio.layout.chunks`). Strategies
(:mod:`regio.layout.strategy`, :mod:`regio.layout.comparison`) compose them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import partial
from typing import Protocol

import attrs

from regio.content import Entry

from .chunks import chunk_text, heading, pack_chunks
from .model import ChunkState
from .protocols import RegionLike, WindowLike, count_text

__all__ = [
    "NO_MEMO",
    "LayoutMemo",
    "Section",
    "chunked_sections",
    "holds_summaries",
    "kind_rank",
    "renders_itself",
    "whole_section",
]


def kind_rank(region: object) -> int:
    """The rank of ``region``'s kind in the ``kind`` layout (lower first), the class attribute
    :attr:`regio.regions.Region.kind_rank` its kind declares (1 for an object without one)."""
    return int(getattr(type(region), "kind_rank", 1))


def renders_itself(region: object) -> bool:
    """Whether ``region``'s kind owns its text (``custom``'s render hook): laid out as one
    section, never settled or chunked (:attr:`regio.regions.Region.renders_itself`)."""
    return bool(getattr(type(region), "renders_itself", False))


def holds_summaries(region: object) -> bool:
    """Whether ``region``'s kind holds compaction summaries (``compact_history``;
    :attr:`regio.regions.Region.holds_summaries`)."""
    return bool(getattr(type(region), "holds_summaries", False))


class LayoutMemo(Protocol):
    """What a session remembers between its requests to lay regions out (the render log,
    :class:`regio.layout.RenderLog`): entry digests and the sections of closed chunks. Both
    return exactly what computing afresh returns."""

    def entry_digest(self, entry: Entry) -> str:
        """``entry.digest``."""
        ...

    def section(self, key: Hashable, build: Callable[[], Section]) -> Section:
        """``build()``, remembered under the value ``key`` (all ``build`` depends on)."""
        ...


class _NoMemo:
    """Remembers nothing (a single request)."""

    def entry_digest(self, entry: Entry) -> str:
        return entry.digest

    def section(self, key: Hashable, build: Callable[[], Section]) -> Section:
        return build()


NO_MEMO: LayoutMemo = _NoMemo()


@attrs.frozen
class Section:
    """One text block to place: ``text``, ``tokens``, ``region`` (or ``None``), ``source`` (a
    label), ``volatility`` (the region's; ``mixed`` for a section joining several) and
    ``chunk`` (the chunk number of a grows-region chunk)."""

    text: str
    tokens: int
    region: str | None
    source: str
    volatility: str | None = None
    chunk: int | None = None


def whole_section(
    window: WindowLike, r: RegionLike, volatility: str | None = None
) -> Section | None:
    """Region ``r`` rendered as one section (``None`` when its text is blank); ``volatility``:
    the one it is laid out with (default its declared one)."""
    text = r.render_text()
    if not text.strip():
        return None
    head = count_text(window, heading(r.name, r.description)) if getattr(r, "heading", True) else 0
    tokens = r.used_tokens + head
    vol = volatility or r.volatility
    return Section(text, tokens, r.name, f"{vol}:{r.name}", vol)


def chunked_sections(
    window: WindowLike,
    r: RegionLike,
    settled: Mapping[str, Sequence[Entry]] | None,
    previous: Mapping[str, Sequence[ChunkState]],
    chunk_tokens: int,
    chunks_used: dict[str, tuple[ChunkState, ...]],
    memo: LayoutMemo | None = None,
) -> list[Section]:
    """Grows region ``r`` as frozen chunks of its ``settled`` entries (all entries when
    ``settled`` is ``None``), reusing the ``previous`` boundaries; records the chunks in
    ``chunks_used`` (``memo``: the session's :class:`LayoutMemo`, default none). A custom region
    (its render hook owns the text) is one section."""
    memo = memo or NO_MEMO
    if renders_itself(r):
        s = whole_section(window, r)
        return [s] if s else []
    entries = list(settled[r.name]) if settled is not None else list(r.entries)
    chunks = pack_chunks(entries, previous.get(r.name, ()), chunk_tokens, memo.entry_digest)
    chunks_used[r.name] = tuple(chunks)
    by_id = {e.id: e for e in entries}

    def build(n: int, c: ChunkState) -> Section:
        members = [by_id[i] for i in c.entry_ids]
        text = chunk_text(r.name, r.description, n, members)
        label = text[: len(text) - len("\n".join(e.text for e in members))]
        tokens = c.tokens + count_text(window, label)
        return Section(text, tokens, r.name, f"grows:{r.name}#{n}", "grows", n)

    return [
        memo.section((r.name, r.description, n, c), partial(build, n, c))
        for n, c in enumerate(chunks)
    ]
