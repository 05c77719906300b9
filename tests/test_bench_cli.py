"""``regio bench`` and ``regio demo``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regio.bench.cli import examples_dir
from regio.bench.peers import PEERS, peer_available
from regio.bench.replay import ALL_LAYOUTS
from regio.cli import main

ROOT = examples_dir()


def _needs_peers(*names: str) -> None:
    """Skip unless every named peer's package (extra 'bench') is installed."""
    missing = [name for name in names if name in PEERS and not peer_available(name)]
    if missing:
        pytest.skip(f"the bench extra is not installed: no package for {', '.join(missing)}")


def test_bench_writes_the_json_report_and_the_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _needs_peers("trim")
    pytest.importorskip(
        "matplotlib", reason="matplotlib (extra 'bench', the plot) is not installed"
    )
    trace = ROOT / "traces" / "swe-agent" / "function_calling_simple.traj"
    status = main(
        [
            "bench",
            "--trace",
            str(trace),
            "--blueprint",
            str(ROOT / "blueprints" / "coding-agent.yaml"),
            "--layouts",
            "kind,regio,trim",
            "--cache",
            "anthropic:claude-sonnet-4-5,vllm",
            "--json",
            str(tmp_path / "r.json"),
            "--plot",
            str(tmp_path / "r.png"),
        ]
    )
    assert status == 0
    data = json.loads((tmp_path / "r.json").read_text())
    model = data["traces"][0]["models"][1]
    assert model["cache_model"] == "vllm"
    assert [x["layout"] for x in model["layouts"]] == ["kind", "regio", "trim"]
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "regio" in capsys.readouterr().out


def test_bench_refuses_an_unknown_layout(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "bench",
            "--trace",
            str(ROOT / "traces" / "mini-swe-agent"),
            "--blueprint",
            str(ROOT / "blueprints" / "coding-agent.yaml"),
            "--layouts",
            "regio,best",
        ]
    )
    assert status == 2
    assert "best" in capsys.readouterr().err


def test_bench_refuses_an_unknown_cache_model(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "bench",
            "--trace",
            str(ROOT / "traces" / "mini-swe-agent"),
            "--blueprint",
            str(ROOT / "blueprints" / "coding-agent.yaml"),
            "--cache",
            "acme:x1",
        ]
    )
    assert status == 2
    assert "acme" in capsys.readouterr().err


def test_demo_benches_every_bundled_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _needs_peers(*ALL_LAYOUTS)
    pytest.importorskip(
        "matplotlib", reason="matplotlib (extra 'bench', the plot) is not installed"
    )
    assert main(["demo", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "demo.json").read_text())
    assert len(data["traces"]) == 47
    assert {t["blueprint"] for t in data["traces"]} == {"coding-agent", "support-agent"}
    assert (tmp_path / "demo.png").exists()
    assert "all 47 traces" in capsys.readouterr().out


def test_examples_dir_names_the_fix_when_absent(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="run from a clone"):
        examples_dir(tmp_path / "pkg" / "module.py")
