"""The renderer seam and the strategy and provider tables: a renderer added as one module
(the docs' example) is used by the engine; unknown names fail with the known ones listed."""

from __future__ import annotations

import json
import re
import types
from pathlib import Path
from typing import Any

import pytest

from regio.engine import Engine
from regio.layout import (
    LayoutError,
    kind_rank,
    renderer_for,
    renderers,
    strategy_for,
)
from regio.layout.strategy import REGIO
from regio.providers import economics_for, providers
from regio.regions.base import declared_kinds
from regio.session._render import api_for
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter

ROOT = Path(__file__).resolve().parents[1]

BLUEPRINT = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 50000,
        max_output_tokens: 1000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, seed: "You help."}
  - {name: conversation, kind: sliding_window, budget: "80%"}
"""


def _docs_renderer() -> types.ModuleType:
    """The "Adding a renderer" example of docs/layout.md, imported as its own module."""
    page = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    section = page.split("## Adding a renderer", 1)[1]
    code = re.search(r"```python\n(.*?)^```", section, re.S | re.M)
    assert code is not None
    module = types.ModuleType("ndjson_renderer")
    exec(compile(code.group(1), "ndjson_renderer.py", "exec"), module.__dict__)
    return module


def test_a_renderer_added_as_one_module_is_used_by_the_engine() -> None:
    _docs_renderer()
    assert "ndjson" in renderers()
    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        BLUEPRINT, token_counter=counter, summarizer=ExtractiveSummarizer(counter=counter)
    )
    payloads: list[dict[str, Any]] = []
    for i in range(3):
        if i:
            engine.add_assistant(f"answer {i - 1}")
        engine.add_user(f"question {i}")
        payloads.append(engine.request("anthropic", "m", api="ndjson")[1])
    lines = payloads[-1]["lines"]
    assert lines[0] == {"role": "system", "text": "## system\nYou help."}
    assert [x["text"] for x in lines[1:]] == [
        "question 0",
        "answer 0",
        "question 1",
        "answer 1",
        "question 2",
    ]
    before = json.dumps(payloads[-1])
    payloads[-1]["lines"][1]["text"] = "edited"  # the caller's: the next one is unchanged
    assert json.dumps(engine.request("anthropic", "m", api="ndjson")[1]) == before


def test_an_unknown_api_names_the_registered_ones() -> None:
    with pytest.raises(LayoutError, match="registered: anthropic, openai_chat"):
        renderer_for("smoke-signals")
    with pytest.raises(ValueError, match="or pass api= one of anthropic"):
        api_for("nobody")


def test_every_provider_speaks_a_registered_api() -> None:
    for provider in providers():
        assert renderer_for(provider.api).api == provider.api
        assert api_for(provider.name) == provider.api


def test_cache_economics_come_from_the_provider_rule_with_documented_defaults() -> None:
    anthropic = economics_for("anthropic", "claude-sonnet-4-5")
    assert anthropic.min_cache_tokens == 1024
    assert abs(anthropic.gc_ratio - (1.25 - 0.1) / 0.1) < 1e-9
    assert abs(economics_for("openai", "gpt-4o").gc_ratio - 1.0) < 1e-9
    assert economics_for("nobody", "nothing") == economics_for(None, None)


def test_strategies_are_objects_found_by_name() -> None:
    assert strategy_for("regio") is REGIO
    assert strategy_for(REGIO) is REGIO
    for name in ("naive", "kind", "volatility"):  # the bench's comparison layouts
        found = strategy_for(name)
        assert found.name == name
        assert type(found).__module__ == "regio.layout.comparison"
    with pytest.raises(LayoutError, match="use one of naive, kind, volatility, regio"):
        strategy_for("chaos")


class _Ranked:
    kind = "pinned"
    kind_rank = 7


class _Plain:
    kind = "temporary"


def test_the_kind_order_is_the_rank_each_kind_declares() -> None:
    assert kind_rank(_Ranked()) == 7
    assert kind_rank(_Plain()) == 1  # no declared rank: the middle, whatever its kind string
    for cls in declared_kinds().values():
        assert kind_rank(cls.__new__(cls)) == cls.kind_rank
