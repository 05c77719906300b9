"""The two offline examples the README and docs/runtime.md point at run to the end as scripts
and print what they say they print."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_the_drive_engine_example_runs_a_session_with_an_overflow_and_a_reload(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["drive_engine.py"])
    runpy.run_path(str(EXAMPLES / "drive_engine.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "calibrated tokens (ceiling" in out and "by regio's own count" in out
    assert "saved and loaded:" in out


def test_the_agent_loop_example_runs_offline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["agent_loop.py"])  # offline, its defaults
    runpy.run_path(str(EXAMPLES / "agent_loop.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "stop: final_answer; answer: 19 + 23 = 42." in out
