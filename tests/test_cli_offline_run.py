"""The CLI a newcomer meets: --version, offline runs, provider defaults, plain help texts."""

from __future__ import annotations

import argparse
import re
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import regio
from regio.cli import build_parser, main, plain_text

ROOT = Path(__file__).resolve().parents[1]
CODING = str(ROOT / "examples" / "blueprints" / "coding-agent.yaml")
MARKUP = re.compile(r"``|:(func|class|mod|meth|attr|data|exc):`")


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"regio {regio.__version__}"


def _parsers(parser: argparse.ArgumentParser, name: str = "regio"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_no_help_text_of_any_subcommand_shows_sphinx_markup():
    seen = []
    for name, parser in _parsers(build_parser()):
        text = parser.format_help()
        assert not MARKUP.search(text), f"{name} --help shows markup: {MARKUP.search(text)}"
        seen.append(name)
    assert {"regio run", "regio bench", "regio inspect"} <= set(seen)


def test_every_run_option_has_a_help_text():
    run = dict(_parsers(build_parser()))["regio run"]
    for action in run._actions:
        if action.option_strings and action.dest != "help":
            assert action.help and action.help.strip(), f"{action.option_strings} has no help"


@given(st.text(alphabet=st.characters(blacklist_characters="`~"), min_size=1, max_size=20))
def test_plain_text_keeps_the_words_of_roles_and_literals(word):
    assert plain_text(f":func:`{word}` and ``{word}``") == f"{word} and {word}"


def test_run_scripted_works_offline(capsys):
    assert main(["run", CODING, "--provider", "scripted", "--task", "Fix the test"]) == 0
    out = capsys.readouterr().out
    assert "I would now: Fix the test" in out and "final_answer" in out


def test_run_scripted_reads_a_script_file(tmp_path, capsys):
    script = tmp_path / "script.yaml"
    script.write_text(
        "- {text: checking, tool_calls: [{name: context_read, input: {}}]}\n- Done.\n"
    )
    code = main(["run", CODING, "--provider", "scripted", "--script", str(script), "--task", "x"])
    assert code == 0
    assert "Done." in capsys.readouterr().out


def test_run_scripted_refuses_a_bad_script_naming_it(tmp_path, capsys):
    script = tmp_path / "bad.yaml"
    script.write_text("just: a mapping\n")
    assert main(["run", CODING, "--provider", "scripted", "--script", str(script)]) == 2
    assert "bad.yaml" in capsys.readouterr().err


def test_run_replay_works_offline_with_a_bundled_trace(capsys):
    assert main(["run", CODING, "--provider", "replay"]) == 0
    out = capsys.readouterr().out
    assert "steps" in out and "anthropic:" in out


def test_run_replay_of_a_given_trace(capsys):
    trace = ROOT / "examples" / "traces" / "tau-bench" / "gpt-4o-airline.first40.json"
    assert main(["run", CODING, "--provider", "replay", "--trace", str(trace)]) == 0


def test_real_provider_without_task_is_refused(capsys):
    assert main(["run", CODING, "--provider", "anthropic", "--api-key", "x"]) == 2
    assert "--task" in capsys.readouterr().err


def test_provider_mismatch_with_the_blueprint_is_warned_about(capsys):
    main(["run", CODING, "--provider", "openai-compatible", "--task", "x"])
    err = capsys.readouterr().err
    assert "warning" in err and "anthropic" in err


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_error_names_the_url(capsys):
    pytest.importorskip("openai", reason="the openai SDK is not installed")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    args = ["run", CODING, "--provider", "openai-compatible", "--base-url", url]
    code = main([*args, "--task", "hi", "--max-steps", "1", "--predict", "none"])
    assert code == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"cannot reach {url}" in err


def test_a_replay_that_runs_out_of_turns_says_so_rather_than_max_steps(capsys):
    assert main(["run", CODING, "--provider", "replay", "--max-steps", "500"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "stop: end of the replay turns" in out and "stop: max_steps" not in out


def test_a_replay_stopped_by_max_steps_says_max_steps(capsys):
    assert main(["run", CODING, "--provider", "replay", "--max-steps", "1"]) == 0
    assert "stop: max_steps" in " ".join(capsys.readouterr().out.split())
