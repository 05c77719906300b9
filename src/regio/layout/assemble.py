"""``assemble(window, strategy) -> Request``: the provider-neutral layout.

Order of a request: ``tools -> system -> messages -> tail``. Per block the request carries its
tokens, a digest of its content and the chained prefix hash, so two requests can be compared
block by block (:func:`regio.layout.classify`) and fed to a cache model
(:func:`regio.layout.to_cache_request`). ``assemble`` never mutates the window or the state it
is given; the new :class:`LayoutState` is ``request.state``. The session's
:class:`regio.layout.RenderLog` (``log``) is extended with what is new since its last request.

The steps, one function each: check the input (:func:`_inputs`), plan the regions (settled
notes, sections, the freezing tail: :mod:`.plan`), build the tools and system blocks
(:func:`_head`), the conversation blocks (the log), the tail blocks, the stable-region
warnings (:func:`_stable_warnings`), the breakpoints (:func:`_breakpoints`) and the
never-read statistics (:func:`_never_read`), then the new state (:func:`_new_state`, with the
regions' observed volatility: :func:`_watch`, :mod:`.observe`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
import msgspec

from regio.content import Block, Entry, Text, block_text, content_hash, split_weight

from .breakpoints import carried_prefixes, held_after, previous_marks
from .chunks import DEFAULT_CHUNK_TOKENS
from .events import (
    BreakpointNeverRead,
    BreakpointPlan,
    LayoutEvent,
    StableRegionChanged,
)
from .model import (
    CHAIN_ROOT,
    DEFAULT_MIN_CACHE_TOKENS,
    Breakpoint,
    BreakpointStat,
    CacheEconomics,
    LayoutBlock,
    LayoutState,
    Level,
    Origin,
    RegionWatch,
    Request,
    ToolSpec,
    chain_hash,
)
from .observe import with_offsets
from .plan import (
    Job,
    RegionPlan,
    anchored_digest,
    extras_of,
    note_text,
    plan_regions,
    refresh_tail,
)
from .protocols import WindowLike, count_text
from .renderlog import ConversationView, RenderLog
from .repair import LayoutError
from .sections import Section
from .settle import DEFAULT_SETTLE_SHARE
from .strategy import LayoutStrategy
from .strategy_registry import strategy_for
from .tail import newest_settled_entry, settling_copies, tally_held

__all__ = ["DEFAULT_MIN_CACHE_TOKENS", "assemble", "note_text", "prompt_cache_key"]

#: Requests a breakpoint slot must have been placed in, with its prefix never surviving, before
#: :class:`BreakpointNeverRead` is reported.
NEVER_READ_AFTER = 3


def prompt_cache_key(blocks: Sequence[LayoutBlock], session_id: str | None = None) -> str:
    """OpenAI ``prompt_cache_key``: ``regio-`` + 24 hex digits of sha256 over the session id
    when one is given, else over the prefix hash at the end of the leading run of tool and
    stable-region blocks (so sessions sharing tools and stable prompt share a routing key)."""
    if session_id:
        return "regio-" + content_hash(["session", session_id])[:24]
    h = CHAIN_ROOT
    for b in blocks:
        if b.level == "tools" or (b.level == "system" and b.volatility == "stable"):
            h = b.prefix_hash
        else:
            break
    return "regio-" + content_hash(["prefix", h])[:24]


def _split(tokens: int, blocks: Sequence[Block]) -> list[int]:
    """Share an entry's token count over its blocks by text length (sum preserved)."""
    if not blocks:
        return []
    lengths = [max(1, split_weight(b)) for b in blocks]
    total = sum(lengths)
    out = [tokens * n // total for n in lengths]
    out[-1] += tokens - sum(out)
    return out


def _entry_split(e: Entry) -> list[int]:
    return _split(e.tokens, e.blocks)


@attrs.frozen
class _Raw:
    """A tools / system / tail block before hashing."""

    level: Level
    role: str
    block: Block | None
    tool: ToolSpec | None
    tokens: int
    region: str | None
    source: str
    origin: Origin
    volatility: str | None = None
    chunk: int | None = None


def _section_raw(level: Level, role: str, s: Section) -> _Raw:
    """The block of a region's section at ``level`` (``system`` or ``tail``)."""
    return _Raw(
        level,
        role,
        Text(s.text),
        None,
        s.tokens,
        s.region,
        s.source,
        "region",
        s.volatility,
        s.chunk,
    )


def _inputs(
    strategy: LayoutStrategy, state: LayoutState | None, tools: Iterable[ToolSpec]
) -> list[ToolSpec]:
    """The tools, checked; raises :class:`LayoutError` for a state of another strategy, a bad
    tool or a tool name given twice."""
    if state is not None and state.requests and state.strategy != strategy.name:
        raise LayoutError(
            f"layout state was produced by strategy {state.strategy!r}, not "
            f"{strategy.name!r}; keep one state per strategy"
        )
    tool_list = list(tools)
    names: set[str] = set()
    for t in tool_list:
        try:
            t.validate()
        except ValueError as exc:
            raise LayoutError(str(exc)) from exc
        if t.name in names:
            raise LayoutError(f"tool name {t.name!r} is given twice; tool names must be unique")
        names.add(t.name)
    return tool_list


def _head(job: Job, tool_list: Sequence[ToolSpec], plan: RegionPlan) -> list[_Raw]:
    raw: list[_Raw] = []
    for t in tool_list:
        text = msgspec.json.encode([t.name, t.description, t.canonical_schema()]).decode()
        raw.append(
            _Raw(
                "tools",
                "system",
                None,
                t,
                count_text(job.window, text),
                None,
                f"tool:{t.name}",
                "tool",
            )
        )
    raw.extend(_section_raw("system", "system", s) for s in plan.system)
    return raw


def _chain(raw: Sequence[_Raw], h: str, log: RenderLog, out: list[LayoutBlock]) -> str:
    """Append a :class:`LayoutBlock` per item of ``raw`` to ``out``, chaining each block's
    ``prefix_hash`` from ``h``; returns the last hash."""
    for r in raw:
        dg = log.head_digest(r.level, r.role, r.block, r.tool)
        h = chain_hash(h, dg)
        out.append(
            LayoutBlock(
                level=r.level,
                role=r.role,
                tokens=r.tokens,
                digest=dg,
                prefix_hash=h,
                block=r.block,
                tool=r.tool,
                region=r.region,
                message=None,
                source=r.source,
                origin=r.origin,
                volatility=r.volatility,
                chunk=r.chunk,
            )
        )
    return h


def _tail_raw(plan: RegionPlan) -> tuple[list[_Raw], bool]:
    """The tail blocks, and whether they are freezing-tail copies."""
    if plan.tail_plan is not None:
        return [
            _Raw(
                "tail",
                "user",
                Text(c.text),
                None,
                c.tokens,
                c.region,
                f"rewritten:{c.region}",
                "tail",
                "rewritten",
            )
            for c in plan.tail_plan.tail
        ], True
    return [_section_raw("tail", "user", s) for s in plan.tail_sections], False


def _conversation_and_tail(
    job: Job, plan: RegionPlan, blocks: list[LayoutBlock], system_end: str
) -> tuple[ConversationView, int, int | None]:
    """Append the conversation blocks (from the log) and the tail blocks to ``blocks``;
    returns the conversation view, the tail's tokens and the tail block to mark, if any: the
    last of the leading freezing-tail copies worth a marker
    (:func:`regio.layout.tail.settling_copies`)."""
    view = job.log.conversation(
        job.strategy.name,
        extras_of(job, plan),
        system_end,
        _entry_split,
        lambda b: count_text(job.window, block_text(b)),
    )
    blocks.extend(view.blocks)
    tail, copies = _tail_raw(plan)
    start = len(blocks)
    _chain(tail, blocks[-1].prefix_hash if blocks else CHAIN_ROOT, job.log, blocks)
    tail_index = None
    if copies and plan.tail_plan is not None:
        held = tally_held(job.prev_state, plan.tail_plan.current)
        settling = settling_copies(plan.tail_plan.tail, held, job.mark_odds)
        tail_index = start + settling - 1 if settling else None
    return view, sum(r.tokens for r in tail), tail_index


def _stable_warnings(
    job: Job, events: list[LayoutEvent]
) -> tuple[dict[str, tuple[int, str]], list[str]]:
    """Digests of the stable regions and the regions warned about (once per region)."""
    prev = job.prev_state
    digests: dict[str, tuple[int, str]] = {}
    warned = list(prev.stable_warned) if prev is not None else []
    for r in job.others:
        if r.volatility != "stable":
            continue
        dg = content_hash(r.render_text())
        digests[r.name] = (int(r.version), dg)
        old = prev.stable_digests.get(r.name) if prev is not None else None
        if old is not None and old[1] != dg and r.name not in warned:
            warned.append(r.name)
            events.append(StableRegionChanged(r.name, explicit_edit=old[0] != int(r.version)))
    return digests, warned


def _breakpoints(
    job: Job,
    blocks: list[LayoutBlock],
    at: tuple[int | None, int],
    system_end: str,
    events: list[LayoutEvent],
    view: ConversationView,
) -> tuple[list[Breakpoint], dict[str, str]]:
    """The request's markers (set on ``blocks``) and the remembered marks it carries
    (:func:`carried_prefixes`); ``at``: the tail's index and the head's length."""
    tail_index, n_head = at
    ends = n_head + len(view.blocks)
    others = (*blocks[:n_head], *view.blocks[view.final :], *blocks[ends:])
    carried = carried_prefixes(prev := job.prev_state, job.log.short, others)
    try:
        marks = job.strategy.plan_breakpoints(
            blocks,
            ttl=job.ttl,
            stable_ttl=job.stable_ttl,
            min_tokens=job.min_tokens,
            previous_newest=prev.newest_hash if prev is not None else None,
            previous_marks=previous_marks(prev, job.sent_at, carried),
            tail_index=tail_index,
            newest_unread=job.newest_unread,
            system_changed=prev is not None
            and prev.system_hash is not None
            and prev.system_hash != system_end,
        )
    except ValueError as exc:
        raise LayoutError(str(exc)) from exc
    for m in marks:
        blocks[m.index] = msgspec.structs.replace(blocks[m.index], breakpoint=m.ttl)
    events.append(BreakpointPlan(job.strategy.name, tuple((m.index, m.ttl, m.slot) for m in marks)))
    return marks, carried


def _never_read(
    job: Job,
    blocks: Sequence[LayoutBlock],
    n_head: int,
    view: ConversationView,
    events: list[LayoutEvent],
) -> dict[str, BreakpointStat]:
    """Did the last request's marked prefixes survive into this one? Per slot statistics;
    a slot marked :data:`NEVER_READ_AFTER` times whose prefix never survived is reported."""
    prev = job.prev_state
    stats = dict(prev.stats) if prev is not None else {}
    if prev is None:
        return stats
    present = {b.prefix_hash for b in blocks[:n_head]}
    present.update(b.prefix_hash for b in blocks[n_head + len(view.blocks) :])
    for slot, ph in prev.marks:
        st = stats.get(slot, BreakpointStat())
        survived = ph in present or job.log.has_hash(ph, view)
        st = BreakpointStat(st.marks + 1, st.survived + survived, st.warned)
        if st.marks + 1 >= NEVER_READ_AFTER and st.survived == 0 and not st.warned:
            events.append(BreakpointNeverRead(slot, st.marks + 1))
            st = BreakpointStat(st.marks, st.survived, True)
        stats[slot] = st
    return stats


def _watch(
    job: Job, plan: RegionPlan, blocks: Sequence[LayoutBlock], n_head: int, view: ConversationView
) -> dict[str, RegionWatch]:
    """The regions' watch for the next request (observed volatility, :mod:`.observe`): the
    observation of this request with each region's first byte in it."""
    if job.observation is None:
        return {}
    head = blocks[:n_head]
    head_tokens = sum(b.tokens for b in head)
    fresh = view.blocks[view.final :]
    fresh_at = head_tokens + view.tokens - sum(b.tokens for b in fresh)
    return with_offsets(
        job.observation.watches,
        job.prev_state,
        head,
        fresh,
        fresh_at,
        blocks[n_head + len(view.blocks) :],
        head_tokens + view.tokens,
        frozenset(note.region for note, _ in plan.notes),
    )


def _new_state(
    job: Job,
    plan: RegionPlan,
    blocks: Sequence[LayoutBlock],
    marks: Sequence[Breakpoint],
    system_end: str,
    stable: tuple[dict[str, tuple[int, str]], list[str]],
    stats: dict[str, BreakpointStat],
    watch: dict[str, RegionWatch],
    tokens: int,
    carried: dict[str, str],
) -> LayoutState:
    newest = next((m for m in marks if m.slot == "newest"), None)
    newest_hash = blocks[newest.index].prefix_hash if newest is not None else None
    tail_plan = plan.tail_plan
    # the copies emitted now follow this request's newest marker (TailCopy.follows)
    tail = tuple(
        msgspec.structs.replace(c, follows=newest_hash or "")
        for c in (tail_plan.tail if tail_plan is not None else ())
    )
    return LayoutState(
        strategy=job.strategy.name,
        requests=job.placed,
        chunks=plan.chunks_used,
        settled=plan.settled_ids,
        notes=tuple(n for n, _ in plan.notes),
        first_message=job.conversation[0].digest if job.conversation else None,
        stable_digests=stable[0],
        stable_warned=tuple(stable[1]),
        system_hash=system_end,
        marks=tuple((m.slot, blocks[m.index].prefix_hash) for m in marks),
        newest_hash=newest_hash,
        stats=stats,
        tail=tail,
        frozen=tail_plan.frozen if tail_plan is not None else (),
        stale_rent=plan.stale_rent if plan.gc_reason is None else 0,
        held=held_after(
            job.prev_state,
            request=job.placed,
            now=job.sent_at,
            newest=(newest.ttl, newest_hash) if newest is not None and newest_hash else None,
            marks=((m.ttl, blocks[m.index].prefix_hash) for m in marks),
            present=carried.values(),
        ),
        opening=job.observation.opening if job.observation is not None else "",
        rewrite_odds=job.rewrite_odds,
        rewrite_horizon=job.rewrite_horizon,
        newest_entry=newest_settled_entry(job.conversation),
        anchored=anchored_digest(job, (*(tail_plan.frozen if tail_plan else ()), *tail)),
        watch=watch,
        tail_held=tally_held(job.prev_state, tail_plan.current if tail_plan is not None else {}),
        tokens=tokens if watch else 0,
    )


def assemble(
    window: WindowLike,
    strategy: str | LayoutStrategy = "regio",
    *,
    tools: Iterable[ToolSpec] = (),
    state: LayoutState | None = None,
    previous: Request | None = None,
    ttl: str = "5m",
    stable_ttl: str | None = None,
    min_cache_tokens: int | None = None,
    economics: CacheEconomics | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    settle_share: float = DEFAULT_SETTLE_SHARE,
    session_id: str | None = None,
    log: RenderLog | None = None,
    sent_at: float | None = None,
    rewrite_odds: float | None = None,
    rewrite_horizon: float | None = None,
) -> Request:
    """Lay ``window`` out as a provider-neutral :class:`Request`.

    * ``window``: its ``regions`` and ``max_tokens`` (:class:`~.protocols.WindowLike`);
      ``strategy``: a :class:`LayoutStrategy` or a registered name (``regio``; the comparison
      layouts ``naive``, ``kind``, ``volatility`` of :mod:`regio.layout.comparison`).
    * ``tools``: tool definitions, in order; ``state`` (or ``previous.state``): the last state.
    * ``ttl`` / ``stable_ttl``: marker TTLs (``5m`` | ``1h``) for the conversation and for the
      stable/settled prefix (``stable_ttl`` defaults to ``ttl``; it may not be shorter).
    * ``economics``: the provider's :class:`CacheEconomics` (minimum cacheable prefix, the
      marker odds, the tail's rent ratio; default Anthropic's); ``min_cache_tokens``: a minimum.
    * ``chunk_tokens``: target chunk size of grows regions (tokens); ``settle_share``: share of
      ``window.max_tokens`` unsettled notes may reach (``regio``).
    * ``session_id`` seeds the OpenAI ``prompt_cache_key``; ``log`` (default: a new
      :class:`RenderLog`), ``sent_at``, ``rewrite_odds``, ``rewrite_horizon``: see :class:`~.Job`.

    Raises :class:`LayoutError` (a ``ValueError``): an unknown strategy, duplicate tool names, a
    bad tool schema, a state from another strategy, a system-role conversation message.
    """
    strat = strategy_for(strategy)
    state = previous.state if state is None and previous is not None else state
    tool_list = _inputs(strat, state, tools)
    econ = economics or CacheEconomics()
    job = Job.build(
        window,
        strat,
        state=state,
        ttl=ttl,
        stable_ttl=stable_ttl,
        min_tokens=min_cache_tokens if min_cache_tokens is not None else econ.min_cache_tokens,
        economics=econ,
        chunk_tokens=chunk_tokens,
        settle_share=settle_share,
        log=log if log is not None else RenderLog(),
        sent_at=sent_at,
        rewrite_odds=rewrite_odds,
        rewrite_horizon=rewrite_horizon,
    )
    plan = plan_regions(job)
    head = _head(job, tool_list, plan)
    blocks: list[LayoutBlock] = []
    system_end = _chain(head, CHAIN_ROOT, job.log, blocks)
    refresh_tail(job, plan, system_end)
    view, tail_tokens, tail_index = _conversation_and_tail(job, plan, blocks, system_end)
    observed = job.observation.events if job.observation is not None else []
    events: list[LayoutEvent] = [*observed, *plan.events, *view.events]
    stable = _stable_warnings(job, events)
    marks, held = _breakpoints(job, blocks, (tail_index, len(head)), system_end, events, view)
    stats = _never_read(job, blocks, len(head), view, events)
    total = sum(r.tokens for r in head) + view.tokens + tail_tokens
    watch = _watch(job, plan, blocks, len(head), view)
    return Request(
        strategy=strat.name,
        blocks=tuple(blocks),
        breakpoints=tuple(marks),
        ttl=ttl,  # type: ignore[arg-type]
        state=_new_state(job, plan, blocks, marks, system_end, stable, stats, watch, total, held),
        events=tuple(events),
        prompt_cache_key=prompt_cache_key(blocks, session_id),
        min_cache_tokens=job.min_tokens,
        total_tokens=total,
    )
