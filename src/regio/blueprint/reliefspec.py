"""The ``relief`` section of a blueprint: the relief chain run under token pressure before any
summarization (clear old tool results, trim oversized text blocks, then summarize) and the
per-tool rules applied when a tool result is admitted (``route``, ``max_result_tokens``,
``dedupe``). The runtime side is :mod:`regio.compaction.relief._chain`; docs/relief.md explains the
chain.

Sizes: ``*_chars`` are characters, every other size is tokens. The keys are made from the
fields of :class:`regio.policies.relief.ReliefPolicy` / :class:`~regio.policies.relief.ToolRelief`
(:func:`_policy_keys`): their names, types, defaults, constraints and documentation are declared
there once (each field's ``msgspec.Meta``), so a blueprint and ``EngineOptions.relief`` built in
Python agree. Only the blueprint's own keys are declared here: ``enabled``, a tool's ``name`` and
the ``tools`` list.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import attrs
import msgspec

from regio.blueprint.capturespec import key_fields
from regio.blueprint.fields import FieldRule, NonEmpty
from regio.policies.fieldrules import field_problem, field_rules
from regio.policies.relief import ReliefPolicy, ToolRelief, trim_problem

__all__ = ["ReliefSpec", "ReliefToolSpec", "check_relief", "relief_policy"]

#: Region kinds a tool's results can be routed to (they may drop what they hold).
ROUTE_KINDS = ("temporary", "clearable", "keyed")


def _spec_type(hint: object) -> object:
    """A policy field's type as a blueprint key's: the ``msgspec.Meta`` constraints a
    :class:`regio.blueprint.fields.FieldRule` can state become one (inside ``X | None`` too);
    :func:`check_relief` validates the values against every declared constraint."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        parts = [_spec_type(a) for a in typing.get_args(hint)]
        return typing.Union[tuple(parts)]  # noqa: UP007  (built from a tuple)
    metas = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, msgspec.Meta)]
    if not metas:
        return hint
    # the constraints a FieldRule states (the JSON Schema and the converter's first check);
    # check_relief validates every declared constraint with msgspec (field_problem)
    rule = {k: getattr(metas[0], k) for k in ("ge", "gt", "le", "pattern", "min_length")}
    base = typing.get_args(hint)[0]
    if not any(v is not None for v in rule.values()):
        return base
    return Annotated[base, FieldRule(**{k: v for k, v in rule.items() if v is not None})]


def _policy_keys(cls: type[msgspec.Struct], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The attrs fields (blueprint keys, in declaration order) of the policy class ``cls``'s
    fields: type and constraint (:func:`_spec_type`), default and documentation from the
    field's declaration (:func:`regio.policies.fieldrules.field_rules`). Raises ``TypeError`` for
    a field that declares no documentation."""
    hints = typing.get_type_hints(cls, include_extras=True)
    rules = field_rules(cls)
    keys: dict[str, Any] = {}
    for info in msgspec.structs.fields(cls):
        if info.name in skip:
            continue
        rule = rules.get(info.name)
        if rule is None or not rule.description:
            raise TypeError(f"{cls.__name__}.{info.name} declares no blueprint documentation")
        kind = _spec_type(hints[info.name])
        keys[info.name] = _key(rule.description, kind, default=info.default)
    return keys


def _key(doc: str, kind: object, **default: Any) -> Any:
    """A blueprint key of type ``kind`` documented by ``doc`` (as
    :func:`regio.blueprint.fields._field` declares one)."""
    # attrs' stub types ``type=`` as a class; attrs keeps any type form (``Annotated[...]``,
    # a union) as given, and the converter and the schema read it from there.
    return attrs.field(type=kind, metadata={"doc": doc}, **default)  # type: ignore[call-overload]


def _tool_keys() -> dict[str, Any]:
    return {
        "name": _key("The tool's name, as the agent calls it.", NonEmpty),
        **_policy_keys(ToolRelief),
    }


@attrs.frozen(kw_only=True, these=_tool_keys())
class ReliefToolSpec:
    """The relief rules of one tool (an item of `relief.tools`)."""

    if typing.TYPE_CHECKING:  # the keys made from ToolRelief (module doc; a test checks them)
        name: str
        clear: bool
        keep_last: int | None
        max_result_tokens: int | None
        dedupe: bool
        route: str | None
        route_key: str | None


def _relief_keys() -> dict[str, Any]:
    enabled = "Run the relief chain. Omitted: off (token pressure goes straight to summarization)."
    tools = "Per-tool rules (see [ReliefTool](#relieftool)). Omitted: none."
    return {
        "enabled": _key(enabled, bool, default=False),
        **_policy_keys(ReliefPolicy, skip=("tools",)),
        "tools": _key(tools, tuple[ReliefToolSpec, ...], factory=tuple),
    }


@attrs.frozen(kw_only=True, these=_relief_keys())
class ReliefSpec:
    """Relief before summarization: the cheapest moves first under token pressure.

    Dedupe superseded tool results, clear old ones, trim oversized text blocks, then
    summarize, each stage in one batch down to the compaction target or not at all, and
    per-tool rules on admission."""

    if typing.TYPE_CHECKING:  # the keys made from ReliefPolicy (module doc; a test checks them)
        enabled: bool
        dedupe_at_least: int
        clear: bool
        keep_last: int
        clear_at_least: int
        trim: bool
        trim_over_chars: int
        trim_head_chars: int
        trim_tail_chars: int
        trim_at_least: int
        restore_tool: bool
        clear_after_summary: bool
        summarize_originals: bool
        placeholder_extract_tokens: int
        tools: tuple[ReliefToolSpec, ...]


def relief_policy(spec: ReliefSpec) -> ReliefPolicy | None:
    """The :class:`regio.policies.relief.ReliefPolicy` of ``spec`` (``None`` when off): every
    policy field from the spec's key of the same name."""
    if not spec.enabled:
        return None
    tools = {
        t.name: ToolRelief(**{f: getattr(t, f) for f in ToolRelief.__struct_fields__})
        for t in spec.tools
    }
    fields = [f for f in ReliefPolicy.__struct_fields__ if f != "tools"]
    return ReliefPolicy(**{f: getattr(spec, f) for f in fields}, tools=tools)


Report = Callable[[tuple["str | int", ...], str], None]


def check_relief(spec: ReliefSpec, regions: Sequence[object], error: Report) -> None:
    """Check ``spec`` against the blueprint's ``regions``, calling ``error(path, message)``:
    a key's value that breaks its policy field's declared type or constraint (validated by
    msgspec, :func:`regio.policies.fieldrules.field_problem`), a trim whose head and tail do not
    fit 200 characters under its threshold, a tool named twice, a ``route`` to a missing
    region or a kind that cannot drop content, a ``route_key`` missing for a keyed region,
    given for another kind, or malformed."""
    for name in field_rules(ReliefPolicy):
        broken = field_problem(ReliefPolicy, name, getattr(spec, name))
        if broken is not None:
            error(("relief", name), broken)
    for i, tool in enumerate(spec.tools):
        for name in field_rules(ToolRelief):
            broken = field_problem(ToolRelief, name, getattr(tool, name))
            if broken is not None:
                error(("relief", "tools", i, name), broken)
    problem = trim_problem(spec.trim_over_chars, spec.trim_head_chars, spec.trim_tail_chars)
    if problem is not None:
        error(("relief", "trim_over_chars"), problem)
    kinds = {getattr(r, "name", ""): getattr(r, "kind", "") for r in regions}
    seen: set[str] = set()
    for i, tool in enumerate(spec.tools):
        path: tuple[str | int, ...] = ("relief", "tools", i)
        if tool.name in seen:
            error((*path, "name"), f"tool {tool.name!r} has rules already; merge them")
        seen.add(tool.name)
        if tool.route is None:
            if tool.route_key is not None:
                error((*path, "route_key"), "route_key applies only with route: remove it")
            continue
        kind = kinds.get(tool.route)
        if kind is None:
            error((*path, "route"), f"no region {tool.route!r}; regions: {', '.join(kinds)}")
        elif kind not in ROUTE_KINDS:
            error(
                (*path, "route"),
                f"region {tool.route!r} is {kind}; route tool results to a "
                f"{', '.join(ROUTE_KINDS)} region",
            )
        elif kind == "keyed" and tool.route_key is None:
            error(path, f'region {tool.route!r} is keyed: give route_key (e.g. "file:{{path}}")')
        elif kind != "keyed" and tool.route_key is not None:
            error((*path, "route_key"), f"region {tool.route!r} is {kind}, not keyed: remove it")
        if tool.route_key is not None:
            try:
                key_fields(tool.route_key)
            except ValueError as exc:
                error((*path, "route_key"), f"bad key template {tool.route_key!r}: {exc}")
