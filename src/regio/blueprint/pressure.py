"""Warnings, with numbers, about what a conversation's eviction will cost under token pressure
(``docs/runtime.md``, "Token hysteresis"): a ``bulk`` / ``compact`` step that frees too little
(a target too close to its trigger, a ``compact_count`` / ``overflow`` smaller than a turn)
runs on every turn. :func:`pressure_notes` says, per conversation, what its step is and what
``per_item`` costs (it rewrites the cached conversation on every write once full).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from regio.blueprint import costnote
from regio.blueprint.spec import Blueprint, SlidingWindowSpec
from regio.errors import RegionConfigError
from regio.policies import hysteresis as hy
from regio.session._cacheprices import summary_cost_terms

__all__ = ["TURN_SHARES", "check_pressure", "pressure_notes"]

Warn = Callable[[tuple[str | int, ...], str], None]

#: Smallest turn the target check assumes, as a share of the conversation budget.
TURN_SHARES = (0.01,)

#: Items a tool-using turn adds (the assistant's call and its result).
ITEMS_PER_TURN = 2


def check_pressure(bp: Blueprint, budgets: Mapping[int, int], warn: Warn) -> None:
    """Warn for each ``sliding_window`` of ``bp`` (``budgets``: resolved tokens per region
    index) whose ``bulk`` / ``compact`` step evicts or compacts on every turn (module doc)."""
    for index, spec in enumerate(bp.regions):
        if not isinstance(spec, SlidingWindowSpec) or index not in budgets:
            continue
        if spec.eviction.strategy != "per_item":
            _check_step(spec, budgets[index], ("regions", index, "eviction"), warn)


def pressure_notes(bp: Blueprint, budgets: Mapping[int, int]) -> list[str]:
    """One line per ``sliding_window`` of ``bp`` saying what token pressure does and costs."""
    notes = []
    write, read = hy.DEFAULT_MULTIPLIERS
    for index, spec in enumerate(bp.regions):
        if not isinstance(spec, SlidingWindowSpec) or index not in budgets:
            continue
        budget, ev = budgets[index], spec.eviction
        if ev.strategy == "per_item":
            notes.append(
                f"{spec.name}: per_item: once full ({budget:,} tokens) every write drops the "
                f"oldest turn group and the next request writes about {budget:,} tokens to the "
                f"cache again ({write / read:.1f}x their cache-read price) on every turn"
            )
            continue
        default = (
            hy.DEFAULT_COMPACT_TRIGGER if ev.strategy == "compact" else hy.DEFAULT_BULK_TRIGGER
        )
        try:
            trigger = min(budget, hy.resolve_mark(ev.trigger or default, budget))
            target = None if ev.target is None else hy.resolve_mark(ev.target, budget)
        except RegionConfigError:
            continue
        step = "compacts" if ev.strategy == "compact" else "evicts"
        if spec.elastic is not False:
            others = sum(b for i, b in budgets.items() if i != index)
            elastic = _elastic_note(bp, spec.name, budget, step)
            if elastic is not None:
                notes.append(
                    f"{spec.name}: elastic: it grows past its {budget:,}-token budget into "
                    f"what the window has free (up to "
                    f"{max(budget, bp.window_tokens - others):,} tokens with every other "
                    f"region full, {bp.window_tokens:,} with them empty), so it {step} on the "
                    f"window's real fill, not at a share of its budget: {elastic}"
                )
                continue
        if target is None:
            turn = int(0.03 * budget)
            shown = (
                f"a target from the cache prices and the measured tokens per turn (e.g. "
                f"{hy.cost_target(trigger, turn):,} tokens for {turn:,}-token turns)"
            )
        else:
            shown = f"{target:,} tokens"
        notes.append(f"{spec.name}: at {trigger:,} tokens it {step} down to {shown} in one step")
    return notes


def _elastic_note(bp: Blueprint, name: str, budget: int, step: str) -> str | None:
    """Where an engine built from ``bp`` first compacts (or evicts) its elastic
    ``sliding_window`` called ``name`` for turns of 3% of its ``budget``: the marks
    :meth:`regio.regions.SlidingWindow.hysteresis` gives on a fresh window of ``bp`` (seeds
    written), priced as the engine prices them (:func:`regio.engine._parts.apply_options`):
    the cost controller with the blueprint's summarizer model, and, under ``summarizer.provider:
    extractive``, with an offline summarizer (``Engine.from_blueprint``'s default there, priced
    as the agent's model) when that differs; in tokens of the whole request."""
    priced = costnote.priced_conversation(bp, name)
    if priced is None:
        return None
    conv, cache = priced
    turn = int(0.03 * budget)
    outside = conv.outside_tokens()
    summary = float(bp.summarizer.max_summary_tokens)
    conv.cost_terms = None
    plain = conv.hysteresis(float(turn), steady=True)
    named_terms = summary_cost_terms(cache, bp.summary_model, summary)
    conv.cost_terms = named_terms
    named = conv.hysteresis(float(turn), steady=True)
    own_terms = summary_cost_terms(cache, None, summary)
    conv.cost_terms = own_terms
    own = conv.hysteresis(float(turn), steady=True)
    if plain is None or named is None or own is None:
        return None
    fill = outside + plain[0]
    start = outside + conv.used_tokens  # the whole request before the first turn
    trigger, target = (outside + m for m in named)
    declared = conv.eviction.trigger  # type: ignore[union-attr]
    mark = (
        f"its trigger {declared} of its room"
        if declared is not None
        else f"the window-fill mark, {bp.window.high_water:.0%} of its room"
    )
    why = (
        f"the cost controller's trigger, before the window-fill mark {fill:,}"
        f"{costnote.early_text(target, trigger, fill, start, turn, named_terms)}"
        if trigger < fill
        else mark
    )
    writer = bp.summary_model
    line = (
        f"with the other regions as seeded and {turn:,}-token turns it {step} at "
        f"{trigger:,} tokens a request ({why}) down to {target:,} in one step"
    )
    if writer is not None and own != named:
        line += f", its summaries priced as {writer[1]}'s"
        # Engine.from_blueprint's default summarizer is offline only under ``provider:
        # extractive``; otherwise it calls the named model, priced as above
        if bp.summarizer.provider == "extractive":
            early = costnote.early_text(
                outside + own[1], outside + own[0], fill, start, turn, own_terms
            )
            line += (
                f"; at {outside + own[0]:,} down to {outside + own[1]:,} with an offline "
                "summarizer (Engine.from_blueprint's default), priced as the agent's model"
                f"{early if own[0] < plain[0] else ''}"
            )
    if bp.relief.enabled and bp.relief.clear and bp.relief.clear_after_summary:
        line += (
            "; clearing the tool results the summary kept (relief.clear_after_summary) "
            "takes it lower"
        )
    return line + "; fuller regions bring it earlier"


def _check_step(
    spec: SlidingWindowSpec, budget: int, path: tuple[str | int, ...], warn: Warn
) -> None:
    ev = spec.eviction
    verb = "compacts" if ev.strategy == "compact" else "bulk-evicts"
    count = ev.compact_count if ev.strategy == "compact" else ev.overflow
    key = "compact_count" if ev.strategy == "compact" else "overflow"
    if spec.max_items is not None and count <= ITEMS_PER_TURN:
        warn(
            (*path, key),
            f"{key}: {count} items: a tool-using turn adds {ITEMS_PER_TURN} items, so past "
            f"max_items ({spec.max_items}) the conversation {verb} on every turn; "
            "raise it to 10 or more",
        )
    default = hy.DEFAULT_COMPACT_TRIGGER if ev.strategy == "compact" else hy.DEFAULT_BULK_TRIGGER
    try:
        trigger = min(budget, hy.resolve_mark(ev.trigger or default, budget))
        target = None if ev.target is None else hy.resolve_mark(ev.target, budget)
    except RegionConfigError as exc:
        warn(path, str(exc))
        return
    if target is None:  # derived from the cache prices at run time: freed in steps
        return
    freed = trigger - target
    smallest = int(TURN_SHARES[0] * budget)
    if target >= trigger or freed < smallest:
        warn(
            (*path, "target"),
            f"target {target} tokens is {'not below' if target >= trigger else 'only'} "
            f"{'' if target >= trigger else f'{freed} tokens below '}the {trigger}-token "
            f"trigger: a turn of {smallest} tokens ({TURN_SHARES[0]:.0%} of the budget) or "
            f"more passes the trigger again at once, so the conversation {verb} on "
            "every turn; lower the target (half the trigger is a safe start)",
        )
