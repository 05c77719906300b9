"""The bench's registries and what the docs and the CLI say about them: every peer named where
the strategies are documented, one allowance for every peer, the default cache models."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from _bench_fixtures import tiny_blueprint
from regio.bench.cli import examples_dir
from regio.bench.peers import PEERS, peer_allowance, peer_available
from regio.bench.pressure import scale_blueprint
from regio.bench.replay import ALL_LAYOUTS, replay
from regio.bench.run import DEFAULT_CACHE_MODELS
from regio.cli import main
from regio.content import Text, ToolResult, ToolUse
from regio.providers import cache_model_for
from regio.tokens import chat_format_for_model, get_counter
from regio.traces.format import (
    AssistantMessage,
    Header,
    SystemPrompt,
    ToolResults,
    Trace,
    UserMessage,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmark.md"


@pytest.mark.parametrize("peer", PEERS)
def test_every_registered_peer_is_named_in_the_replay_module_doc(peer: str) -> None:
    # ``regio.bench.replay`` the attribute is the function; the module is in sys.modules
    module = importlib.import_module("regio.bench.replay")
    assert f"``{peer}``" in (module.__doc__ or "")


@pytest.mark.parametrize("strategy", ALL_LAYOUTS)
def test_every_selectable_strategy_is_documented_in_the_benchmark_doc(strategy: str) -> None:
    assert f"`{strategy}`" in DOCS.read_text(encoding="utf-8")


def _trace_with_result_of(words: int) -> Trace:
    events = [
        SystemPrompt(0.0, "Be careful. " * 40),
        UserMessage(0.0, (Text("Fix the bug."),)),
        AssistantMessage(1.0, (ToolUse("c1", "cat", {"path": "a.py"}),)),
        ToolResults(2.0, (ToolResult("c1", "line " * words),)),
        AssistantMessage(3.0, (Text("Done."),)),
    ]
    return Trace(Header(id="tiny/allowance", source_format="regio"), tuple(events))


@pytest.mark.skipif(not peer_available("trim"), reason="langchain-core (extra 'bench') missing")
def test_the_oversize_note_names_the_allowance_the_peers_keep_inside() -> None:
    window = 4000
    bp = scale_blueprint(tiny_blueprint(), window)
    counter = get_counter(bp.tokenizer, chat_format=chat_format_for_model(bp.model.name))
    allowance = bp.window_tokens - counter.count("Be careful. " * 40)
    assert peer_allowance(bp.window_tokens, counter.count("Be careful. " * 40), 0) == allowance
    out = replay(
        _trace_with_result_of(3 * allowance),
        tiny_blueprint(),
        layouts=("recorded", "trim"),
        window_tokens=window,
    )
    skipped = [n for n in out.notes if "peers' conversation allowance" in n]
    assert skipped and re.search(rf"\({allowance} tokens\)", skipped[0]), out.notes
    # the message the peers skipped is not in any of their requests; the recorded ones keep it
    assert max(r.blocks[-1].tokens for r in out.requests["recorded"]) > allowance
    assert all(sum(b.tokens for b in r.blocks) <= window for r in out.requests["trim"])


def test_the_default_cache_models_are_priced_current_models() -> None:
    assert DEFAULT_CACHE_MODELS == ("anthropic:claude-sonnet-4-6", "openai:gpt-5")
    for name in DEFAULT_CACHE_MODELS:
        assert cache_model_for(name).rule.price.input is not None, name


def test_gpt_4o_stays_selectable_as_a_cache_model() -> None:
    assert cache_model_for("openai:gpt-4o").rule.id.startswith("openai/gpt-4o")


def test_the_cli_help_names_the_default_cache_models(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "openai:gpt-5" in text and "default anthropic:claude-sonnet-4-6,openai:gpt-5" in text


def test_the_readme_and_the_benchmark_doc_name_the_default_openai_model() -> None:
    readme = (examples_dir().parent / "README.md").read_text(encoding="utf-8")
    assert "OpenAI (GPT-5) cache simulators" in readme
    assert "`openai:gpt-5`" in DOCS.read_text(encoding="utf-8")
