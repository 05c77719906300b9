"""A diagnostic line of the command line (an error on stderr, a blueprint warning, the stop line
of ``regio run``) is one line at any console width: the terminal folds it, regio never puts a
newline inside a path or a name, so a copied path still opens and ``grep`` finds the line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blueprint_support import HEAD, REGIONS, line_of
from regio.cli import main
from regio.traces.format import Usage
from test_agent_cli_unreported_usage import _replay_run

ROOT = Path(__file__).resolve().parents[1]
_WIDTHS = st.integers(min_value=20, max_value=100)
_SETTINGS = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(_WIDTHS, st.integers(min_value=20, max_value=120))
def test_a_bench_error_names_a_long_trace_path_whole_at_any_width(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    width: int,
    depth: int,
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    folder = tmp_path / ("d" * depth)
    folder.mkdir(exist_ok=True)
    trace = folder / "garbage.traj"
    trace.write_text("not json at all\n", encoding="utf-8")
    blueprint = ROOT / "examples/blueprints/coding-agent.yaml"
    assert main(["bench", "--trace", str(trace), "--blueprint", str(blueprint)]) == 2
    err = capsys.readouterr().err
    assert err.count(str(trace)) == 2
    assert len(err.strip().splitlines()) == 1


@_SETTINGS
@given(_WIDTHS)
def test_a_blueprint_warning_is_one_file_line_diagnostic_at_any_width(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    text = HEAD + REGIONS.replace('budget: "50%"', 'budget: "50%"\n    volatility: stable')
    path = tmp_path / "a-blueprint-in-a-folder-with-a-long-name.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    where = f"{path}:{line_of(text, 'volatility: stable', 2)}: regions[1].volatility: warning:"
    (warning,) = [line for line in lines if line.startswith(where)]
    assert warning.rstrip().endswith("unstable declaration")


@_SETTINGS
@given(_WIDTHS)
def test_the_stop_line_of_a_run_is_one_line_at_any_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    usages = [Usage.openai(120, 5, cached_tokens=48), None]
    stop = _replay_run(tmp_path, usages)  # the one line starting "stop:"
    assert "prompt 120 over 1 of 2 steps" in stop
    assert "cached 48 over 1 of 2 steps (40.0%)" in stop
