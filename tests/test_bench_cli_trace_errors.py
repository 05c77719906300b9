"""`regio bench` names an unreadable trace file once, in one readable line."""

from __future__ import annotations

from pathlib import Path

import pytest

from regio.cli import main


@pytest.mark.parametrize("content", ["not json at all\n", '{"truncated": \n', "\x00\x01garbage"])
def test_an_unreadable_trace_is_named_once_without_a_python_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    trace = tmp_path / "garbage.traj"
    trace.write_text(content, encoding="utf-8")
    blueprint = Path(__file__).resolve().parents[1] / "examples/blueprints/coding-agent.yaml"
    code = main(["bench", "--trace", str(trace), "--blueprint", str(blueprint)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "no traces found" in err
    assert err.count("garbage.traj") == 2  # the --trace argument, then the reason once
    assert "['" not in err and "Traceback" not in err
