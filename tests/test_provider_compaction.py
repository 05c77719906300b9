"""Delegating compaction to the provider: the renderers' ``compaction`` option (Anthropic's
``compact_20260112`` edit, OpenAI Responses' ``context_management`` compaction entry, the
provider's block / item in place of regio's readable summary) and the engine's
``delegate_compaction`` / ``adopt_compaction`` (a readable summary kept beside the item, the
readable one for every other API, both kept across save and load)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from regio.blueprint import load_blueprint
from regio.compaction._delegation import ProviderCompactionError
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout.provider_compaction import (
    ProviderCompaction,
    add_anthropic_edit,
    add_responses_entry,
)

BLUEPRINT = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"
ITEM = {"type": "compaction", "content": "<summary>parser.py fixed; tests pass</summary>"}
OPENAI_ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA..."}


def test_the_anthropic_edit_joins_the_context_editing_edits() -> None:
    payload: dict[str, Any] = {
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}
    }
    add_anthropic_edit(payload, 60_000)
    add_anthropic_edit(payload, 70_000)  # one compaction edit, the last trigger
    assert payload["context_management"]["edits"] == [
        {"type": "clear_tool_uses_20250919"},
        {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 70_000}},
    ]


def test_the_responses_entry_is_the_documented_one() -> None:
    payload: dict[str, Any] = {}
    add_responses_entry(payload, 200_000)
    assert payload["context_management"] == [{"type": "compaction", "compact_threshold": 200_000}]


def test_a_trigger_below_one_token_is_refused() -> None:
    with pytest.raises(ValueError, match="trigger must be >= 1"):
        ProviderCompaction(0)


def _engine(**options: Any) -> Engine:
    engine = Engine.from_blueprint(load_blueprint(BLUEPRINT), **options)
    engine.add_message(Message.user("Fix the bug in parser.py"))
    engine.add_message(Message.assistant("Reading.", [ToolUse("c1", "cat", {"f": "parser.py"})]))
    engine.add_message(Message.tool((ToolResult("c1", "def parse(): pass\n" * 20),)))
    return engine


def _after_adoption(engine: Engine, api: str, item: dict[str, Any]) -> Engine:
    assert engine.adopt_compaction(api, item) is not None
    engine.add_message(Message.assistant("Next.", [ToolUse("c2", "cat", {"f": "x.py"})]))
    engine.add_message(Message.tool((ToolResult("c2", "x = 1"),)))
    return engine


def test_a_delegating_engine_asks_each_provider_for_its_compaction() -> None:
    engine = _engine(delegate_compaction=60_000)
    _, anthropic = engine.request("anthropic", "claude-sonnet-4-6")
    assert anthropic["context_management"] == {
        "edits": [
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60_000}}
        ]
    }
    _, responses = engine.request("openai", "gpt-5", api="openai_responses")
    assert responses["context_management"] == [{"type": "compaction", "compact_threshold": 60_000}]
    with pytest.raises(ProviderCompactionError, match=r"'openai_chat'.*openai_responses"):
        engine.request("openai", "gpt-5")


def test_an_engine_that_does_not_delegate_sends_no_compaction_field() -> None:
    _, payload = _engine().request("anthropic", "claude-sonnet-4-6")
    assert "context_management" not in payload


def test_the_adopted_block_opens_the_next_anthropic_request_and_nothing_precedes_it() -> None:
    engine = _after_adoption(_engine(delegate_compaction=60_000), "anthropic", ITEM)
    _, payload = engine.request("anthropic", "claude-sonnet-4-6")
    first, second = payload["messages"][:2]
    assert first["role"] == "assistant"
    assert first["content"][0] == ITEM  # the block where the API put it, then the response
    assert [b["type"] for b in first["content"][1:]] == ["text", "tool_use"]
    assert second["content"][0] == {"type": "tool_result", "tool_use_id": "c2", "content": "x = 1"}
    text = str(payload["messages"])
    assert "Fix the bug" not in text and "summary of earlier context" not in text


def test_the_adopted_block_carries_the_marker_its_summary_message_had() -> None:
    """The summaries' own marker (``history``) sits on the message the provider's block
    replaces; the block carries it (``cache_control`` is allowed on a compaction block), so
    the slot is not lost and the bench's simulation is what the API receives."""
    engine = _engine(delegate_compaction=60_000)
    engine.write("system", " ".join(f"rule{i}" for i in range(1500)))  # a prefix to mark
    engine = _after_adoption(engine, "anthropic", ITEM)
    req, payload = engine.request("anthropic", "claude-sonnet-4-6")
    assert "history" in {m.slot for m in req.breakpoints}
    block = payload["messages"][0]["content"][0]
    assert block == {**ITEM, "cache_control": {"type": "ephemeral", "ttl": "5m"}}
    assert "cache_control" not in ITEM  # the payload's copy, not the stored item
    _, again = engine.request("anthropic", "claude-sonnet-4-6")
    assert again["messages"][0]["content"][0] == block  # the same bytes on the next request
    marks = sum("cache_control" in c for m in payload["messages"] for c in m["content"])
    marks += sum("cache_control" in b for b in payload.get("system", []))
    assert marks == len(req.breakpoints) <= 4


def test_a_marker_the_adopted_item_came_with_is_never_sent() -> None:
    """Only the layout's markers are sent: a ``cache_control`` stored with the provider's
    block (a 1h one here) is left out, so it can never be a fifth marker or a 1h marker
    after a 5m one."""
    marked = {**ITEM, "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    engine = _after_adoption(_engine(delegate_compaction=60_000), "anthropic", marked)
    req, payload = engine.request("anthropic", "claude-sonnet-4-6")
    block = payload["messages"][0]["content"][0]
    history = [m for m in req.breakpoints if m.slot == "history"]
    assert block.get("cache_control") == (
        {"type": "ephemeral", "ttl": history[0].ttl} if history else None
    )
    marks = sum("cache_control" in c for m in payload["messages"] for c in m["content"])
    marks += sum("cache_control" in b for b in payload.get("system", []))
    assert marks == len(req.breakpoints)


def test_another_api_gets_the_readable_summary_of_the_same_span() -> None:
    engine = _after_adoption(_engine(delegate_compaction=60_000), "anthropic", ITEM)
    _, payload = engine.request("openai", "gpt-5", api="openai_responses")
    rendered = str(payload["input"])
    assert "compaction" not in rendered.replace("context_management", "")
    assert "summary of earlier context" in rendered and "cat" in rendered


def test_the_openai_item_opens_the_responses_input() -> None:
    engine = _after_adoption(_engine(delegate_compaction=60_000), "openai_responses", OPENAI_ITEM)
    _, payload = engine.request("openai", "gpt-5", api="openai_responses")
    assert payload["input"][0] == OPENAI_ITEM
    assert payload["input"][1] == {"role": "assistant", "content": "Next."}
    _, anthropic = engine.request("anthropic", "claude-sonnet-4-6")
    assert "summary of earlier context" in str(anthropic["messages"])


def test_the_item_survives_save_and_load(tmp_path: Path) -> None:
    engine = _after_adoption(_engine(delegate_compaction=60_000), "anthropic", ITEM)
    _, before = engine.request("anthropic", "claude-sonnet-4-6")
    engine.save(tmp_path / "s.json")
    _, after = Engine.load(tmp_path / "s.json").request("anthropic", "claude-sonnet-4-6")
    assert after["messages"] == before["messages"]


def test_an_item_that_is_not_a_compaction_is_refused_with_nothing_changed() -> None:
    engine = _engine(delegate_compaction=60_000)
    _, before = engine.request("anthropic", "claude-sonnet-4-6")
    with pytest.raises(ProviderCompactionError, match="type 'compaction'"):
        engine.adopt_compaction("anthropic", {"type": "text", "text": "hi"})
    with pytest.raises(ProviderCompactionError, match="no server-side compaction"):
        engine.adopt_compaction("openai_chat", ITEM)
    _, again = engine.request("anthropic", "claude-sonnet-4-6")
    assert again["messages"] == before["messages"]


def test_the_agent_loop_hands_the_providers_block_to_the_engine_and_sends_it_back() -> None:
    """In the framework's own loop, with a scripted Anthropic provider: every request asks for
    compaction; the call whose response carries a compaction block is followed by requests
    that open with that block, where the API put it, and nothing before it."""
    import msgspec

    from regio.agent import AgentLoop, ScriptedProvider, Tool, reply

    look = Tool(
        "look",
        "Look at a file.",
        {"type": "object", "properties": {"f": {"type": "string"}}, "required": ["f"]},
        lambda f: f"{f}: " + "line of code\n" * 40,
    )
    second = reply("Compacted; reading b.", [("c2", "look", {"f": "b.py"})])
    raw = {
        "content": [
            ITEM,
            {"type": "text", "text": "Compacted; reading b."},
            {"type": "tool_use", "id": "c2", "name": "look", "input": {"f": "b.py"}},
        ]
    }
    script = [
        reply("Reading a.", [("c1", "look", {"f": "a.py"})]),
        msgspec.structs.replace(second, raw=raw),
        reply("Done."),
    ]
    provider = ScriptedProvider(script, api="anthropic")
    engine = Engine.from_blueprint(load_blueprint(BLUEPRINT), delegate_compaction=60_000)
    result = AgentLoop(engine, provider, [look]).run("Fix the bug in a.py and b.py")
    assert result.final_text == "Done."
    for payload in provider.calls:
        edits = payload["context_management"]["edits"]
        assert edits[-1]["type"] == "compact_20260112"
    first, *_ = provider.calls[2]["messages"]
    assert first["role"] == "assistant" and first["content"][0] == ITEM
    assert [b["type"] for b in first["content"][1:]] == ["text", "tool_use"]
    assert "Fix the bug" not in str(provider.calls[2]["messages"])


def test_the_item_survives_an_incremental_store_save(tmp_path: Path) -> None:
    """The session store's save writes what changed since its last save (its memo knows
    entries by identity): an adoption between two saves is kept, on the one window entry that
    carries it."""
    from regio.persistence.store import SQLiteStore

    store = SQLiteStore(tmp_path / "s.db")
    engine = _engine(delegate_compaction=60_000)
    engine.save_to(store, "s", create=True)
    engine.adopt_compaction("anthropic", ITEM)
    carrying = [
        e for r in engine.window.regions for e in r.entries if "provider_compaction" in e.meta
    ]
    assert len(carrying) == 1
    engine.save_to(store, "s")
    _, before = engine.request("anthropic", "claude-sonnet-4-6")
    _, after = Engine.load_from(store, "s").request("anthropic", "claude-sonnet-4-6")
    assert after["messages"][0]["content"][0] == ITEM
    assert after["messages"] == before["messages"]
