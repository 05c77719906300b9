"""The example blueprints validate, build windows, and `regio validate` / `regio schema` work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blueprint_support import HEAD, REGIONS, line_of
from regio.bench.cli import DEMO_GROUPS
from regio.bench.run import DEFAULT_CACHE_MODELS
from regio.blueprint import (
    BlueprintError,
    build_window,
    dump_blueprint,
    load_blueprint,
)
from regio.blueprint.summary import layout_order
from regio.cli import main
from regio.errors import CustomHooksNotAllowedError
from regio.regions import Window

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples" / "blueprints").glob("*.yaml"))


def test_the_five_examples_exist() -> None:
    names = {p.stem for p in EXAMPLES}
    assert names == {"coding-agent", "support-agent", "researcher", "proxy", "assistant"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_blueprint_validates_without_warnings(path: Path) -> None:
    bp = load_blueprint(path)
    assert bp.warnings == ()
    assert load_blueprint(dump_blueprint(bp), base_dir=path.parent) == bp


@pytest.mark.parametrize("name", sorted(set(DEMO_GROUPS.values())))
def test_the_demo_examples_price_their_cache_at_a_model_the_demo_bills(name: str) -> None:
    # the eviction and compaction targets follow the declared model's cache prices; an
    # example priced at another model (gpt-4o reads at 0.5x) is billed at prices it was not
    # set up for (support-agent.yaml's comment has the figures)
    bp = load_blueprint(EXAMPLES[0].parent / name)
    # the engine's prices come from the model (regio.engine._parts.apply_options ->
    # cache_terms(provider, model)); the profile picks the cache rules: both must be billed
    model = f"{bp.model.provider}:{bp.model.name}"
    assert model in DEFAULT_CACHE_MODELS, (name, model)
    assert bp.cache.profile == model, (name, bp.cache.profile, model)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_window_builds_from_each_example_with_its_seeds(path: Path) -> None:
    bp = load_blueprint(path)
    window = build_window(bp)
    assert isinstance(window, Window)
    assert window.max_tokens == bp.window_tokens
    assert [r.name for r in window.regions] == [s.name for s in bp.regions]
    for region, spec in zip(window.regions, bp.regions, strict=True):
        assert region.kind == spec.kind
        assert region.volatility == spec.volatility
        assert region.admission == spec.admission
        assert region.budget > 0
        if spec.seed is not None:
            assert region.entries, spec.name
    assert window.used_tokens <= window.max_tokens


def test_the_support_agent_policy_comes_from_its_seed_file() -> None:
    path = next(p for p in EXAMPLES if p.stem == "support-agent")
    window = build_window(load_blueprint(path))
    policy = window.region("policy")
    assert "Airline agent policy" in policy.entries[0].text
    assert policy.used_tokens > 300


def test_the_regio_layout_order_puts_stable_first_and_rewritten_in_the_tail() -> None:
    path = next(p for p in EXAMPLES if p.stem == "coding-agent")
    order = dict(layout_order(load_blueprint(path)))
    assert list(order) == ["tools", "stable", "grows", "compact_history", "conversation", "tail"]
    assert order["stable"] == ["system", "task"]
    assert order["compact_history"] == ["notes_history", "conversation_history"]
    assert order["grows"] == ["scratch"]
    # tool_output's park capture replaces what it parked: it belongs in the tail
    assert order["tail"] == ["file_notes", "env_state", "plan", "tool_output"]


def test_the_baseline_layout_orders_follow_their_rules() -> None:
    path = next(p for p in EXAMPLES if p.stem == "researcher")
    bp = load_blueprint(path)
    import attrs

    naive = layout_order(attrs.evolve(bp, layout=attrs.evolve(bp.layout, strategy="naive")))
    assert naive[0][1] == [r.name for r in bp.regions if r.kind != "sliding_window"]
    kind = layout_order(attrs.evolve(bp, layout=attrs.evolve(bp.layout, strategy="kind")))
    assert kind[0][1][:3] == ["instructions", "history", "findings"]
    vol = layout_order(attrs.evolve(bp, layout=attrs.evolve(bp.layout, strategy="volatility")))
    assert vol[0][1] == [
        "instructions",
        "history",
        "findings",
        "sources",
        "synthesis",
        "plan",
        "scratchpad",
    ]


def test_cli_validate_prints_a_summary_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in EXAMPLES if p.stem == "coding-agent")
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    for name in ("system", "file_notes", "conversation_history", "18,400", "92,000"):
        assert name in out
    assert "layout (regio): [tools: -] [stable: system, task]" in out
    assert "valid" in out


def test_cli_validate_prints_every_error_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = HEAD + REGIONS.replace("budget: 2000", "budget: lots").replace("stable", "stabel")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line_of(text, 'stabel')}: regions[0].volatility:" in err
    assert f"{path}:{line_of(text, 'lots')}: regions[2].budget:" in err
    assert "invalid blueprint (2 errors)" in err


def test_cli_validate_shows_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = HEAD + REGIONS.replace('budget: "50%"', 'budget: "50%"\n    volatility: stable')
    path = tmp_path / "warn.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        f"{path}:{line_of(text, 'volatility: stable', 2)}: regions[1].volatility: warning:" in out
    )
    assert "1 warning(s)" in out


def test_cli_schema_prints_the_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "Region_sliding_window" in schema["$defs"]


def test_a_seed_larger_than_its_region_fails_the_build_naming_the_seed_line() -> None:
    text = HEAD + REGIONS.replace("budget: 4000", "budget: 3")
    bp = load_blueprint(text)
    with pytest.raises(BlueprintError) as info:
        build_window(bp)
    [issue] = info.value.issues
    assert (issue.path, issue.line) == ("regions[0].seed", line_of(text, "seed:"))
    assert "does not fit region 'system'" in issue.message


def test_seeds_reach_keyed_checklist_and_conversation_regions() -> None:
    text = (
        HEAD
        + REGIONS
        + (
            "  - name: facts\n    kind: hashmap\n    budget: 300\n"
            "    seed:\n      - {key: repo, text: regio}\n      - {key: lang, text: python}\n"
            "  - name: plan\n    kind: checklist\n    budget: 300\n    seed: [write tests, ship]\n"
        )
    )
    text = text.replace(
        'budget: "50%"\n',
        'budget: "50%"\n    seed:\n      - {role: user, text: hi}\n'
        "      - {role: assistant, text: hello}\n",
    )
    window = build_window(load_blueprint(text))
    assert window.region("facts").kind == "keyed"
    assert [e.key for e in window.region("facts").entries] == ["repo", "lang"]
    assert len(window.region("plan").entries) == 2
    assert [e.role for e in window.region("conversation").entries] == ["user", "assistant"]


def test_custom_hooks_load_only_when_allowed() -> None:
    text = (
        HEAD
        + REGIONS
        + ("  - name: odd\n    kind: custom\n    budget: 100\n    render: builtins:repr\n")
    )
    bp = load_blueprint(text)
    with pytest.raises(CustomHooksNotAllowedError):
        build_window(bp)
    window = build_window(bp, allow_custom_hooks=True)
    assert window.region("odd").render_text().startswith("Custom(")


def test_a_given_counter_is_used() -> None:
    class Words:
        def count_entry(self, entry: object) -> int:
            return 7

    window = build_window(load_blueprint(HEAD + REGIONS), counter=Words())
    assert window.region("system").used_tokens == 7
