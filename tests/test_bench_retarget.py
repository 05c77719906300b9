"""``regio bench --model``: a blueprint replayed as declared for the model it is billed at.

The failure class: a replay billed at a model its blueprint was not declared for (the cost
controller priced its compactions with another model's cache terms, the summaries billed at a
model of another provider). The retargeted blueprint changes the model, the cache profile and
the summarizer's model where it must follow, and nothing else; a retarget that would leave a
summarizer of the old provider, move one on its own server or give a blueprint the new provider
cannot take is refused with the flag and the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.retarget import retarget_blueprint
from regio.blueprint import Blueprint, load_blueprint
from regio.blueprint.contextspec import ClearToolUsesSpec, ContextManagementSpec
from regio.cli import main
from regio.traces.jsonl import write_trace
from regio.traces.synth import synthesize

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "blueprints"
CODING = EXAMPLES / "coding-agent.yaml"

#: Priced models of the shipped cache rules, with a priced summarizer of the same provider.
TARGETS = [
    ("openai:gpt-5", "gpt-5-mini"),
    ("openai:gpt-4o", "gpt-4o-mini"),
    ("anthropic:claude-sonnet-4-6", "claude-haiku-4-5"),
    ("anthropic:claude-opus-4-5", "claude-haiku-4-5"),
]


def _unchanged(blueprint: object) -> object:
    """``blueprint`` without the fields a retarget may change."""
    return attrs.evolve(
        blueprint,  # type: ignore[misc]
        model=attrs.evolve(blueprint.model, provider="x", name="x"),  # type: ignore[attr-defined]
        cache=attrs.evolve(blueprint.cache, profile=None),  # type: ignore[attr-defined]
        summarizer=attrs.evolve(blueprint.summarizer, model=None, provider="extractive"),  # type: ignore[attr-defined]
    )


@settings(max_examples=25, deadline=None)
@given(
    example=st.sampled_from(sorted(p.name for p in EXAMPLES.glob("*.yaml"))),
    target=st.sampled_from(TARGETS),
)
def test_a_retarget_changes_the_model_the_cache_profile_and_the_summarizer_only(
    example: str, target: tuple[str, str]
) -> None:
    original = load_blueprint(EXAMPLES / example)
    model, summarizer = target
    moved = retarget_blueprint(original, model, summarizer)
    assert f"{moved.model.provider}:{moved.model.name}" == model
    assert moved.cache.profile == model
    assert moved.summarizer.model == summarizer
    assert moved.summary_model in (None, (model.split(":")[0], summarizer))
    assert _unchanged(moved) == _unchanged(original)


def test_the_example_coding_blueprint_moved_to_gpt_5_summarizes_with_the_model_named() -> None:
    moved = retarget_blueprint(load_blueprint(CODING), "openai:gpt-5", "gpt-5-mini")
    assert moved.summary_model == ("openai", "gpt-5-mini")
    assert moved.model.context_window == 200_000  # the window stays as written


def test_a_summarizer_of_the_old_provider_is_refused_naming_the_flag_that_fixes_it() -> None:
    with pytest.raises(ValueError, match=r"claude-haiku-4-5.*anthropic.*--summarizer-model"):
        retarget_blueprint(load_blueprint(CODING), "openai:gpt-5")


def test_the_same_provider_keeps_the_declared_summarizer() -> None:
    moved = retarget_blueprint(load_blueprint(CODING), "anthropic:claude-opus-4-5")
    assert moved.summary_model == ("anthropic", "claude-haiku-4-5")


def _with_summarizer(**fields: Any) -> Blueprint:
    """The example coding blueprint with its summarizer's fields replaced."""
    bp = load_blueprint(CODING)
    return attrs.evolve(bp, summarizer=attrs.evolve(bp.summarizer, **fields))


def test_a_summarizer_written_out_as_the_agents_own_model_follows_the_agent() -> None:
    moved = retarget_blueprint(_with_summarizer(model="claude-sonnet-4-6"), "openai:gpt-5")
    assert moved.summarizer.model == "gpt-5" and moved.summary_model is None


@pytest.mark.parametrize("model", [None, "claude-sonnet-4-6"])
def test_an_llm_summarizer_on_the_agents_model_moves_to_the_new_provider(
    model: str | None,
) -> None:
    moved = retarget_blueprint(_with_summarizer(provider="anthropic", model=model), "openai:gpt-5")
    assert moved.summarizer.provider == "openai"
    assert moved.summarizer.model in (None, "gpt-5") and moved.summary_model is None


def test_an_llm_summarizer_named_with_the_flag_calls_the_new_provider() -> None:
    bp = _with_summarizer(provider="anthropic")
    moved = retarget_blueprint(bp, "openai:gpt-5", "openai:gpt-5-mini")
    assert (moved.summarizer.provider, moved.summarizer.model) == ("openai", "gpt-5-mini")


def test_a_summarizer_on_a_provider_of_its_own_stays_there() -> None:
    bp = _with_summarizer(provider="anthropic", model="claude-haiku-4-5")
    moved = retarget_blueprint(bp, "openai:gpt-5")
    assert moved.summary_model == ("anthropic", "claude-haiku-4-5")
    local = _with_summarizer(provider="openai", base_url="http://127.0.0.1:8080", model="qwen3")
    kept = retarget_blueprint(local, "anthropic:claude-opus-4-5")
    assert kept.summarizer == local.summarizer


def test_a_summarizer_on_its_own_server_is_refused_rather_than_moved() -> None:
    own = _with_summarizer(provider="openai", base_url="http://127.0.0.1:8080", model=None)
    with pytest.raises(ValueError, match=r"its own server .*summarizer.base_url"):
        retarget_blueprint(own, "openai:gpt-5")
    local = _with_summarizer(provider="openai", base_url="http://127.0.0.1:8080", model="qwen3")
    with pytest.raises(ValueError, match="its own server"):
        retarget_blueprint(local, "openai:gpt-5", "gpt-5-mini")


def test_a_summarizer_on_its_own_server_keeps_its_provider_within_the_agents_provider() -> None:
    local = _with_summarizer(provider="openai", base_url="http://127.0.0.1:8080", model="qwen3")
    kept = retarget_blueprint(local, "anthropic:claude-opus-4-5")
    assert kept.summarizer == local.summarizer
    own = _with_summarizer(provider="openai", base_url="http://127.0.0.1:8080", model=None)
    with pytest.raises(ValueError, match=r"--model anthropic:claude-opus-4-5: .*its own server"):
        retarget_blueprint(own, "anthropic:claude-opus-4-5")
    assert retarget_blueprint(own, "anthropic:claude-sonnet-4-6").summarizer == own.summarizer


def test_a_summarizer_model_on_its_own_server_names_the_summarizer_flag() -> None:
    local = _with_summarizer(provider="openai", base_url="http://127.0.0.1:8080", model="qwen3")
    with pytest.raises(ValueError, match=r"^--summarizer-model claude-haiku-4-5: .*own server"):
        retarget_blueprint(local, "anthropic:claude-opus-4-5", "claude-haiku-4-5")


@pytest.mark.parametrize("alias", ["claude", "Claude", "ANTHROPIC"])
def test_a_provider_alias_is_read_as_the_provider(alias: str) -> None:
    moved = retarget_blueprint(load_blueprint(CODING), f"{alias}:claude-opus-4-5")
    assert (moved.model.provider, moved.cache.profile) == (
        "anthropic",
        "anthropic:claude-opus-4-5",
    )
    assert moved.summary_model == ("anthropic", "claude-haiku-4-5")
    named = retarget_blueprint(load_blueprint(CODING), "openai:gpt-5", "OpenAI:gpt-5-mini")
    assert named.summary_model == ("openai", "gpt-5-mini")


@pytest.mark.parametrize(
    ("summarizer", "says"),
    [
        ("", "give an openai model name"),
        ("openai:", "give an openai model name"),
        ("gpt-5-*", "give an openai model name"),
        ("anthropic:claude-haiku-4-5", "a model of the --model's provider"),
    ],
)
def test_a_summarizer_model_that_is_empty_a_pattern_or_another_providers_is_refused(
    summarizer: str, says: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(says)) as caught:
        retarget_blueprint(load_blueprint(CODING), "openai:gpt-5", summarizer)
    suggested = str(caught.value).split("--summarizer-model ")[-1].split()[0]
    assert retarget_blueprint(load_blueprint(CODING), "openai:gpt-5", suggested)


def test_a_blueprint_the_new_provider_cannot_take_is_refused_naming_the_model() -> None:
    bp = load_blueprint(CODING)
    edits = ContextManagementSpec(clear_tool_uses=ClearToolUsesSpec())
    with pytest.raises(ValueError, match=r"--model openai:gpt-5: .*context_management"):
        retarget_blueprint(attrs.evolve(bp, context_management=edits), "openai:gpt-5", "gpt-5-mini")


@pytest.mark.parametrize(
    ("model", "summarizer", "says"),
    [
        ("gpt-5", None, "give provider:model"),
        ("openai:gpt-55-turbo", "gpt-5-mini", "--model openai:gpt-55-turbo: no cache rule"),
        ("anthropc:claude-sonnet-4-6", None, "did you mean anthropic"),
        ("oracle:anthropic:claude-sonnet-4-6", None, "oracle is a cache model"),
        ("openai:gpt-5", "o9-mini", "--summarizer-model o9-mini: no cache rule for an openai"),
    ],
)
def test_a_model_the_cache_rules_do_not_know_is_refused_naming_the_flag(
    model: str, summarizer: str | None, says: str
) -> None:
    with pytest.raises(ValueError, match=says):
        retarget_blueprint(load_blueprint(CODING), model, summarizer)


def test_the_value_a_summarizer_error_suggests_is_accepted() -> None:
    with pytest.raises(ValueError) as caught:
        retarget_blueprint(load_blueprint(CODING), "openai:gpt-5", "gtp-5-mini")
    suggested = str(caught.value).split("--summarizer-model ")[-1].split()[0]
    moved = retarget_blueprint(load_blueprint(CODING), "openai:gpt-5", suggested)
    assert moved.summary_model == ("openai", suggested)


def _bench(tmp_path: Path, *extra: str) -> dict[str, object]:
    """The JSON report of regio alone on a generated 80-call session that compacts at 16k."""
    trace = write_trace(synthesize(80, 3), tmp_path / "s.jsonl")
    out = tmp_path / "r.json"
    argv = ["bench", "--trace", str(trace), "--blueprint", str(CODING), "--json", str(out)]
    argv += ["--layouts", "regio", "--window-tokens", "16384", *extra]
    assert main(argv) == 0
    report: dict[str, object] = json.loads(out.read_text())
    return report


def _regio_cost(report: dict[str, object]) -> float:
    traces = report["traces"]
    assert isinstance(traces, list) and len(traces) == 1
    (model,) = traces[0]["models"]
    (row,) = model["layouts"]
    assert row["layout"] == "regio"
    return float(row["cost_usd"])


def test_bench_with_model_bills_there_and_says_how_the_blueprint_was_declared(
    tmp_path: Path,
) -> None:
    moved = _bench(tmp_path, "--model", "openai:gpt-5", "--summarizer-model", "gpt-5-mini")
    traces = moved["traces"]
    assert isinstance(traces, list) and len(traces) == 1
    assert [m["cache_model"] for m in traces[0]["models"]] == ["openai:gpt-5"]
    notes = moved["notes"]
    assert isinstance(notes, list)
    assert "declared for openai:gpt-5" in notes[0] and "summaries by gpt-5-mini" in notes[0]
    assert any("billed as requests to gpt-5-mini" in n for n in notes)
    as_written = _bench(tmp_path, "--cache", "openai:gpt-5")
    written_notes = as_written["notes"]
    assert isinstance(written_notes, list)
    assert not any("declared for" in n for n in written_notes)
    assert _regio_cost(moved) != _regio_cost(as_written)


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("openai:gpt-55", "--model openai:gpt-55: no cache rule"),
        ("gpt-5", "--model 'gpt-5': give provider:model"),
    ],
)
def test_a_bad_model_on_the_command_line_is_named_as_the_model_not_the_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: str, says: str
) -> None:
    trace = write_trace(synthesize(4, 3), tmp_path / "s.jsonl")
    argv = ["bench", "--trace", str(trace), "--blueprint", str(CODING), "--model", model]
    assert main(argv) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert says in err and "--cache" not in err


def test_the_models_provider_is_read_in_any_case_and_billed_in_the_rules_spelling(
    tmp_path: Path,
) -> None:
    report = _bench(tmp_path, "--model", "OpenAI:gpt-5", "--summarizer-model", "gpt-5-mini")
    traces = report["traces"]
    assert isinstance(traces, list)
    assert [m["cache_model"] for m in traces[0]["models"]] == ["openai:gpt-5"]


@pytest.mark.parametrize("bad", ["anthropc:claude-sonnet-4-6", "anthropc:x", "openai:gpt-55"])
def test_the_value_a_model_error_suggests_is_accepted(bad: str) -> None:
    with pytest.raises(ValueError) as caught:
        retarget_blueprint(load_blueprint(CODING), bad, "gpt-5-mini")
    text = str(caught.value)
    assert "comma-separated" not in text and "oracle" not in text
    suggested = text.split("--model ")[-1].split()[0].rstrip(";,")
    provider = suggested.split(":")[0]
    summarizer = "gpt-5-mini" if provider == "openai" else "claude-haiku-4-5"
    assert retarget_blueprint(load_blueprint(CODING), suggested, summarizer)


def test_cache_given_with_model_bills_at_the_cache_named(tmp_path: Path) -> None:
    report = _bench(
        tmp_path, "--model", "openai:gpt-5", "--summarizer-model", "gpt-5-mini", "--cache", "oracle"
    )
    traces = report["traces"]
    assert isinstance(traces, list)
    assert [m["cache_model"] for m in traces[0]["models"]] == ["oracle"]


@pytest.mark.parametrize("cache", ["", ","])
def test_an_empty_cache_list_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: str
) -> None:
    trace = write_trace(synthesize(4, 3), tmp_path / "s.jsonl")
    argv = ["bench", "--trace", str(trace), "--blueprint", str(CODING), "--cache", cache]
    assert main(argv) == 2
    assert "--cache: give at least one provider[:model]" in capsys.readouterr().err


def test_an_error_is_printed_as_written_without_emoji_codes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = write_trace(synthesize(4, 3), tmp_path / "s.jsonl")
    argv = ["bench", "--trace", str(trace), "--blueprint", str(CODING), "--model", "anthropc:x"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "anthropc:x:" in " ".join(err.split()) and "\u274c" not in err


def test_a_summarizer_model_without_a_model_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = write_trace(synthesize(4, 3), tmp_path / "s.jsonl")
    argv = ["bench", "--trace", str(trace), "--blueprint", str(CODING)]
    assert main([*argv, "--summarizer-model", "gpt-5-mini"]) == 2
    assert "give it with --model" in capsys.readouterr().err
