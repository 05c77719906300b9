"""By default (``--summarizer offline``) the proxy writes every summary with the offline
extractive summarizer; a blueprint that names a summarizer model gets a warning at start naming
that model, what runs instead and how to have the model write them (``--summarizer upstream``,
which starts without the warning) (user report: ``examples/blueprints/coding-agent.yaml`` names
``claude-haiku-4-5`` with no provider and the proxy said nothing)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

from regio import ExtractiveSummarizer
from regio.blueprint import load_blueprint
from regio.proxy import ProxyConfig
from regio.proxy.engines import EngineFactory
from regio.proxy.state import ProxyState

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"


def _started(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, blueprint: object, mode: str = "offline"
) -> list[str]:
    caplog.set_level(logging.WARNING, logger="regio.proxy")
    store = f"sqlite:{tmp_path}/p.db"
    config = ProxyConfig(blueprint, "http://upstream.test", store=store, summarizer=mode)  # type: ignore[arg-type]
    ProxyState.build(config)
    return [r.getMessage() for r in caplog.records if r.name == "regio.proxy"]


def test_a_blueprint_naming_a_summarizer_model_is_warned_at_start_that_it_is_not_called(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (message,) = [m for m in _started(tmp_path, caplog, EXAMPLE) if "summar" in m]
    assert "'claude-haiku-4-5' is not called" in message
    assert "offline extractive summarizer" in message
    assert "--summarizer upstream" in message and "client's own key" in message


def test_a_proxy_whose_upstream_writes_the_summaries_starts_without_the_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert not [m for m in _started(tmp_path, caplog, EXAMPLE, "upstream") if "summar" in m]


def test_the_proxy_really_summarizes_offline_whatever_model_the_blueprint_names() -> None:
    factory = EngineFactory(load_blueprint(EXAMPLE))
    engine = factory.new("s1")
    assert type(engine.summarizer) is ExtractiveSummarizer
    assert getattr(engine.summarizer, "model", None) is None


def test_an_llm_summarizer_provider_is_warned_with_the_model_it_would_call() -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "  model: claude-haiku-4-5 ", "  provider: anthropic\n  model: claude-haiku-4-5 "
    )
    warning = EngineFactory(load_blueprint(text)).summarizer_warning
    assert warning is not None
    assert "summarizer.provider 'anthropic' (model 'claude-haiku-4-5') is not called" in warning


def test_a_blueprint_without_a_summarizer_model_starts_without_the_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace("  model: claude-haiku-4-5 ", "  # ")
    assert not [m for m in _started(tmp_path, caplog, text) if "summar" in m]
