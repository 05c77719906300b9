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
layout state remembers while the provider may hold them, ``LayoutState.held``,
:mod:`regio.layout.held`, then the prefixes the frozen tail copies follow,
``TailCopy.follows``, however old) is 20 or more positions
before the newest — that block (``spare``): after blocks were appended it is the previous
request's newest marker; after the conversation was rewritten from some point (stale tail
copies collected, a region's notes gone, old tool results cleared) it is the last prefix
before that point the provider still holds, which the newest marker's lookback would not
reach. When a slot is free, the last tail copy of a region that did not also
change on the previous request (``tail``), so the copy is read back once it freezes into the
conversation (:mod:`regio.layout.tail`).
"""

from __future__ import annotations

from collections.abc import Sequence

from regio.content import ToolResult, ToolUse

from .model import Breakpoint, LayoutBlock

__all__ = [
    "LOOKBACK",
    "MAX_BREAKPOINTS",
    "MESSAGE_MARK_EVERY",
    "Wanted",
    "check_ttls",
    "levels",
    "place_marks",
    "positions",
    "regio_wanted",
    "stable_run_end",
]

MAX_BREAKPOINTS = 4
LOOKBACK = 20
MESSAGE_MARK_EVERY = 16
_TTL_RANK = {"1h": 2, "5m": 1}


def _run_kind(b: LayoutBlock) -> str | None:
    if isinstance(b.block, ToolUse):
        return "tool_use"
    if isinstance(b.block, ToolResult):
        return "tool_result"
    return None


def positions(blocks: Sequence[LayoutBlock]) -> list[int]:
    """Anthropic lookback positions (1-based): consecutive tool_use or tool_result blocks share
    one position."""
    out: list[int] = []
    for k, b in enumerate(blocks):
        if k == 0:
            out.append(1)
            continue
        kind = _run_kind(b)
        same = kind is not None and kind == _run_kind(blocks[k - 1])
        out.append(out[-1] if same else out[-1] + 1)
    return out


def _cacheable_at_or_before(blocks: Sequence[LayoutBlock], index: int) -> int | None:
    for k in range(index, -1, -1):
        if blocks[k].cacheable:
            return k
    return None


#: A wanted marker: (block index, TTL, slot).
Wanted = tuple[int, str, str]
#: Priority of the ``regio`` slots when more than 4 markers are wanted.
_REGIO_RANK = {"stable": 0, "newest": 1, "spare": 2, "settled": 3, "tail": 4}


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
) -> list[Wanted]:
    """The ``regio`` markers (see the module docstring), by priority ``stable``, ``newest``,
    ``spare``, ``settled``, ``tail``."""
    sys_idx, msg_idx = levels(blocks)
    last_sys = sys_idx[-1] if sys_idx else None
    wanted: list[Wanted] = []
    stable_end = stable_run_end(blocks)
    if stable_end is not None:
        wanted.append((stable_end, stable_ttl, "stable"))
    if last_sys is not None and (stable_end is None or last_sys > stable_end):
        wanted.append((last_sys, stable_ttl, "settled"))
    newest = next(
        (k for k in reversed(msg_idx) if blocks[k].origin not in ("pending", "progress")), None
    )
    if newest is not None:
        wanted.append((newest, ttl, "newest"))
        hashes = set(previous_marks)
        if previous_newest is not None:
            hashes.add(previous_newest)
        if hashes:
            prev = next(
                (k for k in reversed(msg_idx) if k < newest and blocks[k].prefix_hash in hashes),
                None,
            )
            if prev is not None and positions(blocks[prev : newest + 1])[-1] - 1 >= LOOKBACK:
                wanted.append((prev, ttl, "spare"))
    if tail_index is not None and blocks[tail_index].level == "tail":
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


def stable_run_end(blocks: Sequence[LayoutBlock]) -> int | None:
    """Last index of the leading run of tool blocks and stable-region system blocks."""
    end = None
    for k, b in enumerate(blocks):
        if b.level == "tools" or (b.level == "system" and b.volatility == "stable"):
            end = k
        else:
            break
    return end
