"""Structural checks of raw blueprint data against the spec classes' field metadata.

Every problem becomes a :class:`~regio.blueprint.errors.BlueprintIssue` naming the YAML path,
the line, what was found and what is allowed. Unknown keys get a "did you mean" suggestion
(:func:`difflib.get_close_matches`); a key that belongs to another region kind says which.
Only data that passes these checks is handed to cattrs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

import attrs

from regio.blueprint.capturespec import CaptureSpec
from regio.blueprint.errors import BlueprintIssue
from regio.blueprint.source import Located, Path, format_path
from regio.blueprint.spec import (
    KIND_ALIASES,
    KINDS,
    REGION_CLASSES,
    Blueprint,
    RegionSpec,
    SeedEntry,
    SeedFile,
    yaml_fields,
)

__all__ = ["check_document", "describe_schema", "suggest"]

#: ``$ref`` targets used in field schemas.
REFS: dict[str, type] = {"SeedEntry": SeedEntry, "SeedFile": SeedFile, "Capture": CaptureSpec}


def suggest(word: str, choices: Sequence[str]) -> str:
    """``" Did you mean 'x'?"`` for the closest of ``choices`` (difflib ratio >= 0.6, else a
    choice that starts with ``word``), or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close and len(word) >= 3:  # an abbreviation: "convo" for "conversation"
        close = [c for c in choices if c.startswith(word)][:1]
    return f" Did you mean {close[0]!r}?" if close else ""


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "a mapping",
}


def describe_schema(schema: dict[str, Any]) -> str:
    """Plain-English text of what a (subset) JSON Schema allows, e.g. ``an integer >= 1``."""
    if "anyOf" in schema:
        return " or ".join(describe_schema(s) for s in schema["anyOf"])
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        cls = REFS.get(name)
        keys = ", ".join(f.name for f in yaml_fields(cls)) if cls else name
        return f"a mapping with keys {keys}"
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        text = "one of " + ", ".join(_show(v) for v in values)
        return text + (" or null" if None in schema["enum"] else "")
    types = schema.get("type", "any value")
    types = [types] if isinstance(types, str) else list(types)
    words = [_TYPE_WORDS.get(t, t) for t in types if t != "null"]
    text = " or ".join(words) if words else "null"
    bounds = []
    if "minimum" in schema:
        bounds.append(f">= {schema['minimum']}")
    if "exclusiveMinimum" in schema:
        bounds.append(f"> {schema['exclusiveMinimum']}")
    if "maximum" in schema:
        bounds.append(f"<= {schema['maximum']}")
    if bounds:
        text += " " + " and ".join(bounds)
    if "pattern" in schema:
        text += f" matching {schema['pattern']}"
    if "minLength" in schema:
        text = "a non-empty string" if text == "a string" else text
    if "minItems" in schema:
        text += f" with at least {schema['minItems']} item"
    if "null" in types and words:
        text += " (or null for the default)"
    return text


def _type_ok(value: Any, json_type: str) -> bool:
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if json_type == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if json_type == "string":
        return isinstance(value, str)
    if json_type == "boolean":
        return isinstance(value, bool)
    if json_type == "null":
        return value is None
    if json_type == "array":
        return isinstance(value, list)
    if json_type == "object":
        return isinstance(value, dict)
    return True


def _shape_ok(value: Any, schema: dict[str, Any]) -> bool:
    """True when ``value`` has the top-level JSON type of ``schema`` (``$ref``: a mapping)."""
    if "$ref" in schema:
        return isinstance(value, dict)
    types = schema.get("type")
    if types is None:
        return True
    types = [types] if isinstance(types, str) else types
    return any(_type_ok(value, t) for t in types)


class _Checker:
    def __init__(self, located: Located) -> None:
        self.located = located
        self.issues: list[BlueprintIssue] = []

    def add(self, path: Path, message: str) -> None:
        self.issues.append(BlueprintIssue(format_path(path), self.located.line(path), message))

    # -- values --------------------------------------------------------------------------------
    def value(self, schema: dict[str, Any], value: Any, path: Path, describe: str | None) -> None:
        if "anyOf" in schema:
            shaped = [a for a in schema["anyOf"] if _shape_ok(value, a)]
            for alternative in shaped:
                probe = _Checker(self.located)
                probe.value(alternative, value, path, None)
                if not probe.issues:
                    return
            if shaped and (isinstance(value, (list, dict)) or describe is None):
                self.value(shaped[0], value, path, describe)
                return
            allowed = describe or describe_schema(schema)
            self.add(path, f"got {_show(value)}; expected {allowed}")
            return
        if "$ref" in schema:
            self.object(REFS[schema["$ref"].rsplit("/", 1)[-1]], value, path)
            return
        allowed = describe or describe_schema(schema)
        types = schema.get("type")
        if types is not None:
            types = [types] if isinstance(types, str) else types
            if not any(_type_ok(value, t) for t in types):
                self.add(path, f"got {_show(value)}; expected {allowed}")
                return
        if value is None:
            return
        if "enum" in schema and value not in schema["enum"]:
            hint = (
                suggest(value, [str(v) for v in schema["enum"]]) if isinstance(value, str) else ""
            )
            self.add(path, f"got {_show(value)}; expected {allowed}.{hint}".rstrip("."))
            return
        problems = []
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(True)
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            problems.append(True)
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(True)
        if "pattern" in schema and not re.fullmatch(schema["pattern"], value):
            problems.append(True)
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(True)
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(True)
        if problems:
            self.add(path, f"got {_show(value)}; expected {allowed}")
            return
        if isinstance(value, list) and "items" in schema:
            for index, item in enumerate(value):
                self.value(schema["items"], item, (*path, index), None)

    # -- mappings ------------------------------------------------------------------------------
    def object(
        self,
        cls: type,
        value: Any,
        path: Path,
        *,
        extra_allowed: Sequence[str] = (),
        what: str | None = None,
        foreign: dict[str, str] | None = None,
    ) -> None:
        what = what or f"{format_path(path)}"
        fields = {f.name: f for f in yaml_fields(cls)}
        allowed = [*extra_allowed, *fields]
        if not isinstance(value, dict):
            self.add(path, f"got {_show(value)}; expected a mapping with keys {', '.join(allowed)}")
            return
        for key, item in value.items():
            if not isinstance(key, str):
                self.add(path, f"key {_show(key)} is not a string; keys are {', '.join(allowed)}")
                continue
            if key in extra_allowed:
                continue
            attribute = fields.get(key)
            if attribute is None:
                owner = (foreign or {}).get(key)
                if owner is not None:
                    self.add(
                        (*path, key),
                        f"{key!r} is an option of {owner} regions, not of {what}; "
                        f"allowed keys: {', '.join(allowed)}",
                    )
                else:
                    self.add(
                        (*path, key),
                        f"unknown key {key!r} in {what}.{suggest(key, allowed)} "
                        f"Allowed keys: {', '.join(allowed)}",
                    )
                continue
            self.field(attribute, item, (*path, key))
        for name, attribute in fields.items():
            if attribute.default is attrs.NOTHING and name not in value:
                doc = attribute.metadata.get("doc", "")
                self.add(path, f"missing required key {name!r} in {what} ({doc})")

    def field(self, attribute: attrs.Attribute[Any], value: Any, path: Path) -> None:
        meta = attribute.metadata
        if attribute.name == "regions" and attribute.type is not None and path == ("regions",):
            self.regions(value, path)
        elif meta.get("nested") is not None:
            self.object(meta["nested"], value, path)
        elif meta.get("schema") is not None:
            self.value(meta["schema"], value, path, meta.get("describe"))

    # -- regions -------------------------------------------------------------------------------
    def regions(self, value: Any, path: Path) -> None:
        if not isinstance(value, list) or not value:
            self.add(
                path,
                f"got {_show(value)}; expected a non-empty list of regions, each a mapping "
                "with at least name, kind and budget",
            )
            return
        for index, item in enumerate(value):
            self.region(item, (*path, index))

    def region(self, value: Any, path: Path) -> None:
        kinds = [*KINDS, *KIND_ALIASES]
        kind = value.get("kind", "temporary") if isinstance(value, dict) else None
        if isinstance(value, dict) and kind not in kinds:
            self.add(
                (*path, "kind"),
                f"unknown region kind {_show(kind)}."
                f"{suggest(kind, kinds) if isinstance(kind, str) else ''} "
                f"Allowed kinds: {', '.join(KINDS)} (alias: hashmap = keyed)",
            )
            common = [f.name for f in yaml_fields(RegionSpec)]
            subset = {k: v for k, v in value.items() if k in common}
            self.object(RegionSpec, subset, path, extra_allowed=("kind",), what="a region")
            return
        cls: type[RegionSpec] = RegionSpec
        if isinstance(kind, str):
            cls = REGION_CLASSES.get(KIND_ALIASES.get(kind, kind), RegionSpec)
        own = {f.name for f in yaml_fields(cls)}
        foreign: dict[str, str] = {}
        for other in REGION_CLASSES.values():
            for f in yaml_fields(other):
                if f.name not in own:
                    foreign.setdefault(f.name, other.kind)
        self.object(
            cls,
            value,
            path,
            extra_allowed=("kind",),
            what=f"a {cls.kind or 'region'} region" if isinstance(value, dict) else "a region",
            foreign=foreign,
        )


def check_document(located: Located) -> list[BlueprintIssue]:
    """All structural issues of a parsed blueprint document (empty list when it is well formed).

    Checks the document is a mapping, ``version`` is 1, every key is known (with suggestions),
    every required key is present, and every value has the declared type and range.
    """
    checker = _Checker(located)
    for issue in located.issues:
        checker.issues.append(BlueprintIssue(format_path(issue.path), issue.line, issue.message))
    data = located.data
    if not isinstance(data, dict):
        required = [f.name for f in yaml_fields(Blueprint) if f.default is attrs.NOTHING]
        checker.add(
            (),
            f"got {_show(data)}; a blueprint is a mapping with at least the keys "
            f"{', '.join(required)}",
        )
        return checker.issues
    if "version" in data and data["version"] != 1:
        checker.add(
            ("version",),
            f"unsupported blueprint version {_show(data['version'])}; this regio reads version 1",
        )
        data = {k: v for k, v in data.items() if k != "version"} | {"version": 1}
    checker.object(Blueprint, data, (), what="the blueprint")
    return checker.issues
