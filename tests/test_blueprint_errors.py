"""Blueprint load errors: each names the YAML path and the exact line, and says what is allowed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint_support import HEAD, REGIONS, line_of
from regio.blueprint import BlueprintError, BlueprintIssue, load_blueprint


def errors_of(text: str) -> BlueprintError:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(text)
    return info.value


def only_issue(text: str) -> BlueprintIssue:
    error = errors_of(text)
    assert len(error.issues) == 1, str(error)
    return error.issues[0]


def test_a_valid_blueprint_loads_without_warnings() -> None:
    bp = load_blueprint(HEAD + REGIONS)
    assert [r.name for r in bp.regions] == ["system", "conversation", "scratch"]
    assert bp.warnings == ()
    assert bp.window_tokens == 192000


def test_a_yaml_syntax_error_names_its_line() -> None:
    text = HEAD + REGIONS.replace('budget: "50%"', 'budget: "50%')
    issue = errors_of(text).issues[0]
    assert issue.path == "<root>"
    assert "YAML syntax error" in issue.message
    assert issue.line is not None and issue.line >= line_of(text, 'budget: "50%')


def test_a_duplicate_key_is_an_error_naming_both_lines() -> None:
    text = HEAD + REGIONS.replace("    budget: 2000\n", "    budget: 2000\n    budget: 3000\n")
    issue = only_issue(text)
    assert issue.path == "regions[2].budget"
    assert issue.line == line_of(text, "budget: 3000")
    assert f"first written on line {line_of(text, 'budget: 2000')}" in issue.message


def test_a_document_that_is_not_a_mapping_is_refused() -> None:
    issue = only_issue("- just\n- a list\n")
    assert issue.path == "<root>"
    assert "version, name, model, regions" in issue.message


def test_an_unknown_top_level_key_suggests_the_close_one() -> None:
    text = HEAD + "tokeniser: heuristic\n" + REGIONS
    issue = only_issue(text)
    assert issue.path == "tokeniser"
    assert issue.line == line_of(text, "tokeniser")
    assert "Did you mean 'tokenizer'?" in issue.message
    assert "Allowed keys:" in issue.message


def test_an_unknown_region_key_names_the_path_line_and_suggestion() -> None:
    text = HEAD + REGIONS.replace("    volatility: stable\n", "    volatilty: stable\n")
    issue = only_issue(text)
    assert issue.path == "regions[0].volatilty"
    assert issue.line == line_of(text, "volatilty")
    assert "Did you mean 'volatility'?" in issue.message


def test_an_option_of_another_kind_says_which_kind_owns_it() -> None:
    text = HEAD + REGIONS.replace("    budget: 2000\n", "    budget: 2000\n    max_items: 5\n")
    issue = only_issue(text)
    assert issue.path == "regions[2].max_items"
    assert issue.line == line_of(text, "max_items")
    assert "option of sliding_window regions, not of a temporary region" in issue.message


def test_a_wrong_budget_type_says_what_is_allowed() -> None:
    text = HEAD + REGIONS.replace("budget: 2000", "budget: lots")
    issue = only_issue(text)
    assert issue.path == "regions[2].budget"
    assert issue.line == line_of(text, "budget: lots")
    assert "got 'lots'" in issue.message
    assert '"12%"' in issue.message and "tokens" in issue.message


def test_a_misspelled_enum_value_gets_a_suggestion() -> None:
    text = HEAD + REGIONS.replace("volatility: stable", "volatility: stabel")
    issue = only_issue(text)
    assert issue.path == "regions[0].volatility"
    assert issue.line == line_of(text, "stabel")
    assert "one of 'stable', 'grows', 'rewritten'" in issue.message
    assert "Did you mean 'stable'?" in issue.message


def test_an_out_of_range_number_names_the_range() -> None:
    text = HEAD + "window:\n  high_water: 1.5\n" + REGIONS
    issue = only_issue(text)
    assert issue.path == "window.high_water"
    assert issue.line == line_of(text, "high_water")
    assert "a number > 0 and <= 1" in issue.message


def test_an_unknown_kind_lists_the_kinds() -> None:
    text = HEAD + REGIONS.replace("kind: temporary", "kind: temporay")
    issue = only_issue(text)
    assert issue.path == "regions[2].kind"
    assert issue.line == line_of(text, "temporay")
    assert "Did you mean 'temporary'?" in issue.message
    assert "checklist" in issue.message


def test_a_missing_required_key_points_at_its_mapping() -> None:
    text = HEAD + REGIONS.replace("    budget: 2000\n", "")
    issue = only_issue(text)
    assert issue.path == "regions[2]"
    assert issue.line == line_of(text, "- name: scratch")
    assert "missing required key 'budget'" in issue.message


def test_an_unsupported_version_is_refused() -> None:
    text = (HEAD + REGIONS).replace("version: 1", "version: 2")
    issue = only_issue(text)
    assert issue.path == "version"
    assert issue.line == 1
    assert "version 1" in issue.message


def test_a_bad_seed_entry_is_reported_inside_the_list() -> None:
    text = HEAD + REGIONS.replace(
        "    seed: You are an agent.\n",
        "    seed:\n      - You are an agent.\n      - {txt: Be brief.}\n",
    )
    error = errors_of(text)
    paths = {(i.path, i.line) for i in error.issues}
    assert ("regions[0].seed[1].txt", line_of(text, "txt:")) in paths
    assert any("Did you mean 'text'?" in i.message for i in error.issues)


def test_a_missing_seed_file_names_the_file_and_line(tmp_path: Path) -> None:
    text = HEAD + REGIONS.replace("seed: You are an agent.", "seed: {file: prompts/missing.md}")
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    with pytest.raises(BlueprintError) as info:
        load_blueprint(path)
    line = line_of(text, "missing.md")
    assert str(info.value).startswith(f"{path}:{line}: regions[0].seed.file: cannot read seed")


def test_every_issue_prints_as_file_line_path_message(tmp_path: Path) -> None:
    text = HEAD + REGIONS.replace("budget: 2000", "budget: -5").replace(
        "kind: pinned", "kind: pinned\n    colour: red"
    )
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    with pytest.raises(BlueprintError) as info:
        load_blueprint(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}:{line_of(text, 'colour')}: regions[0].colour: ")
    assert lines[1].startswith(f"{path}:{line_of(text, 'budget: -5')}: regions[2].budget: ")


def test_a_blueprint_error_is_a_regio_error() -> None:
    from regio.errors import RegioError

    assert issubclass(BlueprintError, RegioError)


def test_an_unreadable_blueprint_path_is_a_blueprint_error(tmp_path: Path) -> None:
    with pytest.raises(BlueprintError, match="cannot read the blueprint file"):
        load_blueprint(tmp_path / "nope.yaml")


def test_a_region_list_that_is_empty_is_refused() -> None:
    text = HEAD + "regions: []\n"
    issue = only_issue(text)
    assert issue.path == "regions"
    assert issue.line == line_of(text, "regions:")
    assert "non-empty list" in issue.message


def test_dedented_text_with_a_leading_newline_loads() -> None:
    text = "\n" + textwrap.indent(HEAD + REGIONS, "")
    assert load_blueprint(text).name == "t"


KNOWN_KEYS = {
    "name",
    "kind",
    "budget",
    "min_tokens",
    "max_tokens",
    "admission",
    "volatility",
    "description",
    "seed",
    "max_items",
    "eviction",
    "compact_at",
    "threshold_tokens",
    "target",
    "source",
    "max_entries",
    "gate",
    "render",
    "on_write",
    "on_overflow",
    "heading",
}
#: YAML 1.1 reads these as booleans, so they cannot be generated as key names
YAML_BOOLEANS = {"y", "n", "yes", "no", "on", "off", "true", "false"}


@settings(max_examples=60, deadline=None)
@given(
    key=st.from_regex(r"[a-z][a-z_]{1,12}", fullmatch=True).filter(
        lambda k: k not in KNOWN_KEYS and k not in YAML_BOOLEANS
    ),
    region=st.integers(0, 2),
)
def test_any_unknown_region_key_is_one_issue_at_its_own_path_and_line(
    key: str, region: int
) -> None:
    names = ["system", "conversation", "scratch"]
    anchor = f"  - name: {names[region]}\n"
    text = HEAD + REGIONS.replace(anchor, anchor + f"    {key}: 1\n")
    issue = only_issue(text)
    assert issue.path == f"regions[{region}].{key}"
    assert issue.line == line_of(text, f"    {key}: 1")
    assert "Allowed keys:" in issue.message or "is an option of" in issue.message
