"""The freezing tail of the ``regio`` strategy.

A rewritten region goes to the tail (after the conversation) when its value changes, so the
change invalidates nothing before it. The tail is log-structured like the grows-region notes:

* **emit** — a region whose rendered text differs from its newest copy (or that has no copy
  yet) gets a new copy in the tail of this request. A region's first copy is its plain
  rendering (byte-identical to the region in a system prompt: nothing is added); a copy that
  supersedes an earlier, frozen copy opens with :func:`header` (region name and the turn the
  value was set; deterministic, no timestamps), so the newest copy always declares itself
  current;
* **freeze** — on the next request, a tail copy whose region did not change stays exactly
  where it was (after the same conversation entry, same bytes): it is now part of the
  conversation, hence of the cached prefix, and no new tail copy is emitted for that region;
  a tail copy whose region changed again is simply replaced (a region that changes on every
  request never freezes, so it never leaves stale copies behind);
* **stale** — when a frozen region changes later, the frozen copy is not edited or removed
  (that would change bytes before the tail): it stays as a labelled stale copy and the new
  value goes to the tail again. A region emptied after being frozen gets an empty-region
  notice as its new copy;
* **garbage collection** — stale copies are dropped when the prefix is rewritten anyway
  (conversation compaction or eviction, notes settling, a system-prompt change, a lost anchor,
  an entry before every copy changed or removed, e.g. old tool results cleared by relief),
  when stale tokens pass ``settle_share`` of the window (reason ``share``), or when keeping them
  has cost as much as dropping them would (reason ``rent``, below), or will have by the
  conversation's next rewrite (reason ``forecast``, below); all copies are dropped and
  every current value is emitted once more in the tail (keeping its turn label).

**When to drop stale copies (reason ``rent``).** Keeping a stale copy of ``S`` tokens costs
``m_read * S`` per request (it is read from the cache every time); dropping it costs one
rewrite of everything after it, ``(m_write - m_read) * B`` for the ``B`` tokens that follow the
first stale copy (they turn from cache reads into cache writes). How many more requests will come
is unknown, so the layout uses the classic ski-rental rule: it keeps the stale copies until the
accumulated rent ``m_read * sum(S over requests)`` reaches the price of dropping them, then drops
them. Whatever the future holds this pays at most twice the best offline choice (Karlin et al.,
"Competitive snoopy caching", 1988). The multipliers come from the cache rules of the request's
provider and model (``mult.read`` and ``mult.write_5m``; providers without a write fee such as
OpenAI's automatic caching use ``mult.plain``); the caller passes
``(m_write - m_read) / m_read`` in (:class:`regio.layout.CacheEconomics`,
:func:`regio.providers.economics_for`):
``(m_write - m_read) / m_read``, 11.5 for Anthropic's 1.25 / 0.1 and 1.0 for gpt-4o's 1.0 / 0.5.

**When the next rewrite is in sight (reason ``forecast``).** The rule above knows nothing of the
future. The engine does know roughly when the conversation will be rewritten anyway: its
compaction trigger, the tokens a step adds, and how long the session has run
(``assemble(rewrite_horizon=...)``, :func:`regio.policies.rewriteodds.rewrite_horizon`: the
steps to the trigger, at most a third of the requests so far). A stale copy kept until then
costs ``m_read * S * H`` for ``H`` more requests; collecting now costs
``(m_write - m_read) * B'``, ``B'`` being what the collection turns from cache reads into
writes (:func:`collection_rewrites`: what the previous request sent after the first frozen
copy). When the first reaches the second (:func:`forecast_due`) the copies are dropped at
once, while ``B'`` is still small: waiting only makes the rewrite dearer. A ``park`` capture
whose output froze for a turn and was then replaced otherwise left its stale copy in the
prefix until the next compaction, read on every request: on a generated parallel-tool session
at a 200k window, 27% of the cache reads (docs/benchmark.md, "Stale copies leave when the next
rewrite is far").

The model therefore sees each current value exactly once as the newest copy of its region,
plus stale copies, each followed later in the prompt by a copy whose header supersedes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import msgspec

from regio.content import ToolResult, content_hash

from .model import LayoutState, TailCopy
from .protocols import RegionLike, WindowLike, count_text
from .sections import renders_itself

__all__ = [
    "DEFAULT_GC_RATIO",
    "EMPTY_TEXT",
    "HELD_DISCOUNT",
    "TailPlan",
    "collection_rewrites",
    "forecast_due",
    "freeze_chance",
    "header",
    "newest_settled_entry",
    "plan_tail",
    "rent_due",
    "settling_copies",
    "stale_tokens",
    "tally_held",
]

#: The rent ratio when the provider's multipliers are unknown: Anthropic's (1.25 - 0.1) / 0.1.
DEFAULT_GC_RATIO = 11.5

#: Body of the copy that supersedes a frozen copy once its region is empty.
EMPTY_TEXT = "(this region is now empty)"
#: Digest recorded for an empty region.
EMPTY_DIGEST = content_hash(["regio.layout.tail.empty"])


def header(region: str, turn: int) -> str:
    """The constant-format first line of a copy that supersedes earlier copies of its region
    (deterministic; no timestamps)."""
    return (
        f"[context region '{region}' \u2014 as of turn {turn}; "
        "supersedes every earlier copy of this region]"
    )


@attrs.frozen
class TailPlan:
    """Result of :func:`plan_tail`: ``frozen`` copies in placement order (current and stale),
    ``tail`` copies emitted at the end of this request (region order), ``dropped`` the
    copies garbage-collected by this request (empty unless ``gc``) and ``current`` the digest
    of each rewritten region's value now."""

    frozen: tuple[TailCopy, ...]
    tail: tuple[TailCopy, ...]
    dropped: tuple[TailCopy, ...]
    #: region -> digest of its value now (an empty region is absent)
    current: dict[str, str] = attrs.field(factory=dict)


def stale_tokens(frozen: Sequence[TailCopy], tail: Sequence[TailCopy] = ()) -> int:
    """Tokens of frozen copies superseded by a later full copy of their region (tokens); a
    delta copy adds to the copies before it and supersedes none."""
    copies = (*frozen, *tail)
    last_full: dict[str, int] = {}
    for i, c in enumerate(copies):
        if not c.delta:
            last_full[c.region] = i
    return sum(c.tokens for i, c in enumerate(frozen) if i < last_full.get(c.region, -1))


def after_anchor(conversation: Sequence[Any], anchor: str | None) -> int:
    """The index of the first entry of ``conversation`` after the entry with id ``anchor``
    (``0`` when the anchor is ``None`` or not found). Entry ids are unique and anchors are
    recent, so the search runs back from the newest entry."""
    for i in range(len(conversation) - 1, -1, -1):
        if conversation[i].id == anchor:
            return i + 1
    return 0


def rent_due(
    rent: int,
    frozen: Sequence[TailCopy],
    tail: Sequence[TailCopy],
    conversation: Sequence[Any],
    ratio: float,
) -> bool:
    """True when the accumulated ``rent`` (sum of stale tokens over the requests since the
    last garbage collection, this one included) has reached the price of dropping the stale
    copies now: ``ratio`` x the tokens placed after the first stale copy (conversation entries
    after its anchor plus the copies that follow it, tokens)."""
    copies = (*frozen, *tail)
    last_full: dict[str, int] = {}
    for i, c in enumerate(copies):
        if not c.delta:
            last_full[c.region] = i
    first = next((i for i, c in enumerate(frozen) if i < last_full.get(c.region, -1)), None)
    if first is None:
        return False
    start = after_anchor(conversation, frozen[first].anchor)
    after = sum(int(e.tokens) for e in conversation[start:])
    after += sum(c.tokens for c in copies[first + 1 :])
    return rent >= ratio * after


def forecast_due(
    frozen: Sequence[TailCopy],
    tail: Sequence[TailCopy],
    conversation: Sequence[Any],
    horizon: float,
    ratio: float,
    *,
    through: str | None = None,
    notes: Sequence[tuple[Any, int]] = (),
    placed: int = 0,
) -> bool:
    """True when the stale copies' rent until the conversation is rewritten anyway (their
    tokens x ``horizon``, the requests expected until then,
    :func:`regio.policies.rewriteodds.rewrite_horizon`) reaches the price of collecting now:
    ``ratio`` x :func:`collection_rewrites` (the arguments after ``ratio`` are its)."""
    stale = stale_tokens(frozen, tail)
    if not stale or not frozen or horizon <= 0:
        return False
    again = collection_rewrites(
        frozen, tail, conversation, through=through, notes=notes, placed=placed
    )
    return stale * horizon >= ratio * again


def collection_rewrites(
    frozen: Sequence[TailCopy],
    tail: Sequence[TailCopy],
    conversation: Sequence[Any],
    *,
    through: str | None = None,
    notes: Sequence[tuple[Any, int]] = (),
    placed: int = 0,
) -> int:
    """The tokens a collection now turns from cache reads into writes: what the previous
    request sent after the first of ``frozen`` and this one would read again, namely the
    conversation entries after its anchor up to ``through`` (the id of the newest entry that
    request carried, ``""`` when it carried none; ``None`` or not found: unknown, every entry
    counts, which errs toward keeping the copies), the
    notes placed after it before this request (``notes``: ``(Note, tokens of its message)``;
    ``placed``: this request's number) and the frozen copies that stay current (they are
    emitted once more in the tail). This request's new entries, notes and ``tail`` copies are
    written either way, and the stale copies leave. ``0`` without frozen copies."""
    if not frozen:
        return 0
    first = frozen[0]
    start = after_anchor(conversation, first.anchor)
    end = len(conversation)
    if through is not None and through in ("", first.anchor):
        end = start  # the previous request carried no entry after the copy
    elif through is not None:
        for i in range(len(conversation) - 1, start - 1, -1):
            if conversation[i].id == through:
                end = i + 1
                break
    again = sum(int(e.tokens) for e in conversation[start:end])
    later = {e.id for e in conversation[start:]} if notes else set()
    for note, tokens in notes:
        after = note.anchor in later or (note.anchor == first.anchor and note.placed > first.placed)
        if after and note.placed < placed:
            again += int(tokens)
    return again + sum(c.tokens for c in frozen) - stale_tokens(frozen, tail)


def newest_settled_entry(conversation: Sequence[Any]) -> str:
    """The id of the newest entry of ``conversation`` that is not only progress reports
    (``ToolResult(final=False)``: a newer report or the final result takes such an entry out,
    and the ``newest`` marker never sits on it); ``""`` when there is none. The next
    request's :func:`collection_rewrites` counts what the conversation held up to it."""
    for e in reversed(conversation):
        blocks = getattr(e, "blocks", ())
        if not blocks or not all(isinstance(b, ToolResult) and not b.is_final for b in blocks):
            return str(e.id)
    return ""


def delta_header(region: str, turn: int) -> str:
    """The constant-format first line of a delta copy (entries appended to a region)."""
    return (
        f"[context region '{region}' \u2014 as of turn {turn}; "
        "adds to the earlier copies of this region]"
    )


def _entry_lines(region: RegionLike | None, text: str) -> list[str] | None:
    """The region's rendered line per entry when ``text`` is exactly its heading followed by
    those lines (so a copy can show a suffix of the entries), else ``None``."""
    render = getattr(region, "render_entry", None)
    if region is None or not callable(render) or renders_itself(region):
        return None
    lines = [str(render(e)) for e in region.entries]
    head = text.split("\n", 1)[0]
    return lines if "\n".join([head, *lines]) == text else None


def _covered(copies: Sequence[TailCopy], region: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for c in copies:
        if c.region == region:
            out = [*out, *c.entries] if c.delta else list(c.entries)
    return out


def _copy(
    window: WindowLike,
    region: str,
    body: str,
    digest: str,
    turn: int,
    anchor: str | None,
    placed: int,
    body_tokens: int | None = None,
    *,
    supersedes: bool,
) -> TailCopy:
    if not supersedes:  # the only copy: exactly the region's own rendering, no extra tokens
        tokens = count_text(window, body) if body_tokens is None else body_tokens
        return TailCopy(region, digest, body, tokens, turn, anchor, placed)
    head = header(region, turn)
    text = f"{head}\n{body}"
    if body_tokens is None:
        tokens = count_text(window, text)
    else:  # the body was counted once when its entries were written: count the header only
        tokens = body_tokens + count_text(window, head + "\n")
    return TailCopy(region, digest, text, tokens, turn, anchor, placed)


def plan_tail(
    window: WindowLike,
    sections: Sequence[Any],
    state: LayoutState | None,
    *,
    anchor: str | None,
    turn: int,
    placed: int,
    gc: bool,
    regions: dict[str, Any] | None = None,
) -> TailPlan:
    """Plan the frozen copies and the tail of one ``regio`` request.

    ``sections``: the rewritten regions' current sections (``region``, ``text``, ``tokens``)
    in tail order; ``state``: the previous :class:`LayoutState` (``None`` on a first
    request); ``anchor``: the newest conversation entry id now; ``turn``: its turn index;
    ``placed``: this request's number; ``gc``: drop every frozen copy (the prefix is rewritten
    anyway); ``regions``: name -> region (``entries``, ``render_entry``) for delta copies: when
    a region's only change since its frozen copies is entries appended at its end, the tail
    shows just those entries under :func:`delta_header`. Pure: never changes ``state``.
    """
    current = {s.region: (s.text, content_hash(s.text), int(s.tokens)) for s in sections}
    order = [s.region for s in sections]
    prev_tail = state.tail if state is not None else ()
    prev_frozen = state.frozen if state is not None else ()
    before: dict[str, TailCopy] = {}
    for c in (*prev_frozen, *prev_tail):
        before[c.region] = c

    dropped: tuple[TailCopy, ...] = ()
    if gc:
        frozen: list[TailCopy] = []
        dropped = tuple(prev_frozen)
    else:
        frozen = list(prev_frozen)
        for c in prev_tail:
            now = current.get(c.region)
            if (now[1] if now is not None else EMPTY_DIGEST) == c.digest:
                frozen.append(c)
    latest: dict[str, TailCopy] = {}
    for c in frozen:
        latest[c.region] = c

    tail: list[TailCopy] = []
    for name in order:
        body, dg, ntok = current[name]
        have = latest.get(name)
        if have is not None and have.digest == dg:
            continue
        old = before.get(name)
        set_turn = old.turn if old is not None and old.digest == dg else turn
        region = (regions or {}).get(name)
        lines = _entry_lines(region, body)
        ids: tuple[tuple[str, str], ...] = ()
        if lines is not None and region is not None:
            ids = tuple((e.id, e.digest) for e in region.entries)
        if have is not None and lines is not None and region is not None:
            covered = _covered(frozen, name)
            k = len(covered)
            if covered and len(ids) > k and list(ids[:k]) == covered:
                head = delta_header(name, turn)
                text = "\n".join([head, *lines[k:]])
                tokens = sum(int(e.tokens) for e in region.entries[k:]) + count_text(
                    window, head + "\n"
                )
                tail.append(
                    TailCopy(name, dg, text, tokens, turn, anchor, placed, ids[k:], delta=True)
                )
                continue
        c = _copy(
            window, name, body, dg, set_turn, anchor, placed, ntok, supersedes=have is not None
        )
        tail.append(msgspec.structs.replace(c, entries=ids))
    # a frozen region that is now empty gets an explicit notice, so no stale copy reads current
    for name, have in latest.items():
        if name not in current and have.digest != EMPTY_DIGEST:
            tail.append(
                _copy(window, name, EMPTY_TEXT, EMPTY_DIGEST, turn, anchor, placed, supersedes=True)
            )
    return TailPlan(tuple(frozen), tuple(tail), dropped, {n: v[1] for n, v in current.items()})


#: How much one earlier observation of a region's tail copies counts against the next one in
#: :func:`tally_held`: a memory of about ten copies, so a region that settles for a long time
#: and then starts to change every request loses the marker after a few requests.
HELD_DISCOUNT = 0.9


def freeze_chance(held: dict[str, tuple[float, float]], region: str) -> float:
    """The chance that ``region``'s tail copy is still current on the next request, by
    Laplace's rule of succession on the discounted counts of :func:`tally_held`,
    ``(held + 1) / (copies + 2)``: a region never seen counts 1/2."""
    copies, current = held.get(region, (0.0, 0.0))
    return (current + 1) / (copies + 2)


def settling_copies(
    tail: Sequence[TailCopy], held: dict[str, tuple[float, float]], odds: float
) -> int:
    """How many of this request's tail copies, from the first, the tail's cache marker
    covers (0: no marker). ``held``: :func:`tally_held` for this request; ``odds``: the
    provider's :attr:`regio.layout.CacheEconomics.mark_odds` for the marker's TTL.

    A marker on copy ``k`` writes the prefix through it at the write price ``m_write``
    instead of the plain price ``m_plain``, ``(m_write - m_plain) T_k`` more for the ``T_k``
    tokens of copies 1..k. It pays back only when all of them are still current on the next
    request (they freeze into the conversation where they were, and the next request reads
    them at ``m_read`` instead of writing them at ``m_write``): a copy replaced before ``k``
    changes the prefix, and the provider stores the prefix only at the marker. With ``P_k``
    the chance that copies 1..k all freeze (the product of :func:`freeze_chance`, each
    region taken as independent), marking ``k`` gains ``T_k (P_k (m_write - m_read) -
    (m_write - m_plain))`` = ``T_k (m_write - m_read) (P_k - odds)``. The marker goes on the
    ``k`` that maximises ``T_k (P_k - odds)`` (the furthest on a tie) when that is positive
    (Anthropic's 5-minute odds: 0.25 / 1.15 = 0.217). A ``park`` capture that replaces the
    newest tool output, or a footer that moves every step, changes on most requests and soon
    gets no marker."""
    best, best_gain = 0, 0.0
    chance, tokens = 1.0, 0
    for k, c in enumerate(tail, start=1):
        chance *= freeze_chance(held, c.region)
        tokens += max(1, int(c.tokens))
        gain = tokens * (chance - odds)
        if gain > 0 and gain >= best_gain:  # a tie covers more copies
            best, best_gain = k, gain
    return best


def tally_held(prev: LayoutState | None, current: dict[str, str]) -> dict[str, tuple[float, float]]:
    """``prev.tail_held`` with the previous request's tail copies counted (each earlier count
    discounted by :data:`HELD_DISCOUNT`): each copy counts one copy of its region, and one
    held copy when the region's value now (``current``: region -> digest,
    :attr:`TailPlan.current`; an empty region is absent) is still the copy's, whether the copy
    froze, a collection sent the same value again, or nothing was sent for it. A region
    emptied, or set back to an older value whose frozen copy is current again, did not hold."""
    out = dict(prev.tail_held) if prev is not None else {}
    for c in prev.tail if prev is not None else ():
        copies, held = out.get(c.region, (0.0, 0.0))
        kept = current.get(c.region, EMPTY_DIGEST) == c.digest
        out[c.region] = (HELD_DISCOUNT * copies + 1, HELD_DISCOUNT * held + float(kept))
    return out
