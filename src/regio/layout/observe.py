"""Observed volatility: what each region's writes really do between requests, and where the
``regio`` layout places the region because of it (DESIGN.md section 3 item 7; docs/layout.md,
"Observed volatility").

A declared volatility is a claim. A region declared ``grows`` sits before the conversation in
frozen chunks, which pays only while it really only appends: a write that removes or rewrites
one of its entries changes bytes before the conversation, and the provider writes everything
after the region (the whole conversation) to its cache again. So the layout watches every
region declared ``stable`` or ``grows``: at each request it compares the region's entries with
those of the previous request (ids and digests, only when the region's version moved) and
records a :class:`regio.layout.RegionChange` (entries appended, rewritten, removed; the first
byte the change invalidated and the tokens after it). Then:

* a region declared ``grows`` that removed or rewrote entries in any of its last
  :data:`OBSERVED_CHANGES` changes is laid out as ``rewritten``: in the freezing tail after the
  conversation, where a change invalidates only itself. It moves in the request that saw the
  removal, whose change already invalidated the bytes after the region, so the move itself
  costs no extra cache write. A removal in a request that rewrites the conversation from its
  start anyway (its opening changed, :func:`opening_digest`: a compaction summarized the
  region, or the conversation, into a ``compact_history``) does not count: there it cost
  little more in the grows place, while in the tail a region appended to on every request is
  sent whole on every request (a tail copy that changes again never freezes);
* a region declared ``stable`` that changed between requests :data:`STABLE_CHANGES` times
  among its last changes is laid out by what those changes did: ``grows`` when they only
  appended, ``rewritten`` otherwise. One change is tolerated (a prompt edited once costs one
  rewrite; it is reported once as ``stable_region_changed``);
* a region whose declared writer replaces what it stored (``Region.replacing_writer``, set
  from the blueprint: a ``park`` capture, a ``footer``, a relief ``route`` by key; see
  :mod:`regio.blueprint.writers`) is laid out as ``rewritten`` from the first request;
* a region moved toward the tail goes back toward its declared place only when its last
  :data:`OBSERVED_CHANGES` changes allow it (for ``grows``: none of them removed or rewrote),
  and only in a request that rewrites the conversation anyway (its opening changed: a
  compaction or an eviction), so the move back costs no cache write of its own either.

Each move is reported once, with the figures, as a :class:`VolatilityObserved` event;
:func:`placement_note` phrases the same for ``Engine.snapshot()``. Everything is decided from
the window and the previous :class:`regio.layout.LayoutState` (no clock, no randomness): the
same session (the same writes between the same requests) renders the same bytes, and the
watch travels in the layout state, so a saved and loaded engine carries on identically.
Regions declared ``rewritten`` are never watched (they already sit in the tail), nor the
conversation and the ``compact_history`` regions (the summaries open the messages by their
own rule).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from regio.content import Entry, content_hash

from .events import VolatilityObserved
from .model import LayoutBlock, LayoutState, RegionChange, RegionWatch
from .protocols import RegionLike
from .sections import holds_summaries

__all__ = [
    "OBSERVED_CHANGES",
    "STABLE_CHANGES",
    "Observation",
    "diff_entries",
    "observe_regions",
    "opening_digest",
    "placement_note",
    "with_offsets",
]

#: Changes between requests remembered per region: the evidence window of the rule. A region
#: declared ``grows`` returns from the tail after this many changes that only appended.
OBSERVED_CHANGES = 8
#: Changes between requests that show a region declared ``stable`` is not stable.
STABLE_CHANGES = 2
#: Digest characters kept per entry (64 bits: enough to see that an entry changed).
_DIGEST_CHARS = 16
_LEVEL = {"stable": 0, "grows": 1, "rewritten": 2}


def diff_entries(
    before: Sequence[tuple[str, str]], after: Sequence[tuple[str, str]]
) -> tuple[int, int, int]:
    """``(appended, rewritten, removed)`` from ``before`` to ``after`` ((id, digest) pairs in
    order). An entry is appended when it is new and comes after every entry kept; a new entry
    before a kept one, a kept entry with another digest or out of its order is rewritten
    (a replacement in place counts once, as rewritten, not also as removed); an entry gone
    is removed."""
    old = dict(before)
    now = dict(after)
    kept = [i for i, _ in after if i in old]
    last_kept = max((k for k, (i, _) in enumerate(after) if i in old), default=-1)
    new_before = sum(1 for i, _ in after[: last_kept + 1] if i not in old)
    appended = sum(1 for i, _ in after[last_kept + 1 :] if i not in old)
    changed = sum(1 for i in kept if now[i] != old[i])
    order = [i for i, _ in before if i in now]
    moved = sum(1 for a, b in zip(order, kept, strict=True) if a != b)
    gone = len(old) - len(kept)
    rewritten = changed + moved + new_before
    return appended, rewritten, gone - min(gone, new_before)


def _identity(region: object, entry: Entry) -> str:
    """What makes an entry the same entry from one request to the next: its key in a keyed
    region (a write under an existing key replaces that entry in place), else its id."""
    if getattr(region, "kind", "") == "keyed" and entry.key:
        return f"key:{entry.key}"
    return entry.id


def _target(declared: str, changes: Sequence[RegionChange], writer: str) -> tuple[str, str]:
    """Where the rule puts a region: (volatility, reason; ``""`` as declared)."""
    if writer:
        return "rewritten", "writer"
    churned = any(c.counts for c in changes)
    if declared == "grows":
        return ("rewritten", "removes") if churned else ("grows", "")
    if len(changes) >= STABLE_CHANGES:
        return ("rewritten", "removes") if churned else ("grows", "changes")
    return declared, ""


@attrs.frozen
class Observation:
    """The watch of one request: ``placement`` (region -> the volatility it is laid out
    with, for every region that is not laid out as declared), ``watches`` (the new
    :class:`RegionWatch` per watched region, offsets not yet known), ``events`` and the
    request's ``opening`` (:func:`opening_digest`)."""

    placement: dict[str, str]
    watches: dict[str, RegionWatch]
    events: list[VolatilityObserved]
    opening: str = ""


def _figures(changes: Sequence[RegionChange]) -> dict[str, int]:
    churns = [c for c in changes if c.churn]
    firsts = [c.at for c in churns if c.at >= 0]
    return {
        "changes": len(changes),
        "churns": len(churns),
        "appended": sum(c.appended for c in changes),
        "rewritten": sum(c.rewritten for c in changes),
        "removed": sum(c.removed for c in changes),
        "rewrite_tokens": sum(c.after for c in churns),
        "first_changed": min(firsts, default=-1),
    }


def _change(
    prev: RegionWatch,
    entries: tuple[tuple[str, str], ...],
    request: int,
    state: LayoutState,
    free: bool,
) -> RegionChange | None:
    """The change from ``prev`` to ``entries`` (``None``: none), with the first byte it
    invalidated under the previous placement: an append to a ``grows`` region travels as a
    note and invalidates nothing sent; anything else invalidates from the region's first
    byte in the previous request. ``free``: the request rewrites the conversation anyway."""
    appended, rewritten, removed = diff_entries(prev.entries, entries)
    if not (appended or rewritten or removed):
        return None
    quiet = prev.placed == "grows" and not (rewritten or removed)
    at = -1 if quiet or prev.offset < 0 else prev.offset
    after = max(0, state.tokens - at) if at >= 0 else 0
    return RegionChange(request, appended, rewritten, removed, at, after, free)


def opening_digest(conversation: Sequence[Entry], regions: Sequence[RegionLike]) -> str:
    """A digest of what opens the conversation: its first entry and the versions of the
    ``compact_history`` regions whose summaries open the messages. It changes when the
    conversation is rewritten from its start (a compaction, an eviction)."""
    first = conversation[0].digest if conversation else ""
    versions = [(r.name, int(r.version)) for r in regions if holds_summaries(r)]
    return content_hash(["regio.layout.opening", first, versions])


def observe_regions(
    regions: Sequence[RegionLike],
    prev: LayoutState | None,
    *,
    request: int,
    prefix_rewritten: bool,
    digest: Callable[[Entry], str],
    opening: str = "",
) -> Observation:
    """Watch ``regions`` (the window's regions other than the conversation) for one request
    (number ``request``); ``prev``: the previous layout state (``None`` on a first request);
    ``prefix_rewritten``: this request rewrites the conversation anyway (its opening changed,
    :func:`opening_digest`); ``digest``: an entry's digest (the session's render log keeps them);
    ``opening``: this request's :func:`opening_digest`, kept for the next."""
    placement: dict[str, str] = {}
    watches: dict[str, RegionWatch] = {}
    events: list[VolatilityObserved] = []
    before = prev.watch if prev is not None else {}
    for r in regions:
        declared = str(r.volatility)
        if declared not in ("stable", "grows") or holds_summaries(r):
            continue
        old = before.get(r.name)
        changes: tuple[RegionChange, ...] = old.changes if old is not None else ()
        if old is not None and old.version == int(r.version):
            entries = old.entries
        else:
            entries = tuple((_identity(r, e), digest(e)[:_DIGEST_CHARS]) for e in r.entries)
            change = None
            if old is not None and prev is not None:
                change = _change(old, entries, request, prev, prefix_rewritten)
            if change is not None:
                changes = (*changes, change)[-OBSERVED_CHANGES:]
        writer = str(getattr(r, "replacing_writer", "") or "")
        target, reason = _target(declared, changes, writer)
        placed, why = target, reason
        back = old is not None and old.placed and _LEVEL[target] < _LEVEL[old.placed]
        if back and old is not None and not prefix_rewritten:
            placed, why = old.placed, old.reason  # back only where the prefix is rewritten
        if placed != declared:
            placement[r.name] = placed
        moved = placed != (old.placed if old is not None and old.placed else declared)
        if moved:
            events.append(
                VolatilityObserved(
                    r.name,
                    declared,
                    placed,
                    why if placed != declared else "appends_only",
                    writer=writer,
                    **_figures(changes),
                )
            )
        watches[r.name] = RegionWatch(int(r.version), entries, changes, placed, why)
    return Observation(placement, watches, events, opening)


def with_offsets(
    watches: Mapping[str, RegionWatch],
    prev: LayoutState | None,
    head: Sequence[LayoutBlock],
    fresh: Sequence[LayoutBlock],
    fresh_at: int,
    tail: Sequence[LayoutBlock],
    tail_at: int,
    noted: frozenset[str],
) -> dict[str, RegionWatch]:
    """``watches`` with each region's first byte in this request (tokens): its first system
    or tail block (``head`` from offset 0, ``tail`` from ``tail_at``), else its first note:
    the note's offset when it was first sent (a note never moves until the conversation is
    rewritten, which settles it), found among the ``fresh`` conversation blocks (from
    ``fresh_at``) or carried from ``prev``; ``noted``: the regions with unsettled notes now.
    Only the head, the tail and the fresh blocks are read, never the whole conversation."""
    first: dict[str, int] = {}
    for blocks, start in ((head, 0), (tail, tail_at)):
        pos = start
        for b in blocks:
            if b.region is not None and b.region in watches and b.region not in first:
                first[b.region] = pos
            pos += b.tokens
    before = prev.watch if prev is not None else {}
    pos = fresh_at
    for b in fresh:
        region = b.region
        w = watches.get(region) if region is not None else None
        if region is not None and w is not None and w.placed == "grows" and region not in first:
            old = before.get(region)
            carried = old is not None and old.placed == "grows" and old.offset >= 0
            first[region] = old.offset if carried and old is not None else pos
        pos += b.tokens
    out: dict[str, RegionWatch] = {}
    for name, w in watches.items():
        offset = first.get(name, -1)
        old = before.get(name)
        if offset < 0 and name in noted and old is not None and old.placed == w.placed == "grows":
            offset = old.offset  # its notes were sent earlier and have not moved
        out[name] = RegionWatch(w.version, w.entries, w.changes, w.placed, w.reason, offset)
    return out


_WHY = {
    "writer": "its writer {writer} replaces what it stored",
    "removes": "it removed or rewrote entries between requests",
    "changes": "it changed between requests {changes} times, only appending",
}


def placement_note(declared: str, watch: RegionWatch | None, writer: str = "") -> str:
    """One line saying where the ``regio`` layout put a region declared ``declared`` and why,
    with the figures of its last changes (``""`` when it is laid out as declared or was never
    watched): for ``Engine.snapshot()``."""
    if watch is None or not watch.placed or watch.placed == declared:
        return ""
    f = _figures(watch.changes)
    why = _WHY.get(watch.reason, watch.reason).format(writer=writer or "?", **f)
    text = f"declared {declared}, laid out as {watch.placed}: {why}"
    if f["changes"]:
        text += (
            f"; last {f['changes']} changes between requests: {f['appended']} appended, "
            f"{f['rewritten']} rewritten, {f['removed']} removed"
        )
    if f["rewrite_tokens"]:
        text += (
            f"; {f['churns']} of them re-wrote {f['rewrite_tokens']:,} tokens to the cache "
            f"(first changed byte at token {f['first_changed']:,})"
        )
    return text
