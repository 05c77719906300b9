"""Breakpoint planning for Anthropic prompt caching.

Rules used:

* at most :data:`MAX_BREAKPOINTS` (4) ``cache_control`` markers per request;
* a read probes the marked block, then the last block of each of the 19 earlier positions
  (:data:`LOOKBACK` = 20 positions, the marker being #1); a run of consecutive ``tool_use``
  blocks, or of consecutive ``tool_result`` blocks, counts as one position (:func:`positions`);
* a marker whose cumulative prefix is below the model minimum (``min_tokens``, default 1,024)
  writes nothing, so it is not placed;
* markers never sit on thinking blocks or empty text; they move to the nearest earlier block
  that can carry one;
* 1h markers must precede 5m markers.

Each strategy says which markers it wants (:meth:`regio.layout.LayoutStrategy.wanted`; the
comparison layouts' wishes are in :mod:`regio.layout.comparison`) and :func:`place_marks` places
them by the rules above. ``regio`` (:func:`regio_wanted`) marks
the end of the stable prefix (``stable``), the end of the settled chunks (``settled``), the
newest conversation block (``newest``), — when the deepest block of this request whose prefix
an earlier request marked (the previous request's markers, then the ``newest`` markers the
layout state remembers while the provider may hold them, ``LayoutState.held``, below,
then the prefixes the frozen tail copies follow,
``TailCopy.follows``, however old) is 20 or more positions
before the newest — that block (``spare``): after blocks were appended it is the previous
request's newest marker; after the conversation was rewritten from some point (stale tail
copies collected, a region's notes gone, old tool results cleared) it is the last prefix
before that point the provider still holds, which the newest marker's lookback would not
reach. When a slot is free, a tail copy
(``tail``, :func:`regio.layout.tail.settling_copies`):
the one that maximises the expected saving of writing the copies up to it, from how often
each region's earlier copies were still current on the next request against the provider's
:attr:`~regio.layout.CacheEconomics.mark_odds`, so the copies are read back once they freeze
into the conversation (:mod:`regio.layout.tail`); a tail whose regions are rewritten on most
requests gets no marker (its copies would be written at the provider's write price and
replaced unread). When a slot is still free, the end of the summaries that open the
conversation (``history``, :func:`history_end`; the task message merged after them included):
a relief pass rewrites the conversation from the first result it clears, and a compaction
that keeps the summary as it was rewrites what follows it, and the marker lets the next
request read the summaries back with everything before them (a request that writes no
conversation prefix, below, places it only on summaries the previous request marked, or a
prefix the layout remembers, to read them: with a new summary on every request such writes
were never read, 1.0% dearer in a reviewer's engine run). Without it such a request
reads only a conversation prefix an earlier request marked within reach, or, where tools and
system prompt together are below the provider's minimum (1,024 tokens for Claude Sonnet, as
in the coding example), nothing at all. It can cost a little: a read renews only the entry it
hits, so a request that reads the summaries back leaves the ``stable`` entry unrenewed, and
the first request after a later compaction (a new summary) may find it expired
(docs/benchmark.md, "The summaries' own marker": 0.03-0.32% dearer in 3 of 36 runs, 25
cheaper, up to 5.8%).

Remembered marks (``LayoutState.held``; :func:`remembered`, :func:`held_after`). Every
request's ``newest`` marker sits on a prefix the provider then holds for the marker's TTL
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

**A write no request reads** (``newest_unread``; :mod:`regio.policies.rewriteodds`). When the
next request is expected to rewrite the conversation (a compaction or a relief pass at the
next turn boundary, with odds above ``1 - mark_odds``), the ``newest`` marker would write the
conversation at the write price for no read: the request places no ``newest`` (nor ``tail``)
marker, and its ``spare`` sits on the deepest prefix an earlier request marked (the newest
block's own included), wherever it is, so the request still reads what the cache holds (after
a pause past the TTL it writes that prefix again, as the newest marker would have); what
follows it is sent uncached (1.0x the input price instead of 1.25x). The odds are kept in the
layout state (``LayoutState.rewrite_odds``), so the engine lays a retry of the same request
out with the odds it had, and it places the same markers.

The lower bound on ``until`` ignores renewals by reads the layout cannot see (the provider
may hold a prefix longer, never shorter, unless it evicts early, which the TTL does not cover).
A clock that runs backward between requests (a process-local monotonic clock across a
reload) can only make a ``spare`` sit on an expired prefix, which writes it again at the
price the request pays for it anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import attrgetter

from regio.cache.walk import LOOKBACK_POSITIONS, lookback_positions, looks_back_to
from regio.content import ToolResult, ToolUse

from .model import MARKED_HISTORY, Breakpoint, HeldMark, LayoutBlock, LayoutState

__all__ = [
    "HELD_CAP",
    "HELD_DIGITS",
    "LOOKBACK",
    "MAX_BREAKPOINTS",
    "MESSAGE_MARK_EVERY",
    "TTL_SECONDS",
    "Wanted",
    "carried_prefixes",
    "check_ttls",
    "held_after",
    "held_marks",
    "history_end",
    "levels",
    "place_marks",
    "positions",
    "previous_marks",
    "regio_wanted",
    "remembered",
    "stable_run_end",
    "stride",
]

MAX_BREAKPOINTS = 4
LOOKBACK = LOOKBACK_POSITIONS
MESSAGE_MARK_EVERY = 16
_TTL_RANK = {"1h": 2, "5m": 1}


#: The block kinds whose consecutive runs share one lookback position.
_RUNS = ("tool_use", "tool_result")


def _run_kind(b: LayoutBlock) -> str | None:
    if isinstance(b.block, ToolUse):
        return "tool_use"
    if isinstance(b.block, ToolResult):
        return "tool_result"
    return None


def positions(blocks: Sequence[LayoutBlock]) -> list[int]:
    """Anthropic lookback positions (1-based): consecutive tool_use or tool_result blocks share
    one position (:func:`regio.cache.walk.lookback_positions`)."""
    return lookback_positions([_run_kind(b) for b in blocks], _RUNS)


def _cacheable_at_or_before(blocks: Sequence[LayoutBlock], index: int) -> int | None:
    for k in range(index, -1, -1):
        if blocks[k].cacheable:
            return k
    return None


#: A wanted marker: (block index, TTL, slot).
Wanted = tuple[int, str, str]
#: Priority of the ``regio`` slots when more than 4 markers are wanted.
_REGIO_RANK = {"stable": 0, "newest": 1, "spare": 2, "settled": 3, "tail": 4, "history": 5}


def check_ttls(ttl: str, stable_ttl: str | None) -> str:
    """The stable TTL (default ``ttl``). Raises ``ValueError`` for an unknown TTL or a
    ``stable_ttl`` shorter than ``ttl`` (1h markers must precede 5m markers)."""
    stable_ttl = stable_ttl or ttl
    for t in (ttl, stable_ttl):
        if t not in _TTL_RANK:
            raise ValueError(f"TTL must be '5m' or '1h', got {t!r}")
    if _TTL_RANK[stable_ttl] < _TTL_RANK[ttl]:
        raise ValueError(
            f"stable_ttl {stable_ttl!r} is shorter than ttl {ttl!r}; 1h markers must precede "
            "5m markers (Anthropic), so use stable_ttl='1h' or ttl='5m'"
        )
    return stable_ttl


def levels(blocks: Sequence[LayoutBlock]) -> tuple[range, range]:
    """The indices of the tools and system blocks and of the message blocks (levels are in
    order tools -> system -> messages -> tail, so only the ends are read)."""
    n_sys = 0
    while n_sys < len(blocks) and blocks[n_sys].level in ("tools", "system"):
        n_sys += 1
    msg_end = len(blocks)
    while msg_end > n_sys and blocks[msg_end - 1].level == "tail":
        msg_end -= 1
    return range(n_sys), range(n_sys, msg_end)


def regio_wanted(
    blocks: Sequence[LayoutBlock],
    *,
    ttl: str,
    stable_ttl: str,
    previous_newest: str | None = None,
    previous_marks: Sequence[str] = (),
    tail_index: int | None = None,
    system_changed: bool = False,
    newest_unread: bool = False,
) -> list[Wanted]:
    """The ``regio`` markers (see the module docstring), by priority ``stable``, ``newest``,
    ``spare``, ``settled``, ``tail``, ``history``; with ``newest_unread`` no ``newest`` nor
    ``tail`` marker, a ``history`` marker only on a prefix in ``previous_marks``, and
    the ``spare`` on the deepest remembered prefix at any distance (module doc, "A write no
    request reads")."""
    sys_idx, msg_idx = levels(blocks)
    last_sys = sys_idx[-1] if sys_idx else None
    wanted: list[Wanted] = []
    marks = set(previous_marks)
    stable_end = stable_run_end(blocks)
    if stable_end is not None:
        wanted.append((stable_end, stable_ttl, "stable"))
    if last_sys is not None and (stable_end is None or last_sys > stable_end):
        wanted.append((last_sys, stable_ttl, "settled"))
    history = history_end(blocks, msg_idx)
    if history is not None and (not newest_unread or blocks[history].prefix_hash in marks):
        wanted.append((history, ttl, "history"))  # an unread request writes nothing new
    newest = next(
        (k for k in reversed(msg_idx) if blocks[k].origin not in ("pending", "progress")), None
    )
    if newest is not None:
        if not newest_unread:
            wanted.append((newest, ttl, "newest"))
        hashes = set(marks)
        if previous_newest is not None:
            hashes.add(previous_newest)
        if hashes:
            last = newest if newest_unread else newest - 1  # unmarked, the newest may be held
            prev = next(
                (k for k in reversed(msg_idx) if k <= last and blocks[k].prefix_hash in hashes),
                None,
            )
            # a spare on the remembered prefix the newest mark's lookback no longer reaches
            # (or, with no newest mark, at any distance: it is then the only read)
            if prev is not None:
                distance = positions(blocks[prev : newest + 1])[-1] - 1
                if newest_unread or not looks_back_to(distance, LOOKBACK):
                    wanted.append((prev, ttl, "spare"))
    if tail_index is not None and blocks[tail_index].level == "tail" and not newest_unread:
        wanted.append((tail_index, ttl, "tail"))
    wanted.sort(key=lambda w: _REGIO_RANK[w[2]])
    return wanted


def place_marks(
    blocks: Sequence[LayoutBlock], wanted: Sequence[Wanted], min_tokens: int
) -> list[Breakpoint]:
    """Place ``wanted`` markers by the common rules: at most 4 (earlier wishes first), each on
    the nearest cacheable block at or before its index, none whose prefix is below
    ``min_tokens`` (tokens), and a 1h marker after a 5m one lowered to 5m."""
    out: dict[int, Breakpoint] = {}
    for index, t, slot in wanted:
        if len(out) >= MAX_BREAKPOINTS:
            break
        k = _cacheable_at_or_before(blocks, index)
        if k is None or k in out:
            continue
        if _prefix_tokens(blocks, k, min_tokens) < min_tokens:
            continue
        out[k] = Breakpoint(k, t, slot)  # type: ignore[arg-type]
    marks = sorted(out.values(), key=lambda m: m.index)
    seen_short = False
    fixed: list[Breakpoint] = []
    for m in marks:
        if m.ttl == "5m":
            seen_short = True
        elif seen_short:
            m = Breakpoint(m.index, "5m", m.slot)
        fixed.append(m)
    return fixed[:MAX_BREAKPOINTS]


def _prefix_tokens(blocks: Sequence[LayoutBlock], k: int, enough: int) -> int:
    """Tokens of ``blocks[: k + 1]``, summed until ``enough`` is reached (then a lower bound
    that is ``>= enough``, which is all the minimum-prefix rule needs)."""
    total = 0
    for i in range(k + 1):
        total += blocks[i].tokens
        if total >= enough:
            break
    return total


def history_end(blocks: Sequence[LayoutBlock], msg_idx: range) -> int | None:
    """Last index of the summary messages that open the conversation (``origin ==
    "summary"``: the ``compact_history`` regions' entries), ``None`` when it does not open
    with one."""
    end = None
    for k in msg_idx:
        if blocks[k].origin != "summary":
            break
        end = k
    return end


def stable_run_end(blocks: Sequence[LayoutBlock]) -> int | None:
    """Last index of the leading run of tool blocks and stable-region system blocks."""
    end = None
    for k, b in enumerate(blocks):
        if b.level == "tools" or (b.level == "system" and b.volatility == "stable"):
            end = k
        else:
            break
    return end


#: Seconds a cache entry lives after the request that wrote or read it started (Anthropic's
#: ``5m`` and ``1h`` TTLs, cache-rules.md 2.1).
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}

#: The most marks ``LayoutState.held`` keeps: the last :data:`MARKED_HISTORY` and, thinned,
#: older ones reaching about 64 requests back (past a 5-minute TTL for calls 5 s apart).
HELD_CAP = 32

#: Hex digits of a prefix hash a remembered mark keeps (64 bits: no collision within a
#: session's few hundred prefixes; a quarter of the state a full hash would take).
HELD_DIGITS = 16

_REQUEST = attrgetter("request")


class _Every:
    """Contains every prefix hash (``held_after`` without the request's hashes)."""

    def __contains__(self, item: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())


_EVERY = _Every()


def stride(age: int) -> int:
    """1 for a mark fewer than :data:`MARKED_HISTORY` requests old, else the power of two
    ``2 ** bit_length(age // MARKED_HISTORY)`` (2 for 16-31, 4 for 32-63, 8 for 64-127)."""
    if age < MARKED_HISTORY:
        return 1
    return 1 << (age // MARKED_HISTORY).bit_length()


def held_marks(state: LayoutState) -> tuple[HeldMark, ...]:
    """The state's marks; a state saved before ``held`` carries only ``marked`` (no request
    numbers, no times)."""
    if state.held or not state.marked:
        return state.held
    return tuple(HeldMark(0, None, h[:HELD_DIGITS]) for h in state.marked[-MARKED_HISTORY:])


def _live(m: HeldMark, now: float | None) -> bool:
    return now is not None and m.until is not None and m.until > now


def remembered(state: LayoutState | None, now: float | None) -> tuple[str, ...]:
    """The prefix hashes (their first :data:`HELD_DIGITS` hex digits) of ``state``'s
    remembered marks the provider may hold at ``now`` (seconds; ``None``: unknown), newest
    first: the last :data:`MARKED_HISTORY`, then the older ones whose ``until`` is after
    ``now``."""
    if state is None:
        return ()
    held = held_marks(state)
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
    present: Iterable[str] = _EVERY,
) -> tuple[HeldMark, ...]:
    """``LayoutState.held`` after request number ``request`` sent at ``now`` (seconds;
    ``None``: unknown) whose markers sat on ``marks`` ((TTL, prefix hash) each) and whose
    ``newest`` marker on ``newest`` ((TTL, prefix hash); ``None``: it had none);
    ``present``: the prefix hashes of that request's blocks (default: every hash). Hashes
    are kept as their first :data:`HELD_DIGITS` hex digits.

    A marker on a remembered prefix renews it (read, or written again): it counts as marked
    by this request (``request``, and ``until`` at least ``now`` + the marker's TTL) and as
    ``read``, so the prefix a ``spare`` read back stays remembered for the next rewrite.
    Then the newest is appended and the older marks kept while live, still a prefix of this
    request (one it does not carry was rewritten: no later request can read it) and, unless
    ``read``, on their :func:`stride` (module docstring)."""
    held: Sequence[HeldMark] = held_marks(state) if state is not None else ()
    keys = present if isinstance(present, _Every) else {h[:HELD_DIGITS] for h in present}
    if now is not None:
        renewed: dict[str, float] = {}
        for ttl, full in marks:
            ph = full[:HELD_DIGITS]
            renewed[ph] = max(renewed.get(ph, now), now + TTL_SECONDS.get(ttl, 300.0))
        held = sorted((_renew(m, request, renewed) for m in held), key=_REQUEST)
    if newest is not None:
        ttl, ph = newest[0], newest[1][:HELD_DIGITS]
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
        and m.prefix_hash in keys
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


def carried_prefixes(
    state: LayoutState | None, committed: Mapping[str, str], others: Iterable[LayoutBlock]
) -> dict[str, str]:
    """The full prefix hashes, by their first :data:`HELD_DIGITS` digits, of ``state``'s
    remembered marks (``LayoutState.held``) a request carries: looked up in ``committed``
    (the render log's committed conversation blocks, ``RenderLog.short``), else found among
    ``others`` (the request's other blocks: head, fresh messages, tail), so the work follows
    the blocks not yet committed, not the conversation's length."""
    held = held_marks(state) if state is not None else ()
    if not held:
        return {}
    out = {k: committed[k] for m in held if (k := m.prefix_hash) in committed}
    wanted = {m.prefix_hash for m in held} - out.keys()
    if wanted:
        found = ((b.prefix_hash[:HELD_DIGITS], b.prefix_hash) for b in others)
        out.update((k, full) for k, full in found if k in wanted)
    return out


def previous_marks(
    prev: LayoutState | None, now: float | None, carried: dict[str, str]
) -> tuple[str, ...]:
    """The prefix hashes earlier requests marked: the previous request's, then the ones the
    state remembers the provider may still hold at ``now`` (``LayoutState.held``,
    :func:`regio.layout.breakpoints.remembered`, kept short: those the request carries,
    in full, :func:`carried_prefixes`), newest first, then the prefixes the frozen tail
    copies follow
    (``TailCopy.follows``: marked by the requests that emitted them, which may be older than
    ``held`` remembers), newest copy first."""
    if prev is None:
        return ()
    held = (carried[k] for k in remembered(prev, now) if k in carried)
    follows = (c.follows for c in reversed(prev.frozen) if c.follows)
    return tuple(dict.fromkeys((*(ph for _, ph in prev.marks), *held, *follows)))
