"""A bad ``--cache`` name is refused before any work, naming the option, the bad value, the
closest known names and a value that works; never pointing to a rules file ``regio bench``
has no option for."""

from __future__ import annotations

from pathlib import Path

import pytest

from regio.bench.run import check_cache_models
from regio.cache.types import CacheRuleError
from regio.cli import main

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "examples" / "traces" / "mini-swe-agent" / "local.traj.json"
BLUEPRINT = ROOT / "examples" / "blueprints" / "coding-agent.yaml"


def test_a_misspelt_cache_model_names_the_option_the_value_and_the_closest_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["bench", "--trace", str(TRACE), "--blueprint", str(BLUEPRINT)]
    assert main([*argv, "--cache", "anthropic:claude-sonet-4-6"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--cache anthropic:claude-sonet-4-6: no cache rule for model 'claude-sonet-4-6'" in err
    assert "did you mean claude-sonnet-4-6" in err
    assert "use --cache anthropic:claude-sonnet-4-6" in err
    assert "rules file" not in err


@pytest.mark.parametrize(
    ("name", "meant", "fix"),
    [
        ("openai:gpt5", "did you mean gpt-5", "--cache openai:gpt-5 "),
        (
            "anthropc:claude-sonnet-4-6",
            "did you mean anthropic",
            "--cache anthropic:claude-sonnet-4-6",
        ),
        (
            "oracle:anthropic:claude-sonet-4-6",
            "did you mean claude-sonnet-4-6",
            "--cache oracle:anthropic:claude-sonnet-4-6",
        ),
        (
            "claude:claude-sonet-4-6",
            "did you mean claude-sonnet-4-6",
            "--cache anthropic:claude-sonnet-4-6",
        ),
    ],
)
def test_every_kind_of_misspelt_cache_name_gets_a_suggestion_and_a_working_value(
    name: str, meant: str, fix: str
) -> None:
    with pytest.raises(CacheRuleError) as caught:
        check_cache_models(["anthropic:claude-sonnet-4-6", name])
    text = str(caught.value)
    assert text.startswith(f"--cache {name}: ") and meant in text and fix in text
    value = fix.split()[1]
    check_cache_models([value])  # the value it tells the user to use works


def test_a_name_with_nothing_close_still_gets_a_working_value() -> None:
    with pytest.raises(CacheRuleError) as caught:
        check_cache_models(["anthropic:zzz"])
    text = str(caught.value)
    assert "did you mean" not in text and "use --cache anthropic:claude-sonnet-4-6" in text
    check_cache_models(["anthropic:claude-sonnet-4-6"])


def test_demo_refuses_a_misspelt_cache_model_the_same_way(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["demo", "--out", str(tmp_path), "--cache", "anthropic:claude-sonet-4-6"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--cache anthropic:claude-sonet-4-6" in err and "did you mean claude-sonnet-4-6" in err
    assert not any(tmp_path.iterdir())
