"""Breakpoint planning for Anthropic prompt caching (cache-rules.md 2.1 and 4.1; DESIGN.md 3.6).

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

Per strategy (DESIGN.md section 3): ``naive`` marks the end of the system prompt; ``kind`` the
end of the system prompt and the last message block; ``volatility`` the end of the longest
all-stable prefix (>= 1,024 tokens) and the deepest non-rewritten system block, plus every 16th
conversation block (the last 2), none in a request whose system prefix changed; ``regio`` marks
the end of the stable prefix (``stable``), the end of the settled chunks (``settled``), the
newest conversation block (``newest``), — when the blocks added since the previous request
put the previous request's newest surviving marker 20 or more positions back — that previous
marker (``spare``), and, when a slot is free, the last tail copy of a region that did not also
change on the previous request (``tail``), so the copy is read back once it freezes into the
conversation (:mod:`regio.layout.tail`).
"""

from __future__ import annotations

from collections.abc import Sequence

from regio.content import ToolResult, ToolUse

from .model import Breakpoint, LayoutBlock

__all__ = ["LOOKBACK", "MAX_BREAKPOINTS", "MESSAGE_MARK_EVERY", "plan_breakpoints", "positions"]

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
    one position (cache-rules.md 4.1 step 2)."""
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


def plan_breakpoints(
    strategy: str,
    blocks: Sequence[LayoutBlock],
    *,
    ttl: str = "5m",
    stable_ttl: str | None = None,
    min_tokens: int = 1024,
    previous_newest: str | None = None,
    system_changed: bool = False,
    previous_marks: Sequence[str] = (),
    tail_index: int | None = None,
) -> list[Breakpoint]:
    """Plan the markers of one request; returns them in block order (at most 4).

    ``previous_newest``: prefix hash of the previous request's ``newest`` marker (``regio``);
    ``system_changed``: the system prefix differs from the previous request's (``volatility``);
    ``previous_marks``: prefix hashes of every marker of the previous request (``regio``: the
    ``spare`` goes on the newest of them still present when it is 20 or more positions back);
    ``tail_index``: the tail block to mark (``regio``: the last tail copy of a region that did
    not also change on the previous request, so an unchanged copy is read once frozen).
    When more than 4 are wanted, ``regio`` keeps them by priority ``stable``, ``newest``,
    ``spare``, ``settled``, ``tail``.
    Raises ``ValueError`` for an unknown strategy or TTL, or a ``stable_ttl`` shorter than
    ``ttl`` (1h markers must precede 5m markers).
    """
    stable_ttl = stable_ttl or ttl
    for t in (ttl, stable_ttl):
        if t not in _TTL_RANK:
            raise ValueError(f"TTL must be '5m' or '1h', got {t!r}")
    if _TTL_RANK[stable_ttl] < _TTL_RANK[ttl]:
        raise ValueError(
            f"stable_ttl {stable_ttl!r} is shorter than ttl {ttl!r}; 1h markers must precede "
            "5m markers (Anthropic), so use stable_ttl='1h' or ttl='5m'"
        )
    if not blocks:
        return []
    # levels are in order tools -> system -> messages -> tail: the tool and system blocks are
    # the leading run, the message blocks the run after it (found without reading the rest)
    n_sys = 0
    while n_sys < len(blocks) and blocks[n_sys].level in ("tools", "system"):
        n_sys += 1
    msg_end = len(blocks)
    while msg_end > n_sys and blocks[msg_end - 1].level == "tail":
        msg_end -= 1
    sys_idx = range(n_sys)
    msg_idx = range(n_sys, msg_end)
    last_sys = sys_idx[-1] if sys_idx else None
    wanted: list[tuple[int, str, str]] = []  # (index, ttl, slot)

    if strategy == "naive":
        if last_sys is not None:
            wanted.append((last_sys, ttl, "system"))
    elif strategy == "kind":
        if last_sys is not None:
            wanted.append((last_sys, ttl, "system"))
        if msg_idx:
            wanted.append((msg_idx[-1], ttl, "message"))
    elif strategy == "volatility":
        stable_end = _stable_run_end(blocks)
        cum = 0
        if stable_end is not None:
            cum = sum(b.tokens for b in blocks[: stable_end + 1])
        first = stable_end if stable_end is not None and cum >= 1024 else None
        if first is not None:
            wanted.append((first, stable_ttl, "stable"))
        deep = [k for k in sys_idx if blocks[k].level == "tools" or _vol(blocks[k]) != "rewritten"]
        if deep and (first is None or deep[-1] > first):
            wanted.append((deep[-1], stable_ttl, "system"))
        if not system_changed:
            # every 16th content block of the conversation, the last 2 kept (computed, not
            # scanned: no pass over the conversation per request)
            last = len(msg_idx) // MESSAGE_MARK_EVERY
            wanted.extend(
                (n_sys + m * MESSAGE_MARK_EVERY - 1, ttl, "message")
                for m in range(max(1, last - 1), last + 1)
            )
    elif strategy == "regio":
        stable_end = _stable_run_end(blocks)
        if stable_end is not None:
            wanted.append((stable_end, stable_ttl, "stable"))
        if last_sys is not None and (stable_end is None or last_sys > stable_end):
            wanted.append((last_sys, stable_ttl, "settled"))
        settled = (k for k in reversed(msg_idx) if not blocks[k].source.startswith("pending:"))
        newest_or_none = next(settled, None)
        if newest_or_none is not None:
            newest = newest_or_none
            wanted.append((newest, ttl, "newest"))
            hashes = set(previous_marks)
            if previous_newest is not None:
                hashes.add(previous_newest)
            if hashes:
                prev = next(
                    (
                        k
                        for k in reversed(msg_idx)
                        if k < newest and blocks[k].prefix_hash in hashes
                    ),
                    None,
                )
                if prev is not None and positions(blocks[prev : newest + 1])[-1] - 1 >= LOOKBACK:
                    wanted.append((prev, ttl, "spare"))
        if tail_index is not None and blocks[tail_index].level == "tail":
            wanted.append((tail_index, ttl, "tail"))
    else:
        raise ValueError(
            f"unknown layout strategy {strategy!r}; use naive, kind, volatility or regio"
        )

    if strategy == "regio":
        rank = {"stable": 0, "newest": 1, "spare": 2, "settled": 3, "tail": 4}
        wanted.sort(key=lambda w: rank[w[2]])
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
    # 1h before 5m: a 1h mark after a 5m mark is lowered to 5m
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


def _vol(b: LayoutBlock) -> str:
    # the volatility is encoded in the block source: "<volatility>:<...>"
    return b.source.split(":", 1)[0] if ":" in b.source else ""


def _stable_run_end(blocks: Sequence[LayoutBlock]) -> int | None:
    """Last index of the leading run of tool blocks and stable-region system blocks."""
    end = None
    for k, b in enumerate(blocks):
        if b.level == "tools" or (b.level == "system" and _vol(b) == "stable"):
            end = k
        else:
            break
    return end
