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

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

from regio.blueprint.spec import Blueprint, SlidingWindowSpec
from regio.errors import RegioError
from regio.policies import hysteresis as hy

__all__ = ["blueprint_tool_specs", "blueprint_tools_tokens", "check_tool_room"]

Warn = Callable[[tuple[str | int, ...], str], None]


def blueprint_tool_specs(bp: Blueprint) -> list[Any]:
    """The context tools an engine built from ``bp`` offers (:class:`regio.layout.ToolSpec`
    list, the runtime's own :func:`regio.runtime.tools.offered_tool_specs` over the region
    kinds; an unknown kind offers nothing)."""
    from regio.regions.registry import kind_class
    from regio.runtime.toolspecs import offered_tool_specs

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
    from regio.tokens import chat_format_for_model, get_counter
    from regio.tokens.tooldefs import tool_definition_tokens

    specs = blueprint_tool_specs(bp)
    if not specs:
        return 0
    counter = get_counter(bp.tokenizer, chat_format=chat_format_for_model(bp.model.name))
    return tool_definition_tokens(specs, bp.model.provider, lambda t: int(counter.count(t)))


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


def _trigger(spec: SlidingWindowSpec, budget: int) -> int | None:
    ev = spec.eviction
    if ev.strategy == "per_item":
        return None
    default = hy.DEFAULT_COMPACT_TRIGGER if ev.strategy == "compact" else hy.DEFAULT_BULK_TRIGGER
    try:
        return min(budget, hy.resolve_mark(ev.trigger or default, budget))
    except RegioError:
        return None
