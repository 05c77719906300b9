"""``assemble(window, strategy) -> Request``: the pure, provider-neutral layout.

Order of a request: ``tools -> system -> messages -> tail`` (DESIGN.md section 3). Per block the
request carries its tokens, a digest of its content and the chained prefix hash, so two requests
can be compared block by block (:func:`regio.layout.classify`) and fed to a cache model
(:func:`regio.layout.to_cache_request`). ``assemble`` never mutates the window or the state it
is given; the new :class:`LayoutState` is ``request.state``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any

import msgspec

from regio.content import Block, Entry, Text, block_text, content_hash

from .breakpoints import plan_breakpoints
from .chunks import DEFAULT_CHUNK_TOKENS
from .convcache import (
    Extra,
    conversation_blocks,
    conversation_tokens,
    entry_ids,
    frozen_message,
    note_message,
)
from .events import (
    BreakpointNeverRead,
    BreakpointPlan,
    LayoutEvent,
    NotesSettled,
    StableRegionChanged,
    TailSettled,
)
from .memo import ByIdentity, ByKey, register
from .model import (
    CHAIN_ROOT,
    BreakpointStat,
    LayoutBlock,
    LayoutState,
    Level,
    Note,
    Request,
    ToolSpec,
    block_digest,
    chain_hash,
)
from .protocols import count_text
from .repair import LayoutError
from .sections import STRATEGIES, Section, system_and_tail
from .settle import DEFAULT_SETTLE_SHARE, Settling, plan_settling
from .tail import TailPlan, gc_ratio, plan_tail, rent_due, stale_tokens

__all__ = ["DEFAULT_MIN_CACHE_TOKENS", "assemble", "note_text", "prompt_cache_key"]

DEFAULT_MIN_CACHE_TOKENS = 1024
#: Requests a breakpoint slot must have been placed in, with its prefix never surviving, before
#: :class:`BreakpointNeverRead` is reported.
NEVER_READ_AFTER = 3


def note_text(region: str, entry: Entry) -> str:
    """The text of an unsettled grows-region entry travelling in the conversation."""
    return f"[context note -> region '{region}']\n{entry.text}"


def prompt_cache_key(blocks: Sequence[LayoutBlock], session_id: str | None = None) -> str:
    """OpenAI ``prompt_cache_key``: ``regio-`` + 24 hex digits of sha256 over the session id
    when one is given, else over the prefix hash at the end of the leading run of tool and
    stable-region blocks (so sessions sharing tools and stable prompt share a routing key)."""
    if session_id:
        return "regio-" + content_hash(["session", session_id])[:24]
    h = CHAIN_ROOT
    for b in blocks:
        if b.level == "tools" or (b.level == "system" and b.source.startswith("stable:")):
            h = b.prefix_hash
        else:
            break
    return "regio-" + content_hash(["prefix", h])[:24]


def _min_tokens(model: str | None, rules: Any) -> int:
    if not model:
        return DEFAULT_MIN_CACHE_TOKENS
    try:
        from regio.cache.rules import resolve

        rule = resolve("anthropic", model, rules=rules)
    except Exception:  # unknown model or no rules packaged: the documented default
        return DEFAULT_MIN_CACHE_TOKENS
    return int(rule.min_tokens or DEFAULT_MIN_CACHE_TOKENS)


_SPLITS: ByIdentity[list[int]] = register(ByIdentity())
_BLOCK_DIGESTS: ByIdentity[str] = register(ByIdentity())
_TEXT_DIGESTS: ByKey[str] = register(ByKey())
_CHAIN: ByKey[str] = register(ByKey())
#: Marked copies of blocks, per (unmarked block object, TTL): a block that keeps its marker is
#: the same object on every request, so the renderers reuse its rendered message.
_MARKED: ByIdentity[LayoutBlock] = register(ByIdentity())


_PREFIX_HASH = attrgetter("prefix_hash")


def _marked_with(ttl: str) -> Callable[[LayoutBlock], LayoutBlock]:
    def mark(b: LayoutBlock) -> LayoutBlock:
        return msgspec.structs.replace(b, breakpoint=ttl)

    return mark


def _entry_split(e: Entry) -> list[int]:
    return _split(e.tokens, e.blocks)


def _digest(level: str, role: str, blk: Block | None, tool: ToolSpec | None) -> str:
    """:func:`block_digest`, memoized: conversation blocks by object identity (the same
    frozen block object comes back on every request), text built per request by its bytes."""
    lvl = "messages" if level == "tail" else level
    if tool is not None:
        return _BLOCK_DIGESTS.get(tool, lambda t: block_digest(lvl, role, None, t), (lvl, role))
    if isinstance(blk, Text):
        return _TEXT_DIGESTS.get((lvl, role, blk.text), lambda: block_digest(lvl, role, blk, None))
    return _BLOCK_DIGESTS.get(blk, lambda b: block_digest(lvl, role, b, None), (lvl, role))


def _chain(previous: str, digest: str) -> str:
    """:func:`chain_hash`, memoized per (previous hash, digest): an unchanged prefix is a
    chain of look-ups, so only the blocks after the first difference are hashed."""
    return _CHAIN.get((previous, digest), lambda: chain_hash(previous, digest))


#: A block before hashing: level, role, block, tool, tokens, region, message index, source.
_Raw = tuple[Level, str, Block | None, ToolSpec | None, int, str | None, int | None, str]


def _chain_blocks(raw: Iterable[_Raw], h: str, out: list[LayoutBlock]) -> str:
    """Append a :class:`LayoutBlock` per item of ``raw`` to ``out``, chaining each block's
    ``prefix_hash`` from ``h`` (the hash of everything before them); returns the last hash."""
    for level, role, blk, tool, ntok, region, msg_i, source in raw:
        dg = _digest(level, role, blk, tool)
        h = _chain(h, dg)
        out.append(
            LayoutBlock(
                level=level,
                role=role,
                tokens=ntok,
                digest=dg,
                prefix_hash=h,
                block=blk,
                tool=tool,
                region=region,
                message=msg_i,
                source=source,
            )
        )
    return h


def _order(item: Extra) -> tuple[int, int]:
    # notes and frozen tail copies after one anchor: in the order they were placed, notes of a
    # request before its tail copies (the notes preceded that request's tail)
    return item[0]


def _split(tokens: int, blocks: Sequence[Block]) -> list[int]:
    """Share an entry's token count over its blocks by text length (sum preserved)."""
    if not blocks:
        return []
    lengths = [max(1, len(block_text(b))) for b in blocks]
    total = sum(lengths)
    out = [tokens * n // total for n in lengths]
    out[-1] += tokens - sum(out)
    return out


def assemble(
    window: Any,
    strategy: str = "regio",
    *,
    tools: Iterable[ToolSpec] = (),
    state: LayoutState | None = None,
    previous: Request | None = None,
    ttl: str = "5m",
    stable_ttl: str | None = None,
    min_cache_tokens: int | None = None,
    model: str | None = None,
    provider: str | None = None,
    rules: Any = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    settle_share: float = DEFAULT_SETTLE_SHARE,
    session_id: str | None = None,
) -> Request:
    """Lay ``window`` out as a provider-neutral :class:`Request`.

    * ``window``: ``regions`` (declaration order) and ``max_tokens``; see
      :class:`regio.layout.protocols.WindowLike`.
    * ``strategy``: ``naive`` | ``kind`` | ``volatility`` | ``regio`` (DESIGN.md section 3).
    * ``tools``: tool definitions, kept in the given order.
    * ``state`` (or ``previous.state``): the previous request's :class:`LayoutState`.
    * ``ttl`` / ``stable_ttl``: marker TTLs (``5m`` | ``1h``) for the conversation and for the
      stable/settled prefix (``stable_ttl`` defaults to ``ttl``; it may not be shorter).
    * ``min_cache_tokens``: minimum cacheable prefix (tokens); default from the cache rules for
      ``model`` (``regio.cache.rules.resolve``), else 1,024.
    * ``provider``: with ``model``, picks the cache multipliers that decide when the freezing
      tail drops stale copies (:func:`regio.layout.tail.gc_ratio`; Anthropic's by default).
    * ``chunk_tokens``: target chunk size of grows regions (tokens).
    * ``settle_share``: share of ``window.max_tokens`` unsettled notes may reach (``regio``).
    * ``session_id``: seeds the OpenAI ``prompt_cache_key``.

    Raises :class:`LayoutError` (a ``ValueError``) for an unknown strategy, duplicate tool names,
    a bad tool schema, a state from another strategy, or a system-role conversation message.
    """
    if strategy not in STRATEGIES:
        raise LayoutError(
            f"unknown layout strategy {strategy!r}; use one of {', '.join(STRATEGIES)}"
        )
    if state is None and previous is not None:
        state = previous.state
    if state is not None and state.requests and state.strategy != strategy:
        raise LayoutError(
            f"layout state was produced by strategy {state.strategy!r}, not {strategy!r}; "
            "keep one state per strategy"
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
    min_tokens = min_cache_tokens if min_cache_tokens is not None else _min_tokens(model, rules)

    regions = list(window.regions)
    conv_region = next((r for r in regions if r.is_conversation), None)
    others = [r for r in regions if r is not conv_region]
    source = conv_region.entries if conv_region is not None else None
    conversation: list[Entry] = list(source) if source is not None else []
    events: list[LayoutEvent] = []
    prev_state = state if state is not None and state.requests else None

    placed = (state.requests if state is not None else 0) + 1
    first_digest = conversation[0].digest if conversation else None

    # --- settling (regio) and sections
    grows = [r for r in others if r.volatility == "grows" and r.kind != "custom"]

    def settle(force: str | None) -> Settling | None:
        if strategy != "regio":
            return None
        return plan_settling(
            grows,
            conversation,
            prev_state,
            window_tokens=int(window.max_tokens),
            settle_share=settle_share,
            force=force,
            placed=placed,
        )

    def sections(plan: Settling | None) -> tuple[list[Section], list[Section], dict[str, Any]]:
        return system_and_tail(
            window,
            strategy,
            others,
            settled=plan.settled if plan is not None else None,
            previous_chunks=prev_state.chunks if prev_state is not None else None,
            chunk_tokens=chunk_tokens,
        )

    plan = settle(None)
    system, tail_sections, chunks_used = sections(plan)

    # --- the freezing tail (regio): which copies stay frozen, which go to the tail
    tail_plan: TailPlan | None = None
    gc_reason: str | None = None
    stale_rent = 0
    anchor = conversation[-1].id if conversation else None
    turn = int(conversation[-1].turn) if conversation else 0

    def tail_for(gc: bool) -> TailPlan:
        return plan_tail(
            window,
            tail_sections,
            prev_state,
            anchor=anchor,
            turn=turn,
            placed=placed,
            gc=gc,
            regions={r.name: r for r in others},
        )

    if strategy == "regio":
        copies = (*prev_state.frozen, *prev_state.tail) if prev_state is not None else ()
        if copies and prev_state is not None:
            conv_ids = entry_ids(window, conversation, source)
            if plan is not None and plan.reason is not None:
                gc_reason = plan.reason
            elif prev_state.first_message is not None and first_digest != prev_state.first_message:
                gc_reason = "prefix_rewritten"
            elif any(c.anchor is not None and c.anchor not in conv_ids for c in copies):
                gc_reason = "anchor_lost"
        tail_plan = tail_for(gc_reason is not None)
        if (
            gc_reason is None
            and stale_tokens(tail_plan.frozen, tail_plan.tail) > settle_share * window.max_tokens
        ):
            gc_reason = "share"
            tail_plan = tail_for(True)
            if plan is not None and plan.notes:  # the prefix is rewritten anyway: settle too
                plan = settle("tail_share")
                system, tail_sections, chunks_used = sections(plan)
        if gc_reason is None:
            stale_rent = (prev_state.stale_rent if prev_state is not None else 0) + stale_tokens(
                tail_plan.frozen, tail_plan.tail
            )
            if stale_rent and rent_due(
                stale_rent,
                tail_plan.frozen,
                tail_plan.tail,
                conversation,
                gc_ratio(provider, model, rules),
            ):
                gc_reason = "rent"
                tail_plan = tail_for(True)

    # --- tools and system blocks
    raw: list[_Raw] = []
    for t in tool_list:
        text = msgspec.json.encode([t.name, t.description, t.canonical_schema()]).decode()
        raw.append(
            ("tools", "system", None, t, count_text(window, text), None, None, f"tool:{t.name}")
        )
    for s in system:
        raw.append(("system", "system", Text(s.text), None, s.tokens, s.region, None, s.source))
    system_end = CHAIN_ROOT
    for level, role, blk, tool, *_ in raw:
        system_end = _chain(system_end, _digest(level, role, blk, tool))
    if (
        tail_plan is not None
        and gc_reason is None
        and prev_state is not None
        and (prev_state.frozen or prev_state.tail)
        and prev_state.system_hash is not None
        and prev_state.system_hash != system_end
    ):
        gc_reason = "system_changed"
        tail_plan = tail_for(True)
    if tail_plan is not None and tail_plan.dropped:
        events.append(
            TailSettled(
                gc_reason or "prefix_rewritten",
                tuple(c.region for c in tail_plan.dropped),
                stale_tokens(tail_plan.dropped, tail_plan.tail),
            )
        )

    settle_state_settled: dict[str, tuple[str, ...]] = {}
    notes: list[tuple[Note, Entry]] = []
    if plan is not None:
        notes = plan.notes
        if plan.reason is not None:
            before = prev_state.settled if prev_state is not None else {}
            ids = tuple(
                e.id
                for r in grows
                for was in (frozenset(before.get(r.name, ())),)
                for e in r.entries
                if prev_state is not None and e.id not in was
            )
            events.append(NotesSettled(plan.reason, ids))
        settle_state_settled = {k: tuple(e.id for e in v) for k, v in plan.settled.items()}

    # --- conversation projection (notes and frozen tail copies after their anchors), repair
    # and message blocks, reusing the previous request's work for the unchanged prefix
    by_anchor: dict[str | None, list[Extra]] = {}
    for note, entry in notes:
        text = note_text(note.region, entry)
        ntok = entry.tokens + count_text(window, text[: len(text) - len(entry.text)])
        pm = note_message(text, ntok, entry.id)
        by_anchor.setdefault(note.anchor, []).append(((note.placed, 0), pm, (ntok,), (None,)))
    if tail_plan is not None:
        groups: dict[tuple[str | None, int], list[tuple[str, int, str]]] = {}
        for c in tail_plan.frozen:
            groups.setdefault((c.anchor, c.placed), []).append((c.text, c.tokens, c.region))
        for (anc, when), frozen_copies in groups.items():
            by_anchor.setdefault(anc, []).append(
                (
                    (when, 1),
                    frozen_message(when, frozen_copies),
                    tuple(n for _, n, _ in frozen_copies),
                    tuple(r for _, _, r in frozen_copies),
                )
            )
    for extras in by_anchor.values():
        extras.sort(key=_order)
    message_blocks, repair_events, message_hashes = conversation_blocks(
        window,
        strategy,
        conversation,
        by_anchor,
        system_end,
        lambda e: _SPLITS.get(e, _entry_split),
        lambda level, role, b: _digest(level, role, b, None),
        _chain,
        source,
    )
    events.extend(repair_events)

    # --- blocks with digests and chained prefix hashes
    n_system = len(raw)
    tail_index: int | None = None
    if tail_plan is not None:
        for c in tail_plan.tail:
            tail_index = len(raw)
            raw.append(
                (
                    "tail",
                    "user",
                    Text(c.text),
                    None,
                    c.tokens,
                    c.region,
                    None,
                    f"rewritten:{c.region}",
                )
            )
    else:
        for s in tail_sections:
            raw.append(("tail", "user", Text(s.text), None, s.tokens, s.region, None, s.source))
    blocks: list[LayoutBlock] = []
    h = CHAIN_ROOT
    h = _chain_blocks(raw[:n_system], h, blocks)
    blocks.extend(message_blocks)
    if message_blocks:
        h = message_blocks[-1].prefix_hash
    if tail_index is not None:
        tail_index += len(message_blocks)
    _chain_blocks(raw[n_system:], h, blocks)

    # the request's total: the few tools / system / tail blocks plus the conversation cache's
    # running sum (no pass over the whole conversation)
    total_tokens = sum(r[4] for r in raw) + conversation_tokens(window, strategy, message_blocks)

    # --- stable-region change warnings (once per region)
    stable_digests: dict[str, tuple[int, str]] = {}
    warned = list(prev_state.stable_warned) if prev_state is not None else []
    for r in others:
        if r.volatility != "stable":
            continue
        dg = content_hash(r.render_text())
        stable_digests[r.name] = (int(r.version), dg)
        old = prev_state.stable_digests.get(r.name) if prev_state is not None else None
        if old is not None and old[1] != dg and r.name not in warned:
            warned.append(r.name)
            events.append(StableRegionChanged(r.name, explicit_edit=old[0] != int(r.version)))

    # --- breakpoints
    try:
        marks = plan_breakpoints(
            strategy,
            blocks,
            ttl=ttl,
            stable_ttl=stable_ttl,
            min_tokens=min_tokens,
            previous_newest=prev_state.newest_hash if prev_state is not None else None,
            previous_marks=tuple(ph for _, ph in prev_state.marks)
            if prev_state is not None
            else (),
            tail_index=tail_index,
            system_changed=prev_state is not None
            and prev_state.system_hash is not None
            and prev_state.system_hash != system_end,
        )
    except ValueError as exc:
        raise LayoutError(str(exc)) from exc
    for m in marks:
        blocks[m.index] = _MARKED.get(blocks[m.index], _marked_with(m.ttl), m.ttl)
    events.append(BreakpointPlan(strategy, tuple((m.index, m.ttl, m.slot) for m in marks)))

    # --- never-read breakpoints: did last request's marked prefixes survive into this one?
    stats = dict(prev_state.stats) if prev_state is not None else {}
    if prev_state is not None:
        # the message blocks' hashes come carried forward from the conversation cache; the
        # tools / system / tail blocks are few
        n_msg = len(message_blocks)
        present = set(map(_PREFIX_HASH, blocks[:n_system]))
        present.update(map(_PREFIX_HASH, blocks[n_system + n_msg :]))
        for slot, ph in prev_state.marks:
            st = stats.get(slot, BreakpointStat())
            survived = ph in present or ph in message_hashes
            st = BreakpointStat(st.marks + 1, st.survived + survived, st.warned)
            if st.marks + 1 >= NEVER_READ_AFTER and st.survived == 0 and not st.warned:
                events.append(BreakpointNeverRead(slot, st.marks + 1))
                st = BreakpointStat(st.marks, st.survived, True)
            stats[slot] = st

    newest = next((m for m in marks if m.slot == "newest"), None)
    new_state = LayoutState(
        strategy=strategy,
        requests=(state.requests if state is not None else 0) + 1,
        chunks=chunks_used,
        settled=settle_state_settled,
        notes=tuple(n for n, _ in notes),
        first_message=first_digest,
        stable_digests=stable_digests,
        stable_warned=tuple(warned),
        system_hash=system_end,
        marks=tuple((m.slot, blocks[m.index].prefix_hash) for m in marks),
        newest_hash=blocks[newest.index].prefix_hash if newest is not None else None,
        stats=stats,
        tail=tail_plan.tail if tail_plan is not None else (),
        frozen=tail_plan.frozen if tail_plan is not None else (),
        stale_rent=stale_rent if gc_reason is None else 0,
    )
    return Request(
        strategy=strategy,
        blocks=tuple(blocks),
        breakpoints=tuple(marks),
        ttl=ttl,  # type: ignore[arg-type]
        state=new_state,
        events=tuple(events),
        prompt_cache_key=prompt_cache_key(blocks, session_id),
        min_cache_tokens=min_tokens,
        total_tokens=total_tokens,
    )
