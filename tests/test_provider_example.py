"""A provider added in one module (``tests/gemini_native.py``, the worked example of
docs/architecture.md, "A new provider: one module") works end to end: a blueprint names it, the
engine lays requests out for it and renders its payload, reads its responses and usage, counts
its tool definitions and message framing as it declares them, and the layout and the cache
simulator use its cache rule."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

import gemini_native
from regio.agent import ProviderResponseError
from regio.engine import Engine
from regio.errors import SDKInputError
from regio.layout import ToolSpec
from regio.providers import (
    cache_model_for,
    economics_for,
    find_provider,
    provider_for,
    register_provider,
    registry,
)

ROOT = Path(__file__).resolve().parents[1]

BLUEPRINT = """
version: 1
name: gemini-example
model: {provider: gemini, name: gemini-2.5-flash, context_window: 50000, max_output_tokens: 1000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, seed: "You help."}
  - {name: conversation, kind: sliding_window, budget: "80%"}
"""

LS = ToolSpec(
    "ls",
    "List the files of a directory.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)

USAGE = {"promptTokenCount": 2100, "cachedContentTokenCount": 2048, "candidatesTokenCount": 12}
CALL = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Looking first.", "thought": True},
                    {"functionCall": {"id": "c1", "name": "ls", "args": {"path": "."}}},
                ],
            },
            "finishReason": "STOP",
        }
    ],
    "usageMetadata": USAGE,
}


@pytest.fixture(autouse=True)
def _the_example_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's registration, whatever ran since it was imported (the docs test runs the
    same code and registers its own copy)."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_provider(gemini_native.GEMINI)


def _engine() -> Engine:
    return Engine.from_blueprint(BLUEPRINT)


def test_the_docs_show_the_example_module_as_it_is_tested() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("### A new provider: one module", 1)[1]
    code = re.search(r"```python\n(.*?)^```", section, re.S | re.M)
    assert code is not None
    module = Path(gemini_native.__file__).read_text(encoding="utf-8")
    assert code.group(1) == module


def test_a_provider_added_in_one_module_is_found_by_name_with_every_part() -> None:
    gemini = provider_for("gemini")
    assert gemini is gemini_native.GEMINI and find_provider("GEMINI") is gemini
    assert gemini.api == "gemini_generate"
    engine = _engine()
    assert engine.budget.counter.overhead == gemini.chat_overhead  # its chat format counts


def test_a_provider_added_in_one_module_drives_blueprint_request_and_payload() -> None:
    engine = _engine()
    engine.add_user("List the files.")
    first, payload = engine.request("gemini", tools=[LS])
    assert payload["contents"] == [{"role": "user", "parts": [{"text": "List the files."}]}]
    assert payload["systemInstruction"]["parts"][0]["text"].endswith("You help.")
    assert payload["tools"] == [{"functionDeclarations": [gemini_native.declaration(LS)]}]
    assert payload["generationConfig"] == {"maxOutputTokens": 1000}  # the output reserve
    assert first.min_cache_tokens == 2048  # the google rule of gemini-2.5-flash, not Anthropic's

    engine.add_response(CALL, observe=True)
    record = engine.ledger.last
    assert record is not None and record.api == "gemini"
    assert (record.cache_read_tokens, record.uncached_tokens, record.output_tokens) == (
        2048,
        52,
        12,
    )
    engine.add_tool_result("c1", "a.txt\nb.txt")
    _, payload = engine.request("gemini", tools=[LS])
    assert payload["contents"][1:] == [
        {
            "role": "model",
            "parts": [{"functionCall": {"id": "c1", "name": "ls", "args": {"path": "."}}}],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "ls",
                        "response": {"output": "a.txt\nb.txt"},
                    }
                }
            ],
        },
    ]
    assert provider_for("gemini").renderer.check(payload) == []


def test_the_example_tools_are_counted_as_declared_and_its_cache_rule_is_used() -> None:
    engine = _engine()
    gemini = provider_for("gemini")
    specs = engine.budget.tool_specs([LS])
    count = engine.budget.count_text
    declared = sum(count(msgspec.json.encode(gemini_native.declaration(t)).decode()) for t in specs)
    assert engine.budget.tools_tokens([LS], "gemini") == declared  # no hidden framing declared
    econ = economics_for("gemini", "gemini-2.5-flash")
    assert econ.min_cache_tokens == gemini.cache_rule.resolve("gemini-2.5-flash").min_tokens
    model = cache_model_for("gemini:gemini-2.5-flash")
    assert model.rule.provider == "google" and model.rule.mechanism == "auto_prefix"


def test_the_example_reads_whole_responses_and_names_itself_in_errors() -> None:
    engine = _engine()
    engine.add_user("hi")
    engine.request("gemini")
    record = engine.observe(CALL)  # a whole response: its usageMetadata
    assert record.prompt_tokens == 2100 and record.cache_read_tokens == 2048
    with pytest.raises(SDKInputError, match="a generateContent response"):
        engine.add_response({"nothing": []})
    bad: dict[str, Any] = {"candidates": [{"content": {"parts": [{"functionCall": {}}]}}]}
    with pytest.raises(ProviderResponseError, match=r"parts\[0\].functionCall has no name"):
        engine.add_response(bad)
    assert len(engine.window.region("conversation").entries) == 1  # nothing stored from either
