"""Load-time report of what the context tools' schemas cost (``regio validate``): the tools
regio offers are known from the blueprint (``tools.context`` and the region kinds), and their
schemas ride on every request, so they take room the regions share.

:func:`check_tool_room` warns when the schemas (rendered for the blueprint's provider, with its
framing: :func:`regio.tokens.tooldefs.tool_definition_tokens`) are what takes the regions that
never shrink past the window, and when they are what puts a conversation's token trigger
(``bulk`` / ``compact`` eviction) above the room left for it: the request ceiling, not the
planned hysteresis step, would then compact it. Tools the application passes per request are
not known here; the runtime counts them (``docs/runtime.md``, "Budget truth").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from regio.blueprint.spec import Blueprint, SlidingWindowSpec
from regio.errors import RegioError
from regio.policies import hysteresis as hy

__all__ = [
    "blueprint_tool_specs",
    "blueprint_tools_tokens",
    "check_tool_room",
    "check_trigger_floor",
]

Warn = Callable[[tuple[str | int, ...], str], None]


def blueprint_tool_specs(bp: Blueprint) -> list[Any]:
    """The context tools an engine built from ``bp`` offers (:class:`regio.layout.ToolSpec`
    list, the runtime's own :func:`regio.engine._tools.offered_tool_specs` over the region
    kinds; an unknown kind offers nothing)."""
    from regio.regions.registry import kind_class
    from regio.session._toolspecs import offered_tool_specs

    regions = []
    for spec in bp.regions:
        cls = kind_class(spec.kind)
        if cls is None:
            continue
        regions.append(
            SimpleNamespace(name=spec.name, kind=cls.kind, agent_writable=cls.agent_writable)
        )
    return offered_tool_specs(SimpleNamespace(regions=regions), bp.tools.context)  # type: ignore[arg-type]


def blueprint_tools_tokens(bp: Blueprint) -> int:
    """Tokens of the context tools' schemas of ``bp`` as its provider receives them (0 when
    no tool is offered), counted with the blueprint's tokenizer."""
    from regio.providers.registry import tool_framing_for
    from regio.tokens.tooldefs import tool_definition_tokens

    specs = blueprint_tool_specs(bp)
    if not specs:
        return 0
    counter = _counter(bp)
    framing = tool_framing_for(bp.model.provider)
    return tool_definition_tokens(specs, framing, lambda t: int(counter.count(t)))


def check_tool_room(
    bp: Blueprint, budgets: Mapping[int, int], fixed: Mapping[int, int], warn: Warn
) -> None:
    """Warn (module doc) for ``bp`` with ``budgets`` (resolved tokens per region index) and
    ``fixed`` (those of the regions that never shrink)."""
    try:
        tools = blueprint_tools_tokens(bp)
    except (RegioError, ValueError):
        return  # an unknown tokenizer or kind is reported by the other checks
    if tools == 0:
        return
    window, need = bp.window_tokens, sum(fixed.values())
    if need <= window < need + tools:
        warn(
            ("tools", "context"),
            f"the context tools' schemas take {tools} tokens on every request; with the "
            f"regions that never shrink ({need} tokens) they need more than the window "
            f"holds ({window}), so a full window is refused; lower those budgets, raise the "
            "window or set tools.context: none",
        )
    room = window - need
    for index, spec in enumerate(bp.regions):
        if not isinstance(spec, SlidingWindowSpec) or index not in budgets:
            continue
        trigger = _trigger(spec, budgets[index])
        if trigger is not None and room - tools < trigger <= room:
            warn(
                ("regions", index, "eviction"),
                f"{spec.name}: its token trigger ({trigger} tokens) fits beside the regions "
                f"that never shrink ({need} of {window} tokens) only without the context "
                f"tools' schemas ({tools} tokens on every request): the request ceiling, not "
                "the trigger, will compact it; lower its budget or trigger, or set "
                "tools.context: none",
            )


def check_trigger_floor(
    bp: Blueprint, fixed: Mapping[int, int], fixed_seeds: Sequence[str], warn: Warn
) -> None:
    """Warn when the whole-context trigger (``window.compact_trigger``) is at or below the
    floor that never shrinks: the seeds of the regions that never shrink (``fixed_seeds``,
    the system prompt and its kin) plus the context tools' schemas. Every request is then over
    it from the first turn and compaction cannot bring it under, so the runtime ignores it
    (one ``trigger_below_floor`` event). A trigger above that floor but at or below the
    never-shrinking regions' full budgets (``fixed``) plus the schemas is warned too: it is
    passed for good once those regions fill. A trigger above the window never fires (the
    request ceiling compacts first)."""
    mark = bp.window.compact_trigger
    if mark is None:
        return
    window = bp.window_tokens
    try:
        trigger = hy.resolve_mark(mark, window)
        tools = blueprint_tools_tokens(bp)
        counter = _counter(bp)
    except (RegioError, ValueError):
        return  # an unknown tokenizer or mark is reported by the other checks
    seeds = sum(int(counter.count(text)) for text in fixed_seeds)
    floor, full = seeds + tools, sum(fixed.values()) + tools
    path = ("window", "compact_trigger")
    parts = (
        f"the seeds of the regions that never shrink ({seeds}) and the context tools' "
        f"schemas ({tools})"
    )
    if trigger <= floor:
        warn(
            path,
            f"compact_trigger {trigger} tokens is at or below the fixed floor of {floor} tokens "
            f"({parts}): every request is over it and no compaction can bring it under, so it "
            "is ignored at run time; raise it above the floor or shorten the pinned prompt",
        )
    elif trigger <= full:
        warn(
            path,
            f"compact_trigger {trigger} tokens is at or below what the regions that never "
            f"shrink may hold ({sum(fixed.values())} tokens of budgets) plus the context tools' "
            f"schemas ({tools}): once they fill, every request is over it and it is ignored; "
            "raise it or lower those budgets",
        )
    elif trigger > window:
        warn(
            path,
            f"compact_trigger {trigger} tokens is above the window ({window} tokens): it never "
            "fires (the request ceiling compacts first); lower it",
        )


def _counter(bp: Blueprint) -> Any:
    from regio.providers.registry import chat_format_for
    from regio.tokens import get_counter

    return get_counter(bp.tokenizer, chat_format=chat_format_for(bp.model.provider, bp.model.name))


def _trigger(spec: SlidingWindowSpec, budget: int) -> int | None:
    ev = spec.eviction
    if ev.strategy == "per_item":
        return None
    default = hy.DEFAULT_COMPACT_TRIGGER if ev.strategy == "compact" else hy.DEFAULT_BULK_TRIGGER
    try:
        return min(budget, hy.resolve_mark(ev.trigger or default, budget))
    except RegioError:
        return None
