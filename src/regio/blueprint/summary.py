"""A one-screen summary of a blueprint: its regions with resolved budgets and policies, and the
order in which its layout strategy places them. Used by ``regio validate``."""

from __future__ import annotations

from rich.console import Console, Group
from rich.markup import escape
from rich.text import Text

from regio.blueprint.pressure import pressure_notes
from regio.blueprint.spec import (
    VOLATILITIES,
    Blueprint,
    CompactHistorySpec,
    RegionSpec,
    SlidingWindowSpec,
)
from regio.blueprint.validate import never_shrinks, resolved_budget
from regio.console import TableColumn, fit_tables

__all__ = ["KIND_ORDER", "layout_order", "policy_text", "render_summary"]

#: Kind order of the ``kind`` baseline layout; also breaks ties in ``volatility``.
KIND_ORDER = (
    "pinned",
    "compact_history",
    "keyed",
    "checklist",
    "compacting",
    "custom",
    "temporary",
    "clearable",
)


def _conversation(bp: Blueprint) -> RegionSpec | None:
    return next((r for r in bp.regions if isinstance(r, SlidingWindowSpec)), None)


def _kind_rank(spec: RegionSpec) -> int:
    return KIND_ORDER.index(spec.kind) if spec.kind in KIND_ORDER else len(KIND_ORDER)


def layout_order(bp: Blueprint) -> list[tuple[str, list[str]]]:
    """``(slot, region names)`` in request order under ``bp.layout.strategy``.

    * ``regio``: tools, stable, grows (chunked), compact_history, conversation, tail
      (rewritten regions after the conversation);
    * ``naive``: system (declaration order), conversation;
    * ``kind``: system in :data:`KIND_ORDER`, conversation;
    * ``volatility``: system sorted stable, grows, rewritten (kind order breaks ties),
      conversation.

    Empty slots are kept so the shape of the strategy shows; ``tools`` holds no region (the
    agent's tool schemas go there).
    """
    conversation = _conversation(bp)
    convo = [conversation.name] if conversation is not None else []
    rest = [r for r in bp.regions if r is not conversation]
    strategy = bp.layout.strategy
    if strategy == "naive":
        return [("system", [r.name for r in rest]), ("conversation", convo)]
    if strategy == "kind":
        ordered = sorted(rest, key=_kind_rank)
        return [("system", [r.name for r in ordered]), ("conversation", convo)]
    if strategy == "volatility":
        ordered = sorted(rest, key=lambda r: (VOLATILITIES.index(r.volatility), _kind_rank(r)))
        return [("system", [r.name for r in ordered]), ("conversation", convo)]
    histories = [r.name for r in rest if isinstance(r, CompactHistorySpec)]
    others = [r for r in rest if not isinstance(r, CompactHistorySpec)]
    return [
        ("tools", []),
        ("stable", [r.name for r in others if r.volatility == "stable"]),
        ("grows", [r.name for r in others if r.volatility == "grows"]),
        ("compact_history", histories),
        ("conversation", convo),
        ("tail", [r.name for r in others if r.volatility == "rewritten"]),
    ]


def policy_text(spec: RegionSpec) -> str:
    """Short text of a region's kind-specific policy (eviction, trigger, source, ...; each
    kind's :meth:`~regio.blueprint.regionspec.RegionSpec.policy`)."""
    return spec.policy()


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
                escape(policy_text(spec)),
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
        "tok max)"
    )
    order = Text(f"layout ({bp.layout.strategy}): ")
    parts = [f"[{slot}: {', '.join(names) or '-'}]" for slot, names in layout_order(bp)]
    order.append(" ".join(parts))
    budgets = {i: resolved_budget(spec, window) for i, spec in enumerate(bp.regions)}
    pressure = Text("\n".join(f"token pressure: {n}" for n in pressure_notes(bp, budgets)))
    console.print(Group(*tables, facts, order, pressure))
    for warning in bp.warnings:
        where = f"{bp.source.file}:{warning.line}" if bp.source and warning.line else ""
        prefix = f"{where}: " if where else ""
        console.print(Text(f"{prefix}{warning.path}: warning: {warning.message}", style="yellow"))
    status = "valid" + (f", {len(bp.warnings)} warning(s)" if bp.warnings else "")
    console.print(Text(status, style="green"))
