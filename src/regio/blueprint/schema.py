"""JSON Schema (draft 2020-12) of blueprint files, generated from the spec classes' types.

Editors that understand JSON Schema (VS Code YAML, JetBrains) use it for completion and
checking; ``regio schema`` prints it and the package ships it as
``regio/data/blueprint.schema.json``. :func:`type_schema` maps each field type
(:mod:`regio.blueprint.fields`) to its schema; :func:`describe_schema` phrases a schema in
words for error messages and ``docs/blueprint.md``. The loader structures YAML by the same
types (:mod:`regio.blueprint.convert`), so the three agree by construction.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import attrs

from regio.blueprint.capturespec import CAPTURE_KEYS, CAPTURE_RULES, CaptureSpec, required_keys
from regio.blueprint.fields import FieldRule
from regio.blueprint.spec import (
    KIND_ALIASES,
    REGION_CLASSES,
    Blueprint,
    CacheSpec,
    ClearThinkingSpec,
    ClearToolUsesSpec,
    ContextManagementSpec,
    EvictionSpec,
    LayoutSpec,
    ModelSpec,
    RegionSpec,
    ReliefSpec,
    ReliefToolSpec,
    SeedEntry,
    SeedFile,
    SummarizerSpec,
    ToolsSpec,
    WindowSpec,
    yaml_fields,
)

__all__ = [
    "DEF_NAMES",
    "SCHEMA_FILE",
    "SCHEMA_ID",
    "blueprint_json_schema",
    "def_name",
    "describe_schema",
    "describe_type",
    "kind_def_name",
    "rule_describe",
    "type_schema",
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
    ToolsSpec: "Tools",
    ReliefSpec: "Relief",
    ReliefToolSpec: "ReliefTool",
    ContextManagementSpec: "ContextManagement",
    ClearToolUsesSpec: "ClearToolUses",
    ClearThinkingSpec: "ClearThinking",
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


_JSON_TYPES: dict[Any, str] = {
    int: "integer",
    float: "number",
    str: "string",
    bool: "boolean",
    type(None): "null",
}


def _union_schema(members: tuple[Any, ...]) -> dict[str, Any]:
    options = [type_schema(m) for m in members if m is not type(None)]
    nullable = len(options) < len(members)
    if nullable and len(options) == 1 and isinstance(options[0].get("type"), str):
        merged = dict(options[0])
        merged["type"] = [merged["type"], "null"]
        if "enum" in merged:
            merged["enum"] = [*merged["enum"], None]
        return merged
    return {"anyOf": [*options, {"type": "null"}] if nullable else options}


def type_schema(tp: object) -> dict[str, Any]:
    """The JSON Schema of a spec field type (``$ref`` to ``#/$defs/...`` for spec classes).

    ``Annotated[T, FieldRule(...)]`` adds the rule's keywords to ``T``'s schema (or to the schema of
    ``FieldRule.accepts``, the YAML form); ``Literal`` gives an ``enum``; ``X | None`` a type list
    with ``null``; other unions ``anyOf``; ``tuple[X, ...]`` an array of ``X``.
    """
    origin = get_origin(tp)
    if origin is Annotated:
        base, *extras = get_args(tp)
        rules = [r for r in extras if isinstance(r, FieldRule)]
        accepts = next((r.accepts for r in rules if r.accepts is not None), None)
        schema = type_schema(accepts if accepts is not None else base)
        for rule in rules:
            schema.update(rule.schema())
        return schema
    if origin is Literal:
        values = list(get_args(tp))
        return {"type": _JSON_TYPES[type(values[0])], "enum": values}
    if origin in (Union, types.UnionType):
        return _union_schema(get_args(tp))
    if origin is tuple:
        return {"type": "array", "items": type_schema(get_args(tp)[0])}
    if tp is RegionSpec:
        return {"$ref": "#/$defs/Region"}
    if isinstance(tp, type) and attrs.has(tp):
        return {"$ref": f"#/$defs/{def_name(tp)}"}
    return {"type": _JSON_TYPES[tp]}


def rule_describe(tp: object) -> str | None:
    """The ``FieldRule.describe`` phrase of a field type (also inside ``X | None``), or ``None``."""
    if get_origin(tp) is Annotated:
        return next((r.describe for r in get_args(tp)[1:] if getattr(r, "describe", None)), None)
    if get_origin(tp) in (Union, types.UnionType):
        found = [rule_describe(m) for m in get_args(tp) if m is not type(None)]
        return found[0] if len(found) == 1 else None
    return None


def describe_type(tp: object) -> str:
    """What a field type allows, in words (``an integer >= 1``)."""
    return describe_schema(type_schema(tp))


def _show(value: object) -> str:
    if value is None:
        return "null"
    return repr(value)


_TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "a mapping",
}


def _classes_by_def() -> dict[str, type]:
    out: dict[str, type] = {name: cls for cls, name in DEF_NAMES.items()}
    out.update({kind_def_name(kind): cls for kind, cls in REGION_CLASSES.items()})
    return out


def _bounds(schema: dict[str, Any]) -> str:
    words = []
    for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<=")):
        if key in schema:
            words.append(f"{sign} {schema[key]}")
    return " " + " and ".join(words) if words else ""


def _plural(items: dict[str, Any]) -> str:
    """``strings``, ``Capture mappings``, ... for the items of a list."""
    if "$ref" in items:
        return f"{items['$ref'].rsplit('/', 1)[-1]} mappings"
    if items.get("type") == "string":
        return "non-empty strings" if "minLength" in items else "strings"
    return "values (" + describe_schema(items) + ")"


def describe_schema(schema: dict[str, Any]) -> str:
    """Plain-English text of what a (generated) JSON Schema allows, e.g. ``an integer >= 1``."""
    if "anyOf" in schema:
        return " or ".join(describe_schema(s) for s in schema["anyOf"])
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        cls = _classes_by_def().get(name)
        keys = ", ".join(f.name for f in yaml_fields(cls)) if cls else name
        return f"a mapping with keys {keys}"
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        text = "one of " + ", ".join(_show(v) for v in values)
        return text + (" or null" if None in schema["enum"] else "")
    types_ = schema.get("type", "any value")
    types_ = [types_] if isinstance(types_, str) else list(types_)
    words = [_TYPE_WORDS.get(t, t) for t in types_ if t != "null"]
    text = (" or ".join(words) if words else "null") + _bounds(schema)
    if "pattern" in schema:
        text += f" matching {schema['pattern']}"
    if "minLength" in schema:
        text = "a non-empty string" if text == "a string" else text
    if "items" in schema:
        text = text.replace("a list", f"a list of {_plural(schema['items'])}", 1)
    if "minItems" in schema:
        text += f" with at least {schema['minItems']} item"
    if "null" in types_ and words:
        text += " (or null for the default)"
    return text


def _default(attribute: attrs.Attribute[Any]) -> tuple[bool, Any]:
    default = attribute.default
    if default is attrs.NOTHING:
        return False, None
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        return False, None  # a nested section: its own keys carry their defaults
    return True, default


def _property(attribute: attrs.Attribute[Any]) -> dict[str, Any]:
    prop = type_schema(attribute.type)
    prop["description"] = attribute.metadata["doc"]
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


def blueprint_json_schema(kinds: Iterable[str] | None = None) -> dict[str, Any]:
    """The JSON Schema of a blueprint file (a fresh dict each call).

    Regions are a ``oneOf`` over one definition per kind (``Region_pinned``, ...), told apart by
    ``kind``; a region without ``kind`` is ``temporary`` (the default kind). ``kinds``: the
    kinds it lists (registered names, in that order); ``None``, every registered kind, those
    of the user's own modules included (the shipped ``blueprint.schema.json`` lists the
    package's own, :data:`regio.blueprint.spec.KINDS`). Raises ``KeyError`` for an
    unregistered kind.
    """
    listed = tuple(REGION_CLASSES if kinds is None else kinds)
    defs: dict[str, Any] = {name: _object_schema(cls) for cls, name in DEF_NAMES.items()}
    for kind in listed:
        defs[kind_def_name(kind)] = _region_schema(kind)
    defs["Capture"]["allOf"] = _capture_rules()
    defs["Region"] = {
        "description": "One region; `kind` selects its options.",
        "oneOf": [{"$ref": f"#/$defs/{kind_def_name(k)}"} for k in listed],
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
