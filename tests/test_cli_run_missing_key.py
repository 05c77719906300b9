"""``regio run`` against a real provider without its API key stops before the run starts:
exit 2, one error naming the environment variable and the offline alternatives, nothing on
stdout (user report: an empty table, then ``run failed: TypeError: "Could not resolve
authentication method..."``, exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from regio.cli import main

ROOT = Path(__file__).resolve().parents[1]
CODING = str(ROOT / "examples" / "blueprints" / "coding-agent.yaml")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    ("extra", "variable"),
    [([], "ANTHROPIC_API_KEY"), (["--provider", "openai"], "OPENAI_API_KEY")],
    ids=["blueprint-anthropic", "openai"],
)
def test_a_run_without_its_providers_key_stops_before_it_starts_naming_the_variable(
    capsys: pytest.CaptureFixture[str], extra: list[str], variable: str
) -> None:
    assert main(["run", CODING, "--task", "Fix the test", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    message = _one_line(err)
    assert message.startswith("error:") and message.count("error") == 1
    assert f"{variable} is not set" in message
    assert "--provider replay" in message and "--provider scripted" in message


def test_a_key_passed_with_api_key_or_a_local_server_needs_no_environment_variable() -> None:
    from argparse import Namespace

    from regio.agent.cli import missing_key
    from regio.blueprint import load_blueprint

    bp = load_blueprint(CODING)
    args = Namespace(provider=None, api_key="sk-test", base_url=None)
    assert missing_key(args, bp) is None
    local = Namespace(provider="openai", api_key=None, base_url="http://127.0.0.1:18080/v1")
    assert missing_key(local, bp) is None


def test_an_llm_summarizer_without_its_key_is_caught_too() -> None:
    from argparse import Namespace

    from regio.agent.cli import missing_key
    from regio.blueprint import load_blueprint

    text = (
        Path(CODING)
        .read_text(encoding="utf-8")
        .replace("  model: claude-haiku-4-5 ", "  provider: anthropic\n  model: claude-haiku-4-5 ")
    )
    bp = load_blueprint(text)
    args = Namespace(provider=None, api_key="sk-test", base_url=None)
    message = missing_key(args, bp)
    assert message is not None and "summarizer.provider anthropic" in message
    assert "ANTHROPIC_API_KEY is not set" in message


def test_an_offline_run_needs_no_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", CODING, "--provider", "scripted", "--task", "Fix the test"]) == 0


@pytest.mark.parametrize("offline", ["scripted", "replay"])
def test_an_offline_run_with_an_llm_summarizer_stops_before_it_starts_naming_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, offline: str
) -> None:
    """The agent's replies need no key offline, but a blueprint whose summarizer calls
    Anthropic would fail at its first compaction, mid-run: caught before the run starts."""
    text = (
        Path(CODING)
        .read_text(encoding="utf-8")
        .replace("  model: claude-haiku-4-5 ", "  provider: anthropic\n  model: claude-haiku-4-5 ")
    )
    bp = tmp_path / "bp.yaml"
    bp.write_text(text, encoding="utf-8")
    assert main(["run", str(bp), "--provider", offline, "--task", "Fix the test"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    message = _one_line(err)
    assert "summarizer.provider anthropic" in message and "ANTHROPIC_API_KEY is not set" in message
    assert "drop summarizer.provider" in message and "--provider replay" not in message


def test_an_llm_summarizer_authenticated_by_anthropic_auth_token_is_not_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Anthropic SDK reads ``ANTHROPIC_AUTH_TOKEN`` as well as ``ANTHROPIC_API_KEY``, for
    the summarizer's client as for the agent's: a run with only the token set is not stopped."""
    from argparse import Namespace

    from regio.agent.cli import missing_key
    from regio.blueprint import load_blueprint

    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-test")
    text = (
        Path(CODING)
        .read_text(encoding="utf-8")
        .replace("  model: claude-haiku-4-5 ", "  provider: anthropic\n  model: claude-haiku-4-5 ")
    )
    bp = load_blueprint(text)
    assert missing_key(Namespace(provider=None, api_key=None, base_url=None), bp) is None
    offline = Namespace(provider="scripted", api_key=None, base_url=None)
    assert missing_key(offline, bp) is None
