"""Cache rules as data: the packaged file, the loader's errors, selection (spec section 3)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from regio.cache import CacheRuleError, default_rules, load_rules, resolve
from regio.cache.rules import parse_period
from regio.providers import cache_model_for


def test_periods_compare_by_their_start() -> None:
    assert parse_period("2026-H2") == dt.date(2026, 7, 1)
    assert parse_period("2026-H1") == dt.date(2026, 1, 1)
    assert parse_period("2026-02") == dt.date(2026, 2, 1)
    assert parse_period("2024-08-02") == dt.date(2024, 8, 2)
    assert parse_period("2026") == dt.date(2026, 1, 1)
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        parse_period("H2-2026")


@pytest.mark.parametrize(
    ("provider", "model", "rule_id"),
    [
        ("anthropic", "claude-sonnet-4-5-20250929", "anthropic/sonnet-4-5@2026-H2"),
        ("anthropic", "claude-sonnet-4-6", "anthropic/sonnet-4-6@2026-H2"),
        ("anthropic", "claude-opus-4-5", "anthropic/opus-4-5@2026-H2"),
        ("anthropic", "claude-opus-4-6", "anthropic/opus-4-6@2026-H2"),
        ("anthropic", "claude-opus-4-7", "anthropic/opus-4-7@2026-H2"),
        ("anthropic", "claude-opus-4-8", "anthropic/opus-4-8@2026-H2"),
        ("anthropic", "claude-opus-5", "anthropic/opus-5@2026-H2"),
        ("anthropic", "claude-haiku-4-5", "anthropic/haiku-4-5@2026-H2"),
        ("anthropic", "claude-3-5-haiku-20241022", "anthropic/haiku-3-5@2026-H2"),
        ("anthropic", "claude-3-haiku-20240307", "anthropic/haiku-3@2026-H2"),
        ("anthropic", "claude-sonnet-4-20250514", "anthropic/sonnet-4@2026-H2"),
        ("anthropic", "claude-opus-4-1", "anthropic/opus-4@2026-H2"),
        ("openai", "gpt-4o", "openai/gpt-4o@2024-10-01"),
        ("openai", "gpt-4o-mini", "openai/gpt-4o-mini@2024-10-01"),
        ("openai", "gpt-4.1", "openai/gpt-4.1@2025"),
        ("openai", "gpt-5", "openai/gpt-5@2025-11-13"),
        ("openai", "gpt-5-mini", "openai/gpt-5-mini@2025-11-13"),
        ("openai", "gpt-5-mini-2025-08-07", "openai/gpt-5-mini@2025-11-13"),
        ("openai", "gpt-5-nano", "openai/gpt-5-nano-pro@2025-11-13"),
        ("openai", "gpt-5-pro", "openai/gpt-5-nano-pro@2025-11-13"),
        ("openai", "gpt-5-codex", "openai/gpt-5@2025-11-13"),
        ("openai", "gpt-5.5", "openai/gpt-5.5@2026-H2"),
        ("openai", "gpt-5.6", "openai/gpt-5.6@2026-H2"),
        ("deepseek", "deepseek-chat", "deepseek/chat@2024-08-02"),
        ("deepseek", "deepseek-v4-pro", "deepseek/v4@2026"),
        ("vllm", "any", "vllm@2026"),
        ("sglang", "any", "sglang@2026"),
        ("llamacpp", "any", "llamacpp@2026"),
    ],
)
def test_every_spec_provider_resolves_to_its_rule(provider: str, model: str, rule_id: str) -> None:
    assert resolve(provider, model).id == rule_id


def test_packaged_values_follow_the_spec() -> None:
    rules = default_rules()
    sonnet = rules.by_id("anthropic/sonnet-4-5@2026-H2")
    assert (sonnet.min_tokens, sonnet.price.input, sonnet.price.output) == (1024, 3.0, 15.0)
    assert sonnet.mult == {"read": 0.1, "write_5m": 1.25, "write_1h": 2.0, "plain": 1.0}
    assert sonnet.lookback is not None and sonnet.lookback.collapse_runs == (
        "tool_use",
        "tool_result",
    )
    assert rules.by_id("anthropic/opus-4-5@2026-H2").price.input == 5.0
    assert rules.by_id("anthropic/opus-4-6@2026-H2").min_tokens == 4096
    opus47 = rules.by_id("anthropic/opus-4-7@2026-H2")
    assert opus47.status == "conflicting" and "4,096" in (opus47.conflict or "")
    gpt5 = rules.by_id("openai/gpt-5@2025-11-13")
    assert (gpt5.price.input, gpt5.price.output, gpt5.status) == (1.25, 10.0, "secondary")
    assert rules.by_id("openai/gpt-5.6@2026-H2").price.input is None
    assert rules.by_id("sglang@2026").param("page_size") == 1
    assert rules.by_id("deepseek/chat@2024-08-02").param("build_s") == 5


def test_extends_copies_then_overrides_top_level_keys() -> None:
    r = default_rules().by_id("anthropic/sonnet-4-6@2026-02")
    assert r.provider == "anthropic" and r.min_tokens == 2048
    assert r.model_family == ("claude-sonnet-4-6*",)
    assert r.mechanism == "breakpoint_lookback" and r.price.input == 3.0


def test_no_rule_before_the_first_doc_copy_names_what_is_known() -> None:
    with pytest.raises(CacheRuleError, match="claude-sonnet-4-5"):
        resolve("anthropic", "claude-sonnet-4-5", sim_date="2020")
    with pytest.raises(CacheRuleError, match="unknown cache provider"):
        cache_model_for("mistral:large")


def _write(tmp_path: Path, doc: object) -> Path:
    p = tmp_path / "rules.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return p


BASE = {
    "id": "mine/a@2026",
    "provider": "anthropic",
    "platform": "claude_api",
    "model_family": ["my-model*"],
    "as_of": "2026",
    "status": "official",
    "mechanism": "breakpoint_lookback",
    "min_tokens": 10,
    "price": {"input": 1.0, "output": 2.0},
    "mult": {"read": 0.1, "write_5m": 1.25, "write_1h": 2.0, "plain": 1.0},
}


def test_a_user_rules_file_drives_the_models(tmp_path: Path) -> None:
    rules = load_rules(_write(tmp_path, {"schema": "regio.cache-rules/1", "rules": [BASE]}))
    m = cache_model_for("anthropic:my-model-1", rules=rules)
    assert m.rule.id == "mine/a@2026" and rules.source.endswith("rules.yaml")


def test_ties_on_as_of_prefer_official_over_secondary(tmp_path: Path) -> None:
    second = {**BASE, "id": "mine/b@2026", "status": "secondary", "min_tokens": 99}
    rules = load_rules(_write(tmp_path, {"schema": "regio.cache-rules/1", "rules": [second, BASE]}))
    assert rules.resolve("anthropic", "my-model").id == "mine/a@2026"


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"status": "rumour"}, r"'mine/a@2026', key 'status'"),
        ({"as_of": "soon"}, r"key 'as_of'"),
        ({"min_tokens": -1}, r"key 'min_tokens'"),
        ({"price": {"input": "cheap"}}, r"key 'price.input'"),
        ({"mult": {"read": "x"}}, r"key 'mult'"),
        ({"mechanism": None}, r"key 'mechanism': missing"),
        ({"extends": "ghost"}, r"key 'extends': unknown rule 'ghost'"),
        ({"model_family": "my-model"}, r"key 'model_family'"),
    ],
)
def test_a_bad_rule_is_named_with_its_key(tmp_path: Path, change: dict, match: str) -> None:
    doc = {"schema": "regio.cache-rules/1", "rules": [{**BASE, **change}]}
    with pytest.raises(CacheRuleError, match=match):
        load_rules(_write(tmp_path, doc))


def test_a_wrong_schema_or_unsafe_yaml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CacheRuleError, match="schema"):
        load_rules(_write(tmp_path, {"schema": "other/2", "rules": [BASE]}))
    p = tmp_path / "evil.yaml"
    p.write_text("schema: !!python/object/apply:os.system ['true']\nrules: []\n")
    with pytest.raises(CacheRuleError, match="not valid YAML"):
        load_rules(p)


def test_an_extends_cycle_is_refused(tmp_path: Path) -> None:
    a = {**BASE, "extends": "mine/b"}
    b = {"id": "mine/b", "extends": "mine/a@2026"}
    with pytest.raises(CacheRuleError, match="cycle"):
        load_rules(_write(tmp_path, {"schema": "regio.cache-rules/1", "rules": [a, b]}))


def test_a_smaller_or_larger_gpt_5_model_is_never_billed_at_gpt_5_prices() -> None:
    """``gpt-5-*`` would give GPT-5 mini, nano and pro GPT-5's $1.25 / $10: mini has its own
    published price, nano and pro none recorded (their costs are unpriced, never guessed);
    each keeps GPT-5's cache mechanism and read discount."""
    gpt5 = resolve("openai", "gpt-5")
    mini = resolve("openai", "gpt-5-mini")
    assert (mini.price.input, mini.price.output) == (0.25, 2.00)
    for model in ("gpt-5-nano", "gpt-5-pro-2025-10-06"):
        rule = resolve("openai", model)
        assert (rule.price.input, rule.price.output) == (None, None)
    for rule in (mini, resolve("openai", "gpt-5-nano")):
        assert rule.mechanism == gpt5.mechanism
        assert rule.m("read") == gpt5.m("read")
