"""JSON Schema (draft 2020-12) of blueprint files, generated from the spec classes.

Editors that understand JSON Schema (VS Code YAML, JetBrains) use it for completion and
checking; ``regio schema`` prints it. The same field metadata drives the loader's checks and
``docs/blueprint.md``, so the three agree by construction.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import attrs

from regio.blueprint.capturespec import CAPTURE_KEYS, CAPTURE_RULES, CaptureSpec, required_keys
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

__all__ = [
    "DEF_NAMES",
    "SCHEMA_FILE",
    "SCHEMA_ID",
    "blueprint_json_schema",
    "def_name",
    "kind_def_name",
]

#: A stable name, not a URL: the schema is shipped in the package, nothing is fetched.
SCHEMA_ID = "urn:regio:schema:blueprint:1"
#: The generated schema shipped as package data (a test keeps it equal to
#: :func:`blueprint_json_schema`); editors point at it with a ``yaml-language-server`` comment.
SCHEMA_FILE = Path(__file__).resolve().parents[1] / "data" / "blueprint.schema.json"

#: ``$defs`` name of each section class.
DEF_NAMES: dict[type, str] = {
    ModelSpec: "Model",
    WindowSpec: "Window",
    CacheSpec: "Cache",
    LayoutSpec: "Layout",
    SummarizerSpec: "Summarizer",
    EvictionSpec: "Eviction",
    SeedEntry: "SeedEntry",
    SeedFile: "SeedFile",
    CaptureSpec: "Capture",
}


def def_name(cls: type) -> str:
    """The ``$defs`` name of a spec class (``Model``, ``Eviction``, ``Region_keyed``...)."""
    if isinstance(cls, type) and issubclass(cls, RegionSpec) and cls.kind:
        return kind_def_name(cls.kind)
    return DEF_NAMES[cls]


def kind_def_name(kind: str) -> str:
    """``Region_<kind>``."""
    return f"Region_{kind}"


def _default(attribute: attrs.Attribute[Any]) -> tuple[bool, Any]:
    default = attribute.default
    if default is attrs.NOTHING:
        return False, None
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        return False, None  # a nested section: its own keys carry their defaults
    return True, default


def _property(attribute: attrs.Attribute[Any]) -> dict[str, Any]:
    meta = attribute.metadata
    if meta.get("nested") is not None:
        prop: dict[str, Any] = {"$ref": f"#/$defs/{def_name(meta['nested'])}"}
    else:
        prop = copy.deepcopy(meta["schema"])
    prop["description"] = meta["doc"]
    has_default, default = _default(attribute)
    if has_default:
        prop["default"] = default
    return prop


def _object_schema(cls: type, *, title: str | None = None) -> dict[str, Any]:
    fields = yaml_fields(cls)
    schema: dict[str, Any] = {"type": "object"}
    if title or cls.__doc__:
        schema["description"] = (title or cls.__doc__ or "").strip().splitlines()[0]
    schema["properties"] = {f.name: _property(f) for f in fields}
    required = [f.name for f in fields if f.default is attrs.NOTHING]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _region_schema(kind: str) -> dict[str, Any]:
    cls = REGION_CLASSES[kind]
    schema = _object_schema(cls, title=f"A {kind} region: {cls.summary}")
    names = [kind, *(alias for alias, target in KIND_ALIASES.items() if target == kind)]
    kind_prop: dict[str, Any] = {"const": kind} if len(names) == 1 else {"enum": names}
    kind_prop["description"] = f"Region kind. {cls.summary}"
    if kind == "temporary":
        kind_prop["default"] = "temporary"
    schema["properties"] = {"kind": kind_prop, **schema["properties"]}
    if kind != "temporary":
        schema["required"] = ["kind", *schema.get("required", [])]
    return schema


def _capture_rules() -> list[dict[str, Any]]:
    """Per-rule constraints of a capture item: required keys, and keys the rule does not
    take (``if rule == r then ...``)."""
    optional = [f.name for f in yaml_fields(CaptureSpec) if f.name != "rule"]
    out: list[dict[str, Any]] = []
    for rule in CAPTURE_RULES:
        then: dict[str, Any] = {}
        if required_keys(rule):
            then["required"] = list(required_keys(rule))
        foreign = [k for k in optional if k not in CAPTURE_KEYS[rule]]
        if foreign:
            then["not"] = {"anyOf": [{"required": [k]} for k in foreign]}
        out.append({"if": {"properties": {"rule": {"const": rule}}}, "then": then})
    return out


def blueprint_json_schema() -> dict[str, Any]:
    """The JSON Schema of a blueprint file (a fresh dict each call).

    Regions are a ``oneOf`` over one definition per kind (``Region_pinned``, ...), told apart by
    ``kind``; a region without ``kind`` is ``temporary`` (the default kind, DESIGN §2).
    """
    defs: dict[str, Any] = {name: _object_schema(cls) for cls, name in DEF_NAMES.items()}
    for kind in REGION_CLASSES:
        defs[kind_def_name(kind)] = _region_schema(kind)
    defs["Capture"]["allOf"] = _capture_rules()
    defs["Region"] = {
        "description": "One region; `kind` selects its options.",
        "oneOf": [{"$ref": f"#/$defs/{kind_def_name(k)}"} for k in REGION_CLASSES],
    }
    root = _object_schema(Blueprint)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "regio blueprint",
        **root,
        "description": "A regio blueprint: one agent's context window declared as typed regions.",
        "$defs": defs,
    }
