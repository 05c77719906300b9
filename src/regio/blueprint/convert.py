"""cattrs converter between checked blueprint data (dicts from YAML) and the spec classes, and
back to plain data for :func:`~regio.blueprint.dump_blueprint`.

Structuring expects data that :func:`~regio.blueprint.check.check_document` accepted; regions
are dispatched on ``kind`` (aliases normalised), seeds accept their YAML shorthands (a string,
a list of strings or entries, ``{file: path}``). Unstructuring omits every value equal to its
default, so dumps stay as small as the files people write.
"""

from __future__ import annotations

from typing import Any

import attrs
import cattrs

from regio.blueprint.capturespec import CaptureSpec
from regio.blueprint.spec import (
    KIND_ALIASES,
    REGION_CLASSES,
    Blueprint,
    CacheSpec,
    EvictionSpec,
    LayoutSpec,
    ModelSpec,
    RegionSpec,
    SeedEntry,
    SeedFile,
    SummarizerSpec,
    WindowSpec,
    yaml_fields,
)

__all__ = ["converter", "structure_blueprint", "unstructure_spec"]

for _cls in (
    Blueprint,
    CacheSpec,
    CaptureSpec,
    EvictionSpec,
    LayoutSpec,
    ModelSpec,
    RegionSpec,
    SeedEntry,
    SeedFile,
    SummarizerSpec,
    WindowSpec,
    *REGION_CLASSES.values(),
):
    attrs.resolve_types(_cls)

_SEED_TYPE = attrs.fields(RegionSpec).seed.type
_BUDGET_TYPE = attrs.fields(RegionSpec).budget.type

converter = cattrs.Converter(forbid_extra_keys=True)


def _structure_seed(value: Any, _: Any) -> tuple[SeedEntry, ...] | SeedFile | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (SeedEntry(text=value),)
    if isinstance(value, dict):
        return SeedFile(file=value["file"])
    return tuple(
        SeedEntry(text=item) if isinstance(item, str) else converter.structure(item, SeedEntry)
        for item in value
    )


def _structure_region(value: dict[str, Any], _: Any) -> RegionSpec:
    data = dict(value)
    kind = data.pop("kind", "temporary")
    cls = REGION_CLASSES[KIND_ALIASES.get(kind, kind)]
    return converter.structure(data, cls)


def _structure_regions(value: list[Any], _: Any) -> tuple[RegionSpec, ...]:
    return tuple(_structure_region(item, RegionSpec) for item in value)


converter.register_structure_hook_func(lambda t: t == _SEED_TYPE, _structure_seed)
converter.register_structure_hook_func(lambda t: t == _BUDGET_TYPE, lambda v, _: v)
converter.register_structure_hook_func(lambda t: t == (int | str | None), lambda v, _: v)
converter.register_structure_hook_func(lambda t: t is RegionSpec, _structure_region)
converter.register_structure_hook_func(
    lambda t: t == attrs.fields(Blueprint).regions.type, _structure_regions
)


def structure_blueprint(data: dict[str, Any]) -> Blueprint:
    """Checked YAML data -> :class:`Blueprint` (raises cattrs errors only on unchecked data)."""
    return converter.structure(data, Blueprint)


def _unstructure_seed(seed: tuple[SeedEntry, ...] | SeedFile) -> Any:
    if isinstance(seed, SeedFile):
        return {"file": seed.file}
    items: list[Any] = []
    for entry in seed:
        if entry.key is None and entry.role is None:
            items.append(entry.text)
        else:
            items.append(unstructure_spec(entry))
    if len(items) == 1 and isinstance(items[0], str):
        return items[0]
    return items


def unstructure_spec(spec: Any) -> dict[str, Any]:
    """A spec object -> plain data (YAML keys in declaration order, defaults omitted; a region
    gets its ``kind`` right after its ``name``)."""
    out: dict[str, Any] = {}
    for attribute in yaml_fields(type(spec)):
        value = getattr(spec, attribute.name)
        factory = getattr(attribute.default, "factory", None)  # attrs.Factory
        default = factory() if callable(factory) else attribute.default
        if attribute.default is not attrs.NOTHING and value == default:
            continue
        if attribute.name == "seed" and value is not None:
            out["seed"] = _unstructure_seed(value)
        elif attribute.name in ("regions", "capture"):
            out[attribute.name] = [unstructure_spec(item) for item in value]
        elif attrs.has(type(value)):
            out[attribute.name] = unstructure_spec(value)
        elif isinstance(value, tuple):
            out[attribute.name] = list(value)
        else:
            out[attribute.name] = value
        if attribute.name == "name" and isinstance(spec, RegionSpec):
            out["kind"] = spec.kind
    return out
