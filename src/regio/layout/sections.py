"""Where each region goes under each strategy (DESIGN.md section 3).

:func:`system_and_tail` returns the system sections and the tail sections of one request. A
section is one text block with its token count, region and ``source`` tag
``<volatility>:<region>[#<chunk>]`` (the planner reads the volatility from it).

* ``naive``: every non-conversation region in declaration order, joined into one system block.
* ``kind``: one system block per region, ordered by kind (pinned, compact_history; keyed,
  checklist, compacting, custom; temporary, clearable), declaration order within a rank.
* ``volatility``: one system block per region sorted by volatility (stable, grows, rewritten;
  kind rank breaks ties), grows regions in frozen chunks; everything in the system prompt.
* ``regio``: stable regions, then grows regions in frozen chunks (settled entries only), then
  grows ``compact_history`` regions, all in the system prompt; rewritten regions in the tail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from regio.content import Entry

from .chunks import chunk_text, heading, pack_chunks
from .model import ChunkState
from .protocols import count_text

__all__ = ["KIND_RANK", "STRATEGIES", "Section", "system_and_tail"]

STRATEGIES: tuple[str, ...] = ("naive", "kind", "volatility", "regio")
KIND_RANK: dict[str, int] = {
    "pinned": 0,
    "compact_history": 0,
    "keyed": 1,
    "checklist": 1,
    "compacting": 1,
    "custom": 1,
    "temporary": 2,
    "clearable": 2,
}
VOL_RANK: dict[str, int] = {"stable": 0, "grows": 1, "rewritten": 2}


@attrs.frozen
class Section:
    """One text block to place: ``text``, ``tokens``, ``region`` (or ``None``), ``source``."""

    text: str
    tokens: int
    region: str | None
    source: str


def _shown(r: Any) -> bool:
    return bool(r.entries) or r.kind == "custom"


def _whole(window: Any, r: Any) -> Section | None:
    text = r.render_text()
    if not text.strip():
        return None
    tokens = r.used_tokens + count_text(window, heading(r.name, r.description))
    return Section(text, tokens, r.name, f"{r.volatility}:{r.name}")


def _chunked(
    window: Any, r: Any, entries: Sequence[Entry], chunks: Sequence[ChunkState]
) -> list[Section]:
    by_id = {e.id: e for e in entries}
    out = []
    for n, c in enumerate(chunks):
        members = [by_id[i] for i in c.entry_ids]
        text = chunk_text(r.name, r.description, n, members)
        label = text[: len(text) - len("\n".join(e.text for e in members))]
        out.append(
            Section(text, c.tokens + count_text(window, label), r.name, f"grows:{r.name}#{n}")
        )
    return out


def system_and_tail(
    window: Any,
    strategy: str,
    regions: Sequence[Any],
    *,
    settled: Mapping[str, Sequence[Entry]] | None = None,
    previous_chunks: Mapping[str, Sequence[ChunkState]] | None = None,
    chunk_tokens: int,
) -> tuple[list[Section], list[Section], dict[str, tuple[ChunkState, ...]]]:
    """System sections, tail sections and the chunk boundaries used, for ``regions`` (the
    window's non-conversation regions in declaration order).

    ``settled``: for ``regio``, the settled entries of each grows region (others: all entries).
    Raises ``ValueError`` for an unknown strategy.
    """
    if strategy not in STRATEGIES:
        raise ValueError(
            f"unknown layout strategy {strategy!r}; use one of {', '.join(STRATEGIES)}"
        )
    prev = previous_chunks or {}
    chunks_used: dict[str, tuple[ChunkState, ...]] = {}
    shown = [r for r in regions if _shown(r)]

    def chunked(r: Any) -> list[Section]:
        if r.kind == "custom":  # a render hook owns the text; it cannot be chunked
            s = _whole(window, r)
            return [s] if s else []
        entries = list(settled[r.name]) if settled is not None else list(r.entries)
        chunks = pack_chunks(entries, prev.get(r.name, ()), chunk_tokens)
        chunks_used[r.name] = tuple(chunks)
        return _chunked(window, r, entries, chunks)

    if strategy == "naive":
        parts = [s for s in (_whole(window, r) for r in shown) if s]
        if not parts:
            return [], [], {}
        vol = "stable" if all(r.volatility == "stable" for r in shown) else "mixed"
        text = "\n\n".join(p.text for p in parts)
        return [Section(text, sum(p.tokens for p in parts), None, f"{vol}:naive")], [], {}
    if strategy == "kind":
        ordered = sorted(shown, key=lambda r: KIND_RANK.get(r.kind, 1))
        return [s for s in (_whole(window, r) for r in ordered) if s], [], {}
    if strategy == "volatility":
        ordered = sorted(
            shown, key=lambda r: (VOL_RANK.get(r.volatility, 2), KIND_RANK.get(r.kind, 1))
        )
        system: list[Section] = []
        for r in ordered:
            if r.volatility == "grows":
                system.extend(chunked(r))
            else:
                s = _whole(window, r)
                if s:
                    system.append(s)
        return system, [], chunks_used
    # regio
    stable = [r for r in shown if r.volatility == "stable"]
    grows = [r for r in regions if r.volatility == "grows"]
    grows_plain = [r for r in grows if r.kind != "compact_history"]
    grows_hist = [r for r in grows if r.kind == "compact_history"]
    rewritten = [r for r in shown if r.volatility not in ("stable", "grows")]
    system = [s for s in (_whole(window, r) for r in stable) if s]
    for r in [*grows_plain, *grows_hist]:
        system.extend(chunked(r))
    tail = [s for s in (_whole(window, r) for r in rewritten) if s]
    return system, tail, chunks_used
