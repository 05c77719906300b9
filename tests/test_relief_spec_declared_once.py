"""The blueprint's ``relief`` keys are made from the runtime policy
(:class:`regio.policies.relief.ReliefPolicy` / ``ToolRelief``), declared there once: the same
names, defaults, documentation and constraints, so a value the blueprint accepts is one the
policy accepts and the other way round."""

from __future__ import annotations

from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.blueprint import BlueprintError, load_blueprint
from regio.blueprint.fields import yaml_fields
from regio.blueprint.reliefspec import ReliefSpec, ReliefToolSpec, relief_policy
from regio.policies.fieldrules import field_rules
from regio.policies.relief import ReliefPolicy, ToolRelief

BASE = """version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 100000}
regions:
  - {name: system, kind: pinned, budget: 1000}
  - {name: conversation, kind: sliding_window, budget: 20000}
"""


@pytest.mark.parametrize(
    ("spec", "policy", "own"),
    [(ReliefSpec, ReliefPolicy, ("enabled", "tools")), (ReliefToolSpec, ToolRelief, ("name",))],
)
def test_every_policy_field_is_a_blueprint_key_with_its_default_and_documentation(
    spec: type, policy: Any, own: tuple[str, ...]
) -> None:
    keys = {f.name: f for f in yaml_fields(spec)}
    fields = {f.name: f for f in msgspec.structs.fields(policy)}
    assert set(keys) - set(fields) <= set(own)
    rules = field_rules(policy)
    for name, info in fields.items():
        if name == "tools":
            continue
        assert keys[name].default == info.default
        assert keys[name].metadata["doc"] == rules[name].description
    assert attrs.fields(ReliefSpec).tools.type == tuple[ReliefToolSpec, ...]


def _accepted_by_policy(make: Any) -> bool:
    try:
        make()
    except ValueError:
        return False
    return True


def _accepted_by_blueprint(relief: str) -> bool:
    try:
        load_blueprint(BASE + relief)
    except BlueprintError:
        return False
    return True


_INT_KEYS = [
    "dedupe_at_least",
    "keep_last",
    "clear_at_least",
    "trim_at_least",
    "placeholder_extract_tokens",
    "trim_over_chars",
    "trim_head_chars",
    "trim_tail_chars",
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_INT_KEYS), st.integers(-3, 5000))
def test_the_blueprint_and_the_policy_accept_the_same_relief_sizes(key: str, value: int) -> None:
    relief = f"relief:\n  enabled: true\n  {key}: {value}\n"
    policy = _accepted_by_policy(lambda: ReliefPolicy(**{key: value}))
    assert _accepted_by_blueprint(relief) == policy
    if policy:
        assert getattr(relief_policy(load_blueprint(BASE + relief).relief), key) == value


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["keep_last", "max_result_tokens", "route_key"]),
    st.integers(-3, 40) | st.sampled_from(["", "k"]),
)
def test_the_blueprint_and_the_policy_accept_the_same_tool_rules(key: str, value: Any) -> None:
    if isinstance(value, str) != (key == "route_key"):
        return  # a string for a size or a size for a template: a type error in both
    shown = f"'{value}'" if isinstance(value, str) else value
    route = ", route: notes" if key == "route_key" else ""
    regions = "  - {name: notes, kind: keyed, budget: 500}\n"
    relief = f"relief:\n  enabled: true\n  tools:\n    - {{name: cat, {key}: {shown}{route}}}\n"
    extra = {"route": "notes"} if route else {}
    policy = _accepted_by_policy(lambda: ToolRelief(**{key: value}, **extra))
    try:
        load_blueprint(BASE + regions + relief)
        blueprint = True
    except BlueprintError as exc:
        blueprint = False
        assert key in str(exc)
    assert blueprint == policy
