"""The ``capture`` option of a region: structure, cross-key checks, schema and docs."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.blueprint import BlueprintError, CaptureSpec, blueprint_json_schema, load_blueprint
from regio.blueprint.capturespec import CAPTURE_KEYS, CAPTURE_RULES, key_fields

HEAD = """\
version: 1
name: cap
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 60000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 8000}
  - name: facts
    kind: keyed
    budget: 2000
    capture:
"""
TAIL = """\
  - {name: parked, kind: temporary, budget: 4000}
  - {name: conversation, kind: sliding_window, budget: "50%"}
"""


def _errors(capture_lines: str, tail: str = TAIL) -> list[tuple[str, int | None, str]]:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(HEAD + capture_lines + tail)
    return [(i.path, i.line, i.message) for i in info.value.issues]


def test_a_keyed_lookup_capture_loads_with_its_tools_and_key() -> None:
    bp = load_blueprint(
        HEAD + '      - {rule: lookup, tools: [get_user_details], key: "user:{user_id}"}\n' + TAIL
    )
    assert bp.region("facts").capture == (
        CaptureSpec(rule="lookup", tools=("get_user_details",), key="user:{user_id}"),
    )
    assert bp.warnings == ()


def test_an_unknown_capture_key_names_the_item_path_line_and_suggestion() -> None:
    [(path, line, message)] = _errors("      - {rule: lookup, tool: [a], key: k}\n")
    assert (path, line) == ("regions[1].capture[0].tool", 10)
    assert "Did you mean 'tools'?" in message


def test_an_unknown_rule_lists_the_rules() -> None:
    [(path, line, message)] = _errors("      - {rule: footr, pattern: x, key: k}\n")
    assert (path, line) == ("regions[1].capture[0].rule", 10)
    assert "Did you mean 'footer'?" in message and "'park'" in message


def test_a_key_the_rule_does_not_take_is_named_with_what_it_takes() -> None:
    [(path, _, message)] = _errors("      - {rule: footer, pattern: x, key: k, keep: 2}\n")
    assert path == "regions[1].capture[0].keep"
    assert "takes pattern, strip, key" in message


def test_a_missing_required_key_says_what_it_is_for() -> None:
    [(path, line, message)] = _errors("      - {rule: lookup, key: k}\n")
    assert (path, line) == ("regions[1].capture[0]", 10)
    assert "needs 'tools'" in message


def test_a_bad_regular_expression_quotes_the_re_error() -> None:
    [(path, _, message)] = _errors("      - {rule: footer, pattern: '(a', key: k}\n")
    assert path == "regions[1].capture[0].pattern"
    assert "missing )" in message


def test_a_keyed_region_needs_a_key_and_others_refuse_one() -> None:
    tail = "  - {name: parked, kind: temporary, budget: 4000,\n"
    tail += "     capture: [{rule: lookup, tools: [t], key: k}]}\n"
    tail += '  - {name: conversation, kind: sliding_window, budget: "50%"}\n'
    found = _errors("      - {rule: lookup, tools: [t]}\n", tail)
    assert [(p, ln) for p, ln, _ in found] == [
        ("regions[1].capture[0]", 10),
        ("regions[2].capture[0].key", 12),
    ]
    assert "is keyed" in found[0][2] and "remove it" in found[1][2]


def test_a_malformed_key_template_is_refused() -> None:
    [(path, _, message)] = _errors("      - {rule: lookup, tools: [t], key: 'u:{}'}\n")
    assert path == "regions[1].capture[0].key" and "named argument" in message


def test_park_needs_a_region_that_can_drop_output() -> None:
    [(path, _, message)] = _errors("      - {rule: park}\n")
    assert path == "regions[1].capture[0].rule" and "temporary or clearable" in message


def test_nothing_is_captured_into_the_conversation() -> None:
    tail = "  - {name: conversation, kind: sliding_window, budget: '50%',\n"
    tail += "     capture: [{rule: system_prompt}]}\n"
    [(path, line, message)] = _errors("      - {rule: footer, pattern: x, key: k}\n", tail)
    assert (path, line) == ("regions[2].capture[0].rule", 12)
    assert "is the conversation" in message


def test_only_one_region_takes_the_whole_system_prompt() -> None:
    head = HEAD.replace("budget: 8000}", "budget: 8000, capture: [{rule: system_prompt}]}")
    with pytest.raises(BlueprintError) as info:
        load_blueprint(
            head
            + "      - {rule: footer, pattern: x, key: k}\n"
            + "  - {name: parked, kind: temporary, budget: 4000,\n"
            + "     capture: [{rule: system_prompt}]}\n"
            + '  - {name: conversation, kind: sliding_window, budget: "50%"}\n'
        )
    [issue] = info.value.issues
    assert issue.path == "regions[2].capture[0].rule" and "regions[0]" in issue.message


def test_the_json_schema_constrains_each_rule() -> None:
    schema = blueprint_json_schema()
    capture = schema["$defs"]["Capture"]
    assert capture["required"] == ["rule"] and capture["additionalProperties"] is False
    by_rule = {c["if"]["properties"]["rule"]["const"]: c["then"] for c in capture["allOf"]}
    assert set(by_rule) == set(CAPTURE_RULES)
    assert by_rule["lookup"]["required"] == ["tools"]
    assert {"required": ["tools"]} in by_rule["footer"]["not"]["anyOf"]
    region = schema["$defs"]["Region_keyed"]["properties"]["capture"]
    assert region["items"] == {"$ref": "#/$defs/Capture"}


def test_every_rule_and_its_keys_are_in_the_docs() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "blueprint.md").read_text("utf-8")
    section = text.split("\n## Capture\n", 1)[1]
    for rule, keys in CAPTURE_KEYS.items():
        row = next(ln for ln in section.splitlines() if ln.startswith(f"| `{rule}` |"))
        assert all(f"`{k}`" in row for k in keys), rule


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), max_size=4))
def test_key_fields_lists_the_named_arguments_in_order(names: list[str]) -> None:
    template = ":".join(["k", *(f"{{{n}}}" for n in names)])
    assert key_fields(template) == names
    values = {n: f"v{i}" for i, n in enumerate(names)}
    assert re.fullmatch(r"k(:v\d+)*", template.format_map(values))
