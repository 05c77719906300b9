"""The relief defaults have one source: :class:`regio.policies.relief.ReliefPolicy` and
:class:`~regio.policies.relief.ToolRelief`. The blueprint's ``relief`` section, the policy an
engine gets from it and the reference in docs/blueprint.md all say the same."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from regio.blueprint.reliefspec import ReliefSpec, ReliefToolSpec, relief_policy
from regio.policies.relief import ReliefPolicy, ToolRelief

DOCS = Path(__file__).resolve().parents[1] / "docs" / "blueprint.md"
PAIRS = [(ReliefSpec, ReliefPolicy(), "Relief"), (ReliefToolSpec, ToolRelief(), "ReliefTool")]


def _spec_defaults(spec: type) -> dict[str, Any]:
    return {f.name: f.default for f in attrs.fields(spec) if f.default is not attrs.NOTHING}


def _doc_defaults(section: str) -> dict[str, str]:
    """key -> the default column of ``## <section>``'s table in docs/blueprint.md."""
    text = DOCS.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| ([^|]+) \|", body, flags=re.M))


@pytest.mark.parametrize(("spec", "policy", "section"), PAIRS)
def test_the_blueprint_defaults_are_the_policy_defaults(
    spec: type, policy: Any, section: str
) -> None:
    defaults = _spec_defaults(spec)
    for name in policy.__struct_fields__:
        if name == "tools":
            continue
        assert name in defaults, f"{section}: policy field {name!r} has no blueprint key"
        assert defaults[name] == getattr(policy, name), f"{section}.{name}"


@pytest.mark.parametrize(("spec", "policy", "section"), PAIRS)
def test_docs_blueprint_md_states_the_policy_defaults(
    spec: type, policy: Any, section: str
) -> None:
    documented = _doc_defaults(section)
    for name in policy.__struct_fields__:
        if name == "tools":
            continue
        assert documented[name].strip() == f"`{json.dumps(getattr(policy, name))}`", name


def test_a_relief_section_with_every_key_omitted_builds_the_default_policy() -> None:
    assert relief_policy(ReliefSpec(enabled=True)) == ReliefPolicy()
    tool = relief_policy(ReliefSpec(enabled=True, tools=(ReliefToolSpec(name="t"),)))
    assert tool is not None and tool.tool("t") == ToolRelief()
