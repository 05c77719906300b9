"""Blueprint checks across keys: errors with path and line, and warnings returned alongside."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint_support import HEAD, line_of
from regio.blueprint import (
    BlueprintError,
    BlueprintWarning,
    load_blueprint,
    validate_blueprint,
)
from regio.blueprint.validate import clock_variables


def region_yaml(*regions: str) -> str:
    return HEAD + "regions:\n" + "".join(regions)


SYSTEM = "  - name: system\n    kind: pinned\n    volatility: stable\n    budget: 4000\n"
CONVO = '  - name: conversation\n    kind: sliding_window\n    budget: "50%"\n'
TEMP = "  - name: scratch\n    kind: temporary\n    budget: 2000\n"


def errors(text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(text)
    return [(i.path, i.line, i.message) for i in info.value.issues]


def test_duplicate_region_names_point_at_the_second_and_name_the_first() -> None:
    text = region_yaml(SYSTEM, TEMP, TEMP.replace("budget: 2000", "budget: 1000"))
    [(path, line, message)] = errors(text)
    assert path == "regions[2].name"
    assert line == line_of(text, "name: scratch", 2)
    assert f"regions[1] (line {line_of(text, 'name: scratch')})" in message


def test_a_percentage_over_100_is_refused_at_its_line() -> None:
    text = region_yaml(SYSTEM, CONVO.replace('"50%"', '"150%"'), TEMP)
    [(path, line, message)] = errors(text)
    assert (path, line) == ("regions[1].budget", line_of(text, "150%"))
    assert "(0, 100]" in message


def test_a_region_larger_than_the_window_names_both_numbers() -> None:
    text = region_yaml(SYSTEM, TEMP.replace("budget: 2000", "budget: 500000"))
    [(path, line, message)] = errors(text)
    assert (path, line) == ("regions[1].budget", line_of(text, "500000"))
    assert "500000 tokens" in message and "192000 tokens" in message


def test_fc_05_never_shrinking_regions_over_the_window_fail_at_load_with_numbers() -> None:
    text = (
        HEAD.replace("context_window: 200000", "context_window: 8040").replace(
            "max_output_tokens: 8000", "max_output_tokens: 8000"
        )
        + "regions:\n"
        + "  - name: system\n    kind: pinned\n    budget: 30\n"
        + "  - name: facts\n    kind: keyed\n    budget: 20\n"
        + "  - name: inbox\n    kind: temporary\n    admission: reject\n    budget: 10\n"
        + "  - name: conversation\n    kind: sliding_window\n    budget: 30\n"
    )
    [(path, line, message)] = errors(text)
    assert (path, line) == ("regions", line_of(text, "regions:"))
    assert "need 60 tokens but the window holds 40" in message
    assert "system (pinned) 30" in message
    assert "facts (keyed) 20" in message
    assert "inbox (reject temporary) 10" in message


def test_compact_history_source_must_exist_with_a_suggestion() -> None:
    history = "  - name: history\n    kind: compact_history\n    source: convers\n    budget: 500\n"
    text = region_yaml(SYSTEM, CONVO + "    eviction: {strategy: compact}\n", history)
    found = errors(text)
    assert (
        "regions[2].source",
        line_of(text, "source: convers"),
    ) in [(p, ln) for p, ln, _ in found]
    message = next(m for p, _, m in found if p == "regions[2].source")
    assert "Did you mean 'conversation'?" in message
    assert "regions that produce summaries: conversation" in message


def test_compact_history_source_must_produce_summaries() -> None:
    history = "  - name: history\n    kind: compact_history\n    source: scratch\n    budget: 500\n"
    text = region_yaml(SYSTEM, CONVO, TEMP, history)
    [(path, line, message)] = errors(text)
    assert (path, line) == ("regions[3].source", line_of(text, "source: scratch"))
    assert "temporary region, which produces no summaries" in message
    assert "add a compacting region" in message


def test_a_summary_producer_needs_a_compact_history() -> None:
    notes = "  - name: notes\n    kind: compacting\n    budget: 3000\n"
    text = region_yaml(SYSTEM, notes, CONVO + "    eviction:\n      strategy: compact\n")
    found = errors(text)
    assert ("regions[1].name", line_of(text, "name: notes")) in [(p, ln) for p, ln, _ in found]
    assert (
        "regions[2].eviction.strategy",
        line_of(text, "strategy: compact"),
    ) in [(p, ln) for p, ln, _ in found]
    assert all("source: " in m for _, _, m in found)


def test_two_histories_for_one_source_are_refused() -> None:
    history = "  - name: h{n}\n    kind: compact_history\n    source: notes\n    budget: 500\n"
    notes = "  - name: notes\n    kind: compacting\n    budget: 3000\n"
    text = region_yaml(SYSTEM, notes, history.format(n=1), history.format(n=2), TEMP)
    [(path, line, message)] = errors(text)
    assert (path, line) == ("regions[3].source", line_of(text, "source: notes", 2))
    assert "already sends its summaries to 'h1'" in message


def test_compacting_target_must_be_below_its_trigger() -> None:
    notes = "  - name: notes\n    kind: compacting\n    budget: 3000\n    compact_at: 0.5\n"
    notes += "    target: 0.6\n"
    history = "  - name: h\n    kind: compact_history\n    source: notes\n    budget: 500\n"
    text = region_yaml(SYSTEM, notes, history, TEMP)
    [(path, line, message)] = errors(text)
    assert (path, line) == ("regions[1].target", line_of(text, "target: 0.6"))
    assert "below compact_at (0.5)" in message


@pytest.mark.parametrize(
    ("seed", "variable"),
    [
        ('"Today is {date}."', "{date}"),
        ('"It is {{ time }} now."', "{{ time }}"),
        ('"Clock: {current_time}"', "{current_time}"),
        ('"Now: {now:%H:%M}"', "{now:%H:%M}"),
        ('"At ${timestamp}"', "${timestamp}"),
    ],
)
def test_fc_27_a_clock_variable_in_a_stable_seed_is_rejected_naming_it(
    seed: str, variable: str
) -> None:
    text = region_yaml(SYSTEM + f"    seed: {seed}\n", TEMP)
    [(path, line, message)] = errors(text)
    assert (path, line) == ("regions[0].seed", line_of(text, "seed:"))
    assert variable in message
    assert "volatility: rewritten" in message


def test_fc_27_a_clock_variable_in_a_seed_file_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "system.md").write_text("You are an agent.\nThe time is {now}.\n")
    text = region_yaml(SYSTEM + "    seed: {file: system.md}\n", TEMP)
    (tmp_path / "bp.yaml").write_text(text)
    with pytest.raises(BlueprintError) as info:
        load_blueprint(tmp_path / "bp.yaml")
    [issue] = info.value.issues
    assert (issue.path, issue.line) == ("regions[0].seed.file", line_of(text, "system.md"))
    assert "{now}" in issue.message


def test_fc_27_a_clock_variable_in_a_rewritten_region_is_allowed() -> None:
    clock = "  - name: clock\n    kind: pinned\n    budget: 50\n    seed: 'Now: {now}'\n"
    bp = load_blueprint(region_yaml(SYSTEM, clock, TEMP))
    assert bp.region("clock").volatility == "rewritten"


def test_fc_27_a_json_example_in_a_stable_seed_is_not_a_clock() -> None:
    seed = """    seed: 'Reply as {"date": "2024-01-01"} or {{"time": 1}}; ids look like {id}'\n"""
    bp = load_blueprint(region_yaml(SYSTEM + seed, TEMP))
    assert bp.region("system").seed is not None


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.text(alphabet="abc XYZ.:\n", max_size=20),
    word=st.sampled_from(["now", "time", "date", "timestamp", "today", "current_date"]),
    style=st.sampled_from(["{%s}", "{{ %s }}", "${%s}", "%%(%s)s"]),
)
def test_every_clock_placeholder_style_is_detected(prefix: str, word: str, style: str) -> None:
    placeholder = style % word
    assert clock_variables(prefix + placeholder + prefix) == [placeholder]


def test_seed_entries_must_fit_their_kind() -> None:
    keyed = "  - name: facts\n    kind: keyed\n    budget: 500\n    seed: [no key here]\n"
    checklist = (
        "  - name: plan\n    kind: checklist\n    budget: 500\n"
        "    seed:\n      - {key: a, text: do it}\n      - {text: then this, role: user}\n"
    )
    text = region_yaml(SYSTEM, keyed, checklist, TEMP)
    found = [(p, ln) for p, ln, _ in errors(text)]
    assert ("regions[1].seed[0]", line_of(text, "no key here")) in found
    assert ("regions[2].seed[0].key", line_of(text, "key: a")) in found
    assert ("regions[2].seed[1].role", line_of(text, "role: user")) in found


def test_an_output_reserve_as_large_as_the_window_is_refused() -> None:
    text = region_yaml(SYSTEM, TEMP).replace("max_output_tokens: 8000", "max_output_tokens: 200000")
    found = errors(text)
    assert found[0][:2] == ("model.max_output_tokens", line_of(text, "max_output_tokens"))


def warnings_of(text: str) -> list[BlueprintWarning]:
    return list(load_blueprint(text).warnings)


def test_a_window_that_can_never_shrink_is_a_warning() -> None:
    facts = "  - name: facts\n    kind: keyed\n    budget: 500\n"
    text = region_yaml(SYSTEM, facts)
    [warning] = warnings_of(text)
    assert (warning.path, warning.line) == ("regions", line_of(text, "regions:"))
    assert "no region can ever shrink" in warning.message


def test_stable_on_a_kind_written_every_turn_is_a_warning() -> None:
    text = region_yaml(SYSTEM, CONVO + "    volatility: stable\n", TEMP)
    [warning] = warnings_of(text)
    assert (warning.path, warning.line) == (
        "regions[1].volatility",
        line_of(text, "volatility: stable", 2),
    )
    assert "sliding_window regions are written every turn" in warning.message


def test_conflicting_clamps_a_big_window_and_a_hookless_custom_region_warn() -> None:
    custom = "  - name: odd\n    kind: custom\n    budget: 100\n"
    text = region_yaml(SYSTEM, TEMP + "    min_tokens: 900\n    max_tokens: 100\n", custom).replace(
        "regions:\n", "window:\n  max_tokens: 300000\nregions:\n", 1
    )
    paths = {w.path for w in warnings_of(text)}
    assert paths == {"window.max_tokens", "regions[1].min_tokens", "regions[2].kind"}


def test_validate_blueprint_rechecks_a_blueprint_changed_in_code() -> None:
    bp = load_blueprint(region_yaml(SYSTEM, TEMP))
    assert validate_blueprint(bp) == []
    broken = attrs.evolve(bp, regions=(*bp.regions, bp.regions[1]))
    with pytest.raises(BlueprintError, match=r"regions\[2\]\.name: region name 'scratch'"):
        validate_blueprint(broken)


def test_all_semantic_errors_are_reported_together() -> None:
    text = region_yaml(SYSTEM, TEMP, TEMP, CONVO.replace('"50%"', '"0%"'))
    paths = [p for p, _, _ in errors(text)]
    assert paths == ["regions[2].name", "regions[3].budget"]


def test_an_unknown_explicit_cache_profile_is_an_error_at_its_line() -> None:
    text = region_yaml(SYSTEM, TEMP).replace(
        "regions:\n", "cache:\n  profile: 'anthropic:claude-sonet-9'\nregions:\n", 1
    )
    [(path, line, message)] = errors(text)
    assert (path, line) == ("cache.profile", line_of(text, "claude-sonet-9"))
    assert "claude-sonnet-4-5*" in message


def test_a_model_without_a_cache_rule_only_warns() -> None:
    text = region_yaml(SYSTEM, TEMP).replace("provider: anthropic", "provider: text")
    [warning] = warnings_of(text)  # a plain completion endpoint: no rule describes its cache
    assert (warning.path, warning.line) == ("model.provider", line_of(text, "provider: text"))
    assert "set cache.profile" in warning.message
