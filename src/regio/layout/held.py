"""The marked prefixes the ``regio`` layout remembers between requests (``LayoutState.held``)
so the ``spare`` marker can read back the deepest one before a rewrite
(:mod:`regio.layout.breakpoints`).

Every request's ``newest`` marker sits on a prefix the provider then holds for the marker's TTL
(Anthropic: 5 minutes or 1 hour, counted from the start of the request that wrote or read it;
each read renews it; ../shared/spec/cache-rules.md section 2.1 and 4.1, the simulator of
:mod:`regio.cache.anthropic`). A request that rewrites its conversation in place from an old
entry (relief clearing a tool result dozens of requests old) is written again from that entry
on; the prefix before it was marked by the request that preceded the entry, and the provider
still holds it while that marker's TTL runs.

The rule (deterministic: a function of the request numbers, times and hashes only):

* the ``newest`` prefixes of the last :data:`MARKED_HISTORY` marking requests are remembered
  and offered to ``spare`` whatever the time (as before ``held``: a tool loop sends them
  seconds apart, and a marker on an expired prefix costs no more than the write the request
  pays anyway);
* older ones are remembered only with a known time (``assemble(sent_at=...)``; the engine
  passes its clock) and only while ``until`` (the start of the last request that marked the
  prefix plus that marker's TTL) is after the request's time: the layout never offers a
  prefix the provider may have dropped, so an older one can only make a request read more;
* a marker on a remembered prefix (the ``spare`` reading it back) renews it: it counts as
  marked by that request and as ``read``, which thinning never drops, so successive
  rewrites (relief waves clearing later and later results) each read back the prefix the
  previous one read;
* an older mark the request does not carry (the conversation was rewritten before it) is
  dropped: no later request can read it;
* they thin with age: one of :func:`stride` requests (2 for 16-31 requests old, 4 for 32-63,
  8 for 64-127, ...: a power of two, kept when the request number is a multiple of it, so
  a mark once dropped stays dropped), and at most :data:`HELD_CAP` marks in all (the
  oldest go first). A rewrite at an older entry reads back the remembered prefix at most one
  stride before it.

The lower bound on ``until`` ignores renewals by reads the layout cannot see (the provider
may hold a prefix longer, never shorter, unless it evicts early, which the TTL does not cover).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from operator import attrgetter

from .model import MARKED_HISTORY, HeldMark, LayoutState

__all__ = ["HELD_CAP", "TTL_SECONDS", "held_after", "remembered", "stride"]

#: Seconds a cache entry lives after the request that wrote or read it started (Anthropic's
#: ``5m`` and ``1h`` TTLs, cache-rules.md 2.1).
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}

#: The most marks ``LayoutState.held`` keeps: the last :data:`MARKED_HISTORY` and, thinned,
#: older ones reaching about 64 requests back (past a 5-minute TTL for calls 5 s apart).
HELD_CAP = 32

_REQUEST = attrgetter("request")


class _Every:
    """Contains every prefix hash (``held_after`` without the request's hashes)."""

    def __contains__(self, item: object) -> bool:
        return True


_EVERY = _Every()


def stride(age: int) -> int:
    """1 for a mark fewer than :data:`MARKED_HISTORY` requests old, else the power of two
    ``2 ** bit_length(age // MARKED_HISTORY)`` (2 for 16-31, 4 for 32-63, 8 for 64-127)."""
    if age < MARKED_HISTORY:
        return 1
    return 1 << (age // MARKED_HISTORY).bit_length()


def _entries(state: LayoutState) -> tuple[HeldMark, ...]:
    """The state's marks; a state saved before ``held`` carries only ``marked`` (no request
    numbers, no times)."""
    if state.held or not state.marked:
        return state.held
    return tuple(HeldMark(0, None, h) for h in state.marked[-MARKED_HISTORY:])


def _live(m: HeldMark, now: float | None) -> bool:
    return now is not None and m.until is not None and m.until > now


def remembered(state: LayoutState | None, now: float | None) -> tuple[str, ...]:
    """The prefix hashes of ``state``'s remembered marks the provider may hold at ``now``
    (seconds; ``None``: unknown), newest first: the last :data:`MARKED_HISTORY`, then the
    older ones whose ``until`` is after ``now``."""
    if state is None:
        return ()
    held = _entries(state)
    recent = held[-MARKED_HISTORY:]
    older = [m for m in held[:-MARKED_HISTORY] if _live(m, now)]
    return tuple(m.prefix_hash for m in reversed((*older, *recent)))


def held_after(
    state: LayoutState | None,
    *,
    request: int,
    now: float | None,
    newest: tuple[str, str] | None,
    marks: Iterable[tuple[str, str]],
    present: Container[str] = _EVERY,
) -> tuple[HeldMark, ...]:
    """``LayoutState.held`` after request number ``request`` sent at ``now`` (seconds;
    ``None``: unknown) whose markers sat on ``marks`` ((TTL, prefix hash) each) and whose
    ``newest`` marker on ``newest`` ((TTL, prefix hash); ``None``: it had none);
    ``present``: the prefix hashes of that request's blocks (default: every hash).

    A marker on a remembered prefix renews it (read, or written again): it counts as marked
    by this request (``request``, and ``until`` at least ``now`` + the marker's TTL) and as
    ``read``, so the prefix a ``spare`` read back stays remembered for the next rewrite.
    Then the newest is appended and the older marks kept while live, still a prefix of this
    request (one it does not carry was rewritten: no later request can read it) and, unless
    ``read``, on their :func:`stride` (module docstring)."""
    held: Sequence[HeldMark] = _entries(state) if state is not None else ()
    if now is not None:
        renewed: dict[str, float] = {}
        for ttl, ph in marks:
            renewed[ph] = max(renewed.get(ph, now), now + TTL_SECONDS.get(ttl, 300.0))
        held = sorted((_renew(m, request, renewed) for m in held), key=_REQUEST)
    if newest is not None:
        ttl, ph = newest
        until = None
        if now is not None:  # a prefix marked again is remembered once, as this request's
            until = now + TTL_SECONDS.get(ttl, 300.0)
            held = [m for m in held if m.prefix_hash != ph or m.until is None]
        held = [*held, HeldMark(request, until, ph)]
    older = [
        m
        for m in held[:-MARKED_HISTORY]
        if m.request > 0
        and _live(m, now)
        and m.prefix_hash in present
        and (m.read or m.request % stride(request - m.request) == 0)
    ]
    kept = (*older, *held[-MARKED_HISTORY:])
    return kept[-HELD_CAP:]


def _renew(m: HeldMark, request: int, renewed: dict[str, float]) -> HeldMark:
    """``m`` marked again by request number ``request`` until ``renewed[hash]``, when it is."""
    until = renewed.get(m.prefix_hash)
    if until is None or m.until is None:
        return m
    return HeldMark(request, max(m.until, until), m.prefix_hash, True)
