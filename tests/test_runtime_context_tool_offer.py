"""Which context tools an engine offers (``EngineOptions.context_tools``, blueprint
``tools.context``): offered schemas are sent with every request, tools not offered are refused
as text, and a window with nothing agent-writable offers none by default."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.session._options import TOOL_NAMES, EngineOptions

#: ``context_restore`` applies only to an engine with the relief chain (tests/test_relief_*.py).
WITHOUT_RELIEF = [n for n in TOOL_NAMES if n != "context_restore"]

WRITABLE = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000}
tools: {context: %s}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: "Be brief."}
  - {name: notes, kind: keyed, budget: 500}
  - {name: plan, kind: checklist, budget: 500}
  - {name: conversation, kind: sliding_window, budget: 4000}
"""

READ_ONLY = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 500, seed: "Be brief."}
  - {name: conversation, kind: sliding_window, budget: 4000}
"""


def _engine(text: str, **overrides: object) -> Engine:
    return Engine.from_blueprint(text, **overrides)


def test_default_offers_every_applicable_tool_when_a_region_is_writable() -> None:
    names = [t.name for t in _engine(WRITABLE % "auto").tools()]
    assert names == WITHOUT_RELIEF


def test_default_offers_no_tool_when_no_region_is_writable() -> None:
    engine = _engine(READ_ONLY)
    assert engine.tools() == []
    assert engine.budget.tools_tokens() == 0


def test_all_offers_the_read_tools_without_a_writable_region() -> None:
    names = [t.name for t in _engine(READ_ONLY, context_tools="all").tools()]
    assert names == ["context_read", "context_delete", "context_list", "compact"]


def test_none_sends_no_schema_and_refuses_a_call_as_text() -> None:
    engine = _engine(WRITABLE % "none")
    assert engine.tools() == []
    out = engine.handle_tool_call("context_write", {"region": "notes", "text": "x", "key": "k"})
    assert not out.ok
    assert "not offered" in out.text and "tools.context" in out.text
    assert engine.window.region("notes").entries == []


def test_unknown_context_tool_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown context tool"):
        EngineOptions(context_tools=("context_write", "context_wrtie"))


def test_unknown_context_tool_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="auto, all, none"):
        EngineOptions(context_tools="some")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(TOOL_NAMES), unique=True))
def test_named_offer_sends_exactly_those_tools_and_accepts_only_them(chosen: list[str]) -> None:
    engine = _engine(WRITABLE % "auto", context_tools=tuple(chosen))
    offered = [t.name for t in engine.tools()]
    assert offered == [n for n in WITHOUT_RELIEF if n in chosen]
    assert [t.name for t in engine.tool_specs()] == offered
    if "context_list" not in chosen:
        out = engine.handle_tool_call("context_list", {})
        assert not out.ok and "not offered" in out.text
    else:
        assert engine.handle_tool_call("context_list", {}).ok


def test_blueprint_heading_false_sends_the_region_text_without_a_heading() -> None:
    text = READ_ONLY.replace('seed: "Be brief."', 'seed: "Be brief.", heading: false')
    assert _engine(text).window.region("system").render_text() == "Be brief."
    assert _engine(READ_ONLY).window.region("system").render_text() == "## system\nBe brief."
