"""``Engine.snapshot()``: a readable breakdown of the window.

Per region: kind, entries, tokens, budget, volatility (declared, and the one the last
request laid it out with, with a note when they differ: observed volatility,
:mod:`regio.layout.observe`), content hash, pending compaction work and the last request's
cache outcome (``read`` when all of the region's blocks were inside the prefix the provider
reported as read from cache, ``partial`` when some were, ``written`` / ``uncached``
otherwise, ``None`` before any observed request). Totals: used, ceiling, calibrated size,
tools, usage totals; and the last compaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from regio.layout import RegionWatch, Request
from regio.layout.observe import placement_note
from regio.session._budget import EngineBudget
from regio.session._session import CompactionResult, Session
from regio.session._usage import UsageLedger, UsageRecord, UsageTotals

if TYPE_CHECKING:
    from regio.regions import Region, Window

__all__ = [
    "EngineSnapshot",
    "RegionSnapshot",
    "cache_outcomes",
    "region_snapshots",
    "take_snapshot",
]


class RegionSnapshot(msgspec.Struct, frozen=True):
    """One region (tokens): ``cache`` is the last request's outcome for its blocks and
    ``request_tokens`` the tokens it had in that request; ``volatility`` is the declared one,
    ``laid_out`` the one the last request laid the region out with (``""`` before any
    request) and ``placement`` says why they differ, with the figures of its last changes
    between requests (``""`` when they do not)."""

    name: str
    kind: str
    entries: int
    tokens: int
    budget: int
    volatility: str
    admission: str
    content_hash: str
    pending_ids: tuple[str, ...] = ()
    pending_tokens: int = 0
    cache: str | None = None
    request_tokens: int = 0
    laid_out: str = ""
    placement: str = ""


class EngineSnapshot(msgspec.Struct, frozen=True):
    """The whole engine at a glance (tokens; USD)."""

    provider: str
    model: str
    turn: int
    regions: tuple[RegionSnapshot, ...]
    used_tokens: int
    window_tokens: int
    limit: int
    ceiling: int
    tools_tokens: int
    calibrated_tokens: int
    calibration_factor: float
    transcript_records: int
    usage: UsageTotals
    last_compaction: CompactionResult | None = None
    last_request_tokens: int = 0
    last_cache_read_tokens: int = 0


def cache_outcomes(
    req: Request | None, record: UsageRecord | None
) -> tuple[dict[str, str], dict[str, int]]:
    """Per region: the cache outcome of its blocks in ``req`` given the provider's reported
    usage ``record`` (``read`` | ``partial`` | ``written`` | ``uncached``), and its tokens."""
    outcome: dict[str, str] = {}
    sizes: dict[str, int] = {}
    if req is None:
        return outcome, sizes
    spans: dict[str, list[tuple[int, int]]] = {}
    pos = 0
    for block in req.blocks:
        start, pos = pos, pos + block.tokens
        if block.region is not None:
            spans.setdefault(block.region, []).append((start, pos))
            sizes[block.region] = sizes.get(block.region, 0) + block.tokens
    if record is None or record.api == "none":
        return outcome, sizes
    read = record.cache_read_tokens
    written = read + record.cache_creation_tokens
    for region, parts in spans.items():
        inside = sum(1 for _, end in parts if end <= read)
        if inside == len(parts):
            outcome[region] = "read"
        elif inside:
            outcome[region] = "partial"
        elif all(end <= written for _, end in parts):
            outcome[region] = "written"
        else:
            outcome[region] = "uncached"
    return outcome, sizes


def _laid_out(r: Region, watch: dict[str, RegionWatch] | None) -> tuple[str, str]:
    """(the volatility the last request laid ``r`` out with, the note saying why it is not the
    declared one); ``("", "")`` before any request."""
    if watch is None:
        return "", ""
    w = watch.get(r.name)
    if w is None or not w.placed:
        return str(r.volatility), ""
    return w.placed, placement_note(r.volatility, w, getattr(r, "replacing_writer", ""))


def region_snapshots(
    window: Window,
    cache: dict[str, str],
    sizes: dict[str, int],
    watch: dict[str, RegionWatch] | None = None,
) -> tuple[RegionSnapshot, ...]:
    """One :class:`RegionSnapshot` per region of ``window``, in order; ``cache`` and ``sizes``:
    each region's cache outcome and request tokens (:func:`cache_outcomes`); ``watch``: the
    last request's :attr:`regio.layout.LayoutState.watch` (``None``: no request yet)."""
    pending = window.pending_compactions()
    return tuple(
        RegionSnapshot(
            name=r.name,
            kind=r.kind,
            entries=len(r.entries),
            tokens=r.used_tokens,
            budget=r.budget,
            volatility=r.volatility,
            admission=r.admission,
            content_hash=r.content_hash(),
            pending_ids=tuple(p.id for p in pending if p.region == r.name),
            pending_tokens=sum(p.tokens for p in pending if p.region == r.name),
            cache=cache.get(r.name),
            request_tokens=sizes.get(r.name, 0),
            laid_out=laid[0],
            placement=laid[1],
        )
        for r in window.regions
        for laid in (_laid_out(r, watch),)
    )


def take_snapshot(
    c: Session, budget: EngineBudget, ledger: UsageLedger, last_request: Request | None
) -> EngineSnapshot:
    """The :class:`EngineSnapshot` of an engine's parts: its session (window, transcript,
    book), budget, usage ledger and last request."""
    window = c.window
    cache, sizes = cache_outcomes(last_request, ledger.last)
    watch = last_request.state.watch if last_request is not None else None
    regions = region_snapshots(window, cache, sizes, watch)
    record = ledger.last
    return EngineSnapshot(
        provider=c.options.provider,
        model=c.options.model,
        turn=window.turn,
        regions=regions,
        used_tokens=window.used_tokens,
        window_tokens=window.max_tokens,
        limit=budget.limit,
        ceiling=budget.ceiling(),
        tools_tokens=budget.tools_tokens(),
        calibrated_tokens=budget.size(),
        calibration_factor=budget.calibration.factor(budget.calibration_key()),
        transcript_records=len(c.transcript),
        usage=ledger.totals(),
        last_compaction=c.book.last,
        last_request_tokens=last_request.tokens if last_request else 0,
        last_cache_read_tokens=record.cache_read_tokens if record else 0,
    )
