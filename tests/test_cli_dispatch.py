"""The `regio` dispatcher: every subsystem's commands, and errors that name the subcommand."""

from __future__ import annotations

import pytest

from regio.cli import build_parser, main


def test_every_subsystem_registers_its_commands() -> None:
    commands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert {"demo", "bench", "count", "validate", "schema", "traces", "inspect", "run"} <= commands


def test_an_unknown_flag_is_reported_with_the_subcommands_own_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--bogus"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: regio demo" in err
    assert "unrecognized arguments: --bogus" in err


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out
