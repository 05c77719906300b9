"""The spec types drive the loader (cattrs), the JSON Schema and dumping, and they agree:
strict scalars, the tagged union on kind, every problem in one pass, omitted defaults."""

from __future__ import annotations

import math
from typing import Any

import attrs
import jsonschema
import pytest
import yaml
from cattrs.errors import ClassValidationError, IterableValidationError
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from blueprint_support import HEAD, REGIONS, line_of
from regio.blueprint import (
    Blueprint,
    BlueprintError,
    KeyedSpec,
    TemporarySpec,
    blueprint_json_schema,
    dump_blueprint,
    load_blueprint,
)
from regio.blueprint.convert import ValueProblem, structure_blueprint
from regio.blueprint.spec import REGION_CLASSES, yaml_fields
from test_blueprint_fuzz import FUZZ, mutated_data
from test_blueprint_roundtrip import blueprints


def _issues(text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(text)
    return [(i.path, i.line, i.message) for i in info.value.issues]


def _structure_validator() -> jsonschema.Draft202012Validator:
    """The shipped schema without the capture ``if/then`` rules, which the loader checks
    across keys (after structuring), not while structuring."""
    schema = blueprint_json_schema()
    del schema["$defs"]["Capture"]["allOf"]
    return jsonschema.Draft202012Validator(schema)


STRUCTURE_SCHEMA = _structure_validator()


def _has_nan(node: Any) -> bool:
    if isinstance(node, float):
        return math.isnan(node)
    if isinstance(node, dict):
        return any(_has_nan(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_nan(v) for v in node)
    return False


@FUZZ
@given(data=mutated_data())
def test_the_loader_structures_exactly_the_documents_the_json_schema_accepts(data: Any) -> None:
    assume(not _has_nan(data))  # JSON has no NaN; the loader refuses it (test below)
    try:
        structure_blueprint(data)
        structured = True
    except (ClassValidationError, IterableValidationError, ValueProblem):
        structured = False
    errors = [e.json_path for e in STRUCTURE_SCHEMA.iter_errors(data)]
    assert structured == (not errors), errors


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("budget: 2000", "budget: true", "regions[2].budget"),
        ("budget: 2000", 'budget: "2000"', "regions[2].budget"),
        ("budget: 2000", "budget: 2000.5", "regions[2].budget"),
        ("context_window: 200000", 'context_window: "200000"', "model.context_window"),
        ("context_window: 200000", "context_window: yes", "model.context_window"),
        ("name: t\n", "name: 5\n", "name"),
    ],
)
def test_a_scalar_of_the_wrong_type_is_refused_not_converted(old: str, new: str, path: str) -> None:
    text = (HEAD + REGIONS).replace(old, new, 1)
    [(got_path, line, message)] = _issues(text)
    assert got_path == path and line == line_of(text, new.strip())
    assert message.startswith("got ")


def test_an_integral_float_is_an_integer_as_in_json_schema() -> None:
    bp = load_blueprint((HEAD + REGIONS).replace("budget: 2000", "budget: 2000.0"))
    assert bp.region("scratch").budget == 2000 and isinstance(bp.region("scratch").budget, int)


@pytest.mark.parametrize("value", [".nan", ".inf", "0", "-0.5", "1.01"])
def test_a_share_outside_0_to_1_or_nan_is_refused(value: str) -> None:
    text = HEAD + f"window:\n  high_water: {value}\n" + REGIONS
    [(path, _, message)] = _issues(text)
    assert path == "window.high_water" and "a number > 0 and <= 1" in message


def test_hashmap_is_read_as_keyed_and_written_back_as_keyed() -> None:
    text = HEAD + REGIONS + "  - {name: facts, kind: hashmap, budget: 100, max_entries: 3}\n"
    bp = load_blueprint(text)
    assert isinstance(bp.region("facts"), KeyedSpec)
    assert "kind: keyed" in dump_blueprint(bp) and "hashmap" not in dump_blueprint(bp)


def test_a_region_without_kind_is_temporary_and_takes_only_temporary_keys() -> None:
    text = HEAD + REGIONS + "  - {name: extra, budget: 100}\n"
    assert isinstance(load_blueprint(text).region("extra"), TemporarySpec)
    [(path, _, message)] = _issues(text.replace("budget: 100}", "budget: 100, gate: true}"))
    assert path == "regions[3].gate" and "option of checklist regions" in message


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    broken=st.sets(st.integers(0, 2), min_size=1),
    value=st.sampled_from(["[1, 2]", "{a: 1}", "-3", "'lots'", "null", "true"]),
)
def test_every_wrong_budget_is_reported_in_one_pass_at_its_own_line(
    broken: set[int], value: str
) -> None:
    lines = (HEAD + REGIONS).splitlines(keepends=True)
    budgets = [i for i, line in enumerate(lines) if line.startswith("    budget:")]
    for region in broken:
        lines[budgets[region]] = f"    budget: {value}\n"
    text = "".join(lines)
    issues = _issues(text)
    assert [(p, ln) for p, ln, _ in issues] == [
        (f"regions[{r}].budget", budgets[r] + 1) for r in sorted(broken)
    ]


def _defaults(cls: type) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in yaml_fields(cls):
        if isinstance(f.default, attrs.Factory):  # type: ignore[arg-type]
            out[f.name] = f.default.factory()  # type: ignore[union-attr]
        elif f.default is not attrs.NOTHING:
            out[f.name] = f.default
    return out


@settings(max_examples=40, deadline=None)
@given(bp=blueprints())
def test_a_dump_writes_no_key_whose_value_is_its_default(bp: Blueprint) -> None:
    data = yaml.safe_load(dump_blueprint(bp))
    for key, default in _defaults(Blueprint).items():
        if attrs.has(type(default)):
            continue  # a section: compared key by key below
        assert data.get(key, object()) != default, key
    for region in data["regions"]:
        defaults = _defaults(REGION_CLASSES[region["kind"]])
        for key, value in region.items():
            if key in defaults and key != "seed":
                assert value != defaults[key], (region["name"], key)


def test_asking_for_an_undeclared_region_is_a_regio_error_with_a_suggestion() -> None:
    from regio.blueprint import UnknownRegionError
    from regio.errors import RegioError

    bp = load_blueprint(HEAD + REGIONS)
    with pytest.raises(UnknownRegionError) as info:
        bp.region("scratchpad")
    assert isinstance(info.value, RegioError) and isinstance(info.value, KeyError)
    assert "Did you mean 'scratch'?" in str(info.value)
    assert "Regions: system, conversation, scratch" in str(info.value)
