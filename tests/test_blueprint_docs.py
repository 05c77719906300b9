"""docs/blueprint.md and the JSON Schema cannot drift from the spec classes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import attrs

from regio.blueprint import blueprint_json_schema
from regio.blueprint.docs import generate_docs
from regio.blueprint.spec import KINDS, REGION_CLASSES, Blueprint, yaml_fields

DOCS = Path(__file__).resolve().parents[1] / "docs" / "blueprint.md"


def schema_keys(node: object) -> set[str]:
    """Every property name anywhere in a JSON Schema."""
    keys: set[str] = set()
    if isinstance(node, dict):
        for name, value in node.items():
            if name == "properties" and isinstance(value, dict):
                keys |= set(value)
            keys |= schema_keys(value)
    elif isinstance(node, list):
        for item in node:
            keys |= schema_keys(item)
    return keys


def test_docs_blueprint_md_is_what_the_generator_writes() -> None:
    assert DOCS.read_text(encoding="utf-8") == generate_docs(), (
        "docs/blueprint.md is stale: run `python -m regio.blueprint.docs > docs/blueprint.md`"
    )


def test_every_schema_key_is_documented_in_a_table_row() -> None:
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", DOCS.read_text(encoding="utf-8"), re.M))
    missing = schema_keys(blueprint_json_schema(KINDS)) - documented  # the package's kinds
    assert not missing, f"keys missing from docs/blueprint.md: {sorted(missing)}"


def test_every_kind_has_its_own_section_with_its_options() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for kind in KINDS:  # the package's own (a test module may register more)
        cls = REGION_CLASSES[kind]
        section = text.split(f"\n### {kind}\n", 1)[1].split("\n### ", 1)[0]
        own = {f.name for f in yaml_fields(cls)} - {
            f.name for f in yaml_fields(REGION_CLASSES["temporary"])
        }
        for key in own:
            assert f"| `{key}` |" in section, (kind, key)


def test_the_schema_lists_every_spec_field_with_its_default() -> None:
    schema = blueprint_json_schema()
    for f in yaml_fields(Blueprint):
        assert f.name in schema["properties"]
    for kind, cls in REGION_CLASSES.items():
        props = schema["$defs"][f"Region_{kind}"]["properties"]
        assert set(props) == {"kind", *(f.name for f in yaml_fields(cls))}
        for f in yaml_fields(cls):
            if f.default is not attrs.NOTHING and not isinstance(f.default, attrs.Factory):  # type: ignore[arg-type]
                assert props[f.name]["default"] == f.default, (kind, f.name)
        assert schema["$defs"][f"Region_{kind}"]["additionalProperties"] is False


def test_the_schema_is_plain_json() -> None:
    schema = blueprint_json_schema()
    assert json.loads(json.dumps(schema)) == schema
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["required"] == ["version", "name", "model", "regions"]
