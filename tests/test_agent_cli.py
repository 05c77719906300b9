"""``regio run`` against a loopback server with canned answers (offline)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chat_server_support import chat_answer, write_blueprint
from regio.cli import main

ANSWER = chat_answer(
    {
        "prompt_tokens": 321,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 256},
    },
    timings={"cache_n": 256, "prompt_n": 65, "prompt_ms": 12.5},
)


@pytest.fixture
def server_url(chat_server: Callable[[dict[str, Any]], str]) -> str:
    return chat_server(ANSWER)


@pytest.fixture
def blueprint(tmp_path: Path) -> str:
    return str(write_blueprint(tmp_path))


def test_regio_run_prints_the_server_cache_and_the_prediction_per_step(
    blueprint, server_url, capsys
):
    pytest.importorskip("openai", reason="the openai SDK is not installed")
    status = main(
        [
            "run",
            blueprint,
            "--base-url",
            server_url,
            "--model",
            "m",
            "--task",
            "Say hello",
            "--predict",
            "profile",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "321" in out and "256" in out and "12.5" in out
    assert "final_answer" in out and "Hello there." in out


def test_regio_run_without_a_base_url_is_an_input_error(blueprint, capsys):
    status = main(["run", blueprint, "--provider", "openai-compatible", "--task", "x"])
    assert status == 2
    assert "--base-url" in capsys.readouterr().err


def test_regio_run_with_a_broken_blueprint_is_an_input_error(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nregions: 3\n", encoding="utf-8")
    assert main(["run", str(bad), "--base-url", "http://127.0.0.1:9/v1", "--task", "x"]) == 2
