"""A one-screen summary of a blueprint: its regions with resolved budgets and policies, and the
order in which its layout strategy places them. Used by ``regio validate``."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, Group
from rich.markup import escape
from rich.text import Text

from regio.blueprint.costnote import cost_notes
from regio.blueprint.pressure import pressure_notes
from regio.blueprint.spec import (
    VOLATILITIES,
    Blueprint,
    CompactHistorySpec,
    RegionSpec,
    SlidingWindowSpec,
)
from regio.blueprint.validate import never_shrinks, resolved_budget
from regio.blueprint.writers import replacing_writers
from regio.console import TableColumn, fit_tables
from regio.regions.base import declared_kinds

__all__ = ["layout_order", "policy_text", "render_summary"]

Slots = list[tuple[str, list[str]]]


def _conversation(bp: Blueprint) -> RegionSpec | None:
    return next((r for r in bp.regions if isinstance(r, SlidingWindowSpec)), None)


def _kind_rank(spec: RegionSpec) -> int:
    """The ``kind_rank`` its region kind declares (:attr:`regio.regions.Region.kind_rank`),
    the order the ``kind`` layout uses; 1 for a kind not defined."""
    return int(getattr(declared_kinds().get(spec.kind), "kind_rank", 1))


def _system_only(order: Callable[[list[RegionSpec]], list[RegionSpec]]) -> Callable[..., Slots]:
    """A comparison layout: one system slot in ``order``, then the conversation."""

    def slots(rest: list[RegionSpec], convo: list[str]) -> Slots:
        return [("system", [r.name for r in order(rest)]), ("conversation", convo)]

    return slots


def _regio_slots(
    rest: list[RegionSpec], convo: list[str], writers: dict[str, str] | None = None
) -> Slots:
    """The ``regio`` slots; ``writers``: the regions whose declared writer replaces what it
    stored (:func:`regio.blueprint.writers.replacing_writers`), laid out in the tail."""
    histories = [r.name for r in rest if isinstance(r, CompactHistorySpec)]
    others = [r for r in rest if not isinstance(r, CompactHistorySpec)]
    moved = writers or {}

    def vol(r: RegionSpec) -> str:
        return "rewritten" if r.name in moved else r.volatility

    return [
        ("tools", []),
        ("stable", [r.name for r in others if vol(r) == "stable"]),
        ("grows", [r.name for r in others if vol(r) == "grows"]),
        ("compact_history", histories),
        ("conversation", convo),
        ("tail", [r.name for r in others if vol(r) == "rewritten"]),
    ]


#: Slots of each layout strategy by name (``regio`` for any other).
_SLOTS: dict[str, Callable[[list[RegionSpec], list[str]], Slots]] = {
    "naive": _system_only(list),
    "kind": _system_only(lambda rest: sorted(rest, key=_kind_rank)),
    "volatility": _system_only(
        lambda rest: sorted(rest, key=lambda r: (VOLATILITIES.index(r.volatility), _kind_rank(r)))
    ),
}


def layout_order(bp: Blueprint) -> Slots:
    """``(slot, region names)`` in request order under ``bp.layout.strategy``.

    * ``regio``: tools, stable, grows (chunked), compact_history, conversation, tail
      (rewritten regions after the conversation, and every region whose declared writer
      replaces what it stored: :mod:`regio.blueprint.writers`);
    * ``naive``: system (declaration order), conversation;
    * ``kind``: system by each kind's ``kind_rank`` (ties in declaration order), conversation;
    * ``volatility``: system sorted stable, grows, rewritten (kind rank breaks ties),
      conversation.

    Empty slots are kept so the shape of the strategy shows; ``tools`` holds no region (the
    agent's tool schemas go there).
    """
    conversation = _conversation(bp)
    convo = [conversation.name] if conversation is not None else []
    rest = [r for r in bp.regions if r is not conversation]
    slots = _SLOTS.get(bp.layout.strategy)
    if slots is None:
        return _regio_slots(rest, convo, replacing_writers(bp.regions, bp.relief))
    return slots(rest, convo)


def policy_text(spec: RegionSpec, carry_forward: str = "append") -> str:
    """Short text of a region's kind-specific policy (eviction, trigger, source, ...; each
    kind's :meth:`~regio.blueprint.regionspec.RegionSpec.policy`). A ``compact_history``
    under ``carry_forward="replace"`` (the blueprint's ``summarizer.carry_forward``) holds one
    rolling summary of its source instead of merging its oldest."""
    if carry_forward == "replace" and isinstance(spec, CompactHistorySpec):
        return f"from {spec.source}; one rolling summary"
    return spec.policy()


#: How the summary line names each ``summarizer.carry_forward``.
_CARRY = {"append": "summaries appended", "replace": "one rolling summary"}

#: Columns of the region table; the policy text wraps, every other cell keeps its width.
_COLUMNS = (
    TableColumn("region"),
    TableColumn("kind"),
    TableColumn("budget"),
    TableColumn("tokens", justify="right"),
    TableColumn("volatility"),
    TableColumn("admission"),
    TableColumn("eviction", wrap=True),
)


def render_summary(bp: Blueprint, console: Console) -> None:
    """Print the summary of a valid blueprint (and its warnings) to ``console``."""
    window = bp.window_tokens
    rows = []
    total = fixed = 0
    for spec in bp.regions:
        tokens = resolved_budget(spec, window)
        total += tokens
        fixed += tokens if never_shrinks(spec) else 0
        rows.append(
            [
                escape(spec.name),
                spec.kind,
                escape(str(spec.budget)),
                f"{tokens:,}",
                spec.volatility,
                spec.admission,
                escape(policy_text(spec, bp.summarizer.carry_forward)),
            ]
        )
    tables = fit_tables(f"{bp.name}: {len(bp.regions)} regions", _COLUMNS, rows, console.width)
    model = bp.model
    facts = Text(
        f"model {model.provider}:{model.name} (window {model.context_window:,}, output "
        f"{model.max_output_tokens:,}) | regions share {window:,} tokens | budgets sum "
        f"{total:,} ({total / window:.0%}) | never-shrinking {fixed:,} | reclaim at "
        f"{bp.window.high_water:.0%}\n"
        f"tokenizer {bp.tokenizer} | cache {bp.cache_profile} ttl {bp.cache.ttl} | "
        f"summarizer {bp.summarizer.model or model.name} ({bp.summarizer.max_summary_tokens:,} "
        f"tok max, {_CARRY[bp.summarizer.carry_forward]})"
    )
    order = Text(f"layout ({bp.layout.strategy}): ")
    parts = [f"[{slot}: {', '.join(names) or '-'}]" for slot, names in layout_order(bp)]
    order.append(" ".join(parts))
    budgets = {i: resolved_budget(spec, window) for i, spec in enumerate(bp.regions)}
    notes = [*pressure_notes(bp, budgets), *cost_notes(bp)]
    pressure = Text("\n".join(f"token pressure: {n}" for n in notes))
    console.print(Group(*tables, facts, order, pressure))
    for warning in bp.warnings:
        where = f"{bp.source.file}:{warning.line}" if bp.source and warning.line else ""
        prefix = f"{where}: " if where else ""
        line = Text(f"{prefix}{warning.path}: warning: {warning.message}", style="yellow")
        console.print(line, soft_wrap=True)  # one `file:line:` line, as editors parse it
    status = "valid" + (f", {len(bp.warnings)} warning(s)" if bp.warnings else "")
    console.print(Text(status, style="green"))
