"""`regio traces import` and `regio traces show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regio.cli import main
from regio.traces import bundled_traces_dir, read_trace


def test_import_writes_one_trace_file_per_run_and_prints_a_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    src = bundled_traces_dir() / "tau-bench"
    assert main(["traces", "import", str(src), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 40
    assert lines[0].startswith(
        "tau-bench/gpt-4o-airline.first40#0  [tau-bench]  messages=31  tool_calls=8  issues=2"
    )
    files = sorted(out.glob("*.jsonl"))
    assert len(files) == 40
    trace = read_trace(out / "tau-bench__gpt-4o-airline.first40-0.jsonl")
    assert trace.id == "tau-bench/gpt-4o-airline.first40#0"


def test_import_of_the_whole_bundle_reports_every_trace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["traces", "import", str(bundled_traces_dir())]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 47  # 7 single-run files + 40 runs


def test_verbose_import_prints_each_issue_with_file_record_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "chat.json"
    src.write_text(json.dumps([{"role": "user", "content": "hi"}, {"content": "x"}]))
    assert main(["traces", "import", str(src), "-v"]) == 0
    out = capsys.readouterr().out
    assert f"{src}[1] role: error: message has no role" in out


def test_import_exits_2_when_nothing_was_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"nothing": true}')
    assert main(["traces", "import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: cannot tell the trace format" in err
    assert "nothing was imported" in err
    assert main(["traces", "import", str(tmp_path / "missing.json")]) == 2


def test_import_honours_a_forced_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = bundled_traces_dir() / "mini-swe-agent" / "local.traj.json"
    assert main(["traces", "import", str(src), "--format", "openai"]) == 0
    assert capsys.readouterr().out.startswith("openai/local  [openai]  messages=5")


def test_show_summarizes_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = bundled_traces_dir() / "swe-agent" / "function_calling_simple.traj"
    assert main(["traces", "import", str(src), "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["traces", "show", str(tmp_path / "swe-agent__function_calling_simple.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "events     12  (system=1  user=1  assistant=5  tool_results=5)" in out
    assert "messages   11" in out
    assert "tool calls 5" in out
    assert "append-only yes" in out
    assert "problems   0" in out


def test_show_exits_2_on_a_file_that_is_not_a_regio_trace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    src = bundled_traces_dir() / "swe-agent" / "function_calling_simple.traj"
    assert main(["traces", "show", str(src)]) == 2
    assert "regio traces import" in capsys.readouterr().err
