"""Text is checked once where the engine admits it: a lone UTF-16 surrogate (no UTF-8
encoding exists) admitted through any entry point used to brick the session (every later
``request()`` and ``save()`` raised ``UnicodeEncodeError``). Now lone surrogates become U+FFFD
and pairs are joined, with a ``text_repaired`` event, before anything is stored; declarations
(blueprints, tool definitions) refuse them naming the place.

Property: every text admitted through every entry point renders for each API and saves and
loads (``REGIO_FUZZ_EXAMPLES`` examples per entry point; 20 in CI).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutation_support import hostile_text
from regio.blueprint import BlueprintError, load_blueprint
from regio.callids import provider_id
from regio.content import ContentTypeError, Entry, Text, Thinking, ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from regio.sdk._objects import SDKInputError
from regio.textrepair import repair_text

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "20"))

BLUEPRINT = load_blueprint(
    """
version: 1
name: admission
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
tools: {context: all}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be brief."}
  - {name: facts, kind: keyed, budget: 4000}
  - {name: plan, kind: checklist, budget: 2000}
  - {name: notes, kind: compacting, budget: 4000}
  - {name: notes_history, kind: compact_history, source: notes, budget: 2000}
  - {name: conversation, kind: sliding_window, budget: 20000}
"""
)

#: Text a tool read from a directory listing whose file name is not UTF-8
#: (``os.listdir`` decodes it with ``surrogateescape``).
LISTING = "ls:\n" + b"caf\xe9.txt".decode("utf-8", "surrogateescape")


def engine() -> Engine:
    out = Engine.from_blueprint(BLUEPRINT)
    out.add_user("Start.")
    return out


def renders_and_saves(e: Engine) -> None:
    for provider in ("anthropic", "openai", "openai_responses"):
        e.request(provider)
    with tempfile.TemporaryDirectory() as tmp:
        restored = Engine.load(e.save(Path(tmp) / "state.json"))
        assert restored.request()[1] == e.request()[1]


def repaired_events(e: Engine) -> list[Any]:
    return e.events.of_kind("text_repaired")


def stored_texts(e: Engine) -> str:
    return "\n".join(entry.text for r in e.window.regions for entry in r.entries)


# ----- the reproduction: one character used to brick a session -------------------------------
def test_a_lone_surrogate_in_a_user_message_is_replaced_and_the_session_still_saves() -> None:
    e = engine()
    entry = e.add_user("bad \ud800")
    assert entry.text == "bad \ufffd"
    (event,) = repaired_events(e)
    assert (event.where, event.places, event.position, event.replaced) == (
        "add_message",
        ("blocks[0].text",),
        4,
        1,
    )
    renders_and_saves(e)


def test_a_tool_result_decoded_with_surrogateescape_is_admitted_repaired() -> None:
    e = engine()
    e.add_assistant("", [ToolUse("c1", "ls", {})])
    entry = e.add_tool_result("c1", LISTING)
    assert entry.blocks[0].content == "ls:\ncaf\ufffd.txt"
    renders_and_saves(e)


def test_json_tool_arguments_holding_a_surrogate_escape_are_repaired_in_keys_and_values() -> None:
    e = engine()
    args = json.loads('{"p\\ud800": ["\\udcff", {"k": "\\ud83d\\ude00 ok"}]}')
    entry = e.add_assistant("", [ToolUse("c\udc80", "read", args)])
    (call,) = entry.message.tool_calls
    assert call.id == provider_id("c\ufffd")  # repaired text, then an id every provider takes
    assert call.input == {"p\ufffd": ["\ufffd", {"k": "\U0001f600 ok"}]}
    renders_and_saves(e)


def test_numbers_no_store_or_request_holds_are_kept_as_text_in_tool_arguments(
    tmp_path: Path,
) -> None:
    e = engine()
    args = {"big": 2**70, "neg": -(2**64), "nan": math.nan, "inf": [math.inf, -math.inf], "ok": 1.5}
    entry = e.add_assistant("", [ToolUse("c1", "compute", args)])
    assert entry.message.tool_calls[0].input == {
        "big": str(2**70),
        "neg": str(-(2**64)),
        "nan": "NaN",
        "inf": ["Infinity", "-Infinity"],
        "ok": 1.5,
    }
    (event,) = repaired_events(e)
    assert event.converted == 5
    db = SQLiteStore(tmp_path / "s.db")
    e.save_to(db, "s")  # msgpack holds no integer past 64 bits: this save used to fail
    assert Engine.load_from(db, "s").request()[1] == e.request()[1]
    db.close()
    renders_and_saves(e)


def test_a_surrogate_pair_written_as_two_code_points_becomes_the_character_it_encodes() -> None:
    e = engine()
    entry = e.add_assistant("smile \ud83d\ude00", thinking=[Thinking("t\ud800", "sig\udcff")])
    assert entry.blocks[1] == Text("smile \U0001f600")
    assert entry.blocks[0] == Thinking("t\ufffd", "sig\ufffd")
    (event,) = repaired_events(e)
    assert (event.replaced, event.joined) == (2, 1)
    renders_and_saves(e)


def test_a_provider_response_holding_surrogates_is_admitted_repaired() -> None:
    e = engine()
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "see \ud800",
                    "tool_calls": [
                        {"id": "c1", "function": {"name": "read", "arguments": '{"p": "\\ud800"}'}}
                    ],
                }
            }
        ],
    }
    entry = e.add_response(response)
    assert entry.blocks[0] == Text("see \ufffd")
    assert entry.message.tool_calls[0].input == {"p": "\ufffd"}
    renders_and_saves(e)


def test_writes_to_regions_repair_the_text_the_key_and_a_whole_entry() -> None:
    e = engine()
    e.write("facts", "db is \udcff", key="host\ud800")
    e.write("notes", Entry(id="n1", blocks=(Text("n\ud800"),), meta={"m\ud800": "v\udcff"}))
    assert e.window.region("facts").entries[0].key == "host\ufffd"
    assert "db is \ufffd" in stored_texts(e)
    note = e.window.region("notes").entries[0]
    assert (note.text, note.meta) == ("n\ufffd", {"m\ufffd": "v\ufffd"})
    wheres = [ev.where for ev in repaired_events(e)]
    assert wheres == ["write(facts)", "write(facts)", "write(notes)"]
    renders_and_saves(e)


def test_context_tool_arguments_with_surrogate_escapes_are_repaired_before_the_tool_runs() -> None:
    e = engine()
    out = e.handle_tool_call("context_write", '{"region": "facts", "key": "k", "text": "x\\ud800"}')
    assert out.ok, out.text
    todo = e.handle_tool_call("todo_add", {"region": "plan", "text": "fix caf\udce9"})
    assert todo.ok, todo.text
    assert "x\ufffd" in stored_texts(e) and "fix caf\ufffd" in stored_texts(e)
    assert {ev.where for ev in repaired_events(e)} == {
        "handle_tool_call(context_write)",
        "handle_tool_call(todo_add)",
    }
    renders_and_saves(e)


def test_a_summary_holding_a_surrogate_is_committed_repaired() -> None:
    e = Engine.from_blueprint(BLUEPRINT, summarizer=lambda *_: "summary \ud800 of it")
    for n in range(6):
        e.write("notes", f"note {n} " + "word " * 120)
    e.compact(keep_tokens=0)
    history = e.window.region("notes_history").entries
    assert history and history[-1].text == "summary \ufffd of it"
    assert [ev.where for ev in repaired_events(e)] == ["summary(notes)"]
    renders_and_saves(e)


def test_compaction_instructions_reach_the_summarizer_repaired() -> None:
    seen: list[Any] = []

    def summarizer(entries: Any, standing: str, extra: str | None) -> str:
        seen.append(extra)
        return "short summary"

    e = Engine.from_blueprint(BLUEPRINT, summarizer=summarizer)
    for n in range(6):
        e.write("notes", f"note {n} " + "word " * 120)
    e.compact("keep caf\udce9 in", keep_tokens=0)
    assert seen and all("\udce9" not in str(s) for s in seen)
    assert any("keep caf\ufffd in" in str(s) for s in seen)


def test_a_tool_definition_with_a_lone_surrogate_is_refused_naming_the_tool() -> None:
    e = engine()
    tool = {"name": "read", "description": "reads \ud800", "input_schema": {"type": "object"}}
    with pytest.raises(SDKInputError, match=r"tools\[0\]: description at 6"):
        e.request(tools=[tool])
    renders_and_saves(e)


def test_a_blueprint_surrogate_escape_is_refused_naming_the_key_and_line() -> None:
    text = BLUEPRINT_TEXT.replace('seed: "Be brief."', 'seed: "Be \\ud800 brief."')
    with pytest.raises(BlueprintError, match=r"<blueprint>:6: regions\[0\].seed: a UTF-16"):
        load_blueprint(text)


def test_content_no_json_can_hold_is_refused_before_anything_is_stored() -> None:
    e = engine()
    before = len(e.transcript())
    with pytest.raises(ContentTypeError, match=r"add_message: blocks\[0\].input"):
        e.add_assistant("", [ToolUse("c1", "read", {"obj": object()})])
    with pytest.raises(ContentTypeError, match=r"blocks\[0\].text must be text, got int"):
        e.add_user([Text(5)])  # type: ignore[arg-type]
    with pytest.raises(ContentTypeError, match="content must be text, a block or a list"):
        e.write("facts", 5, key="k")  # type: ignore[arg-type]
    assert len(e.transcript()) == before


BLUEPRINT_TEXT = """
version: 1
name: admission
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "Be brief."}
  - {name: conversation, kind: sliding_window, budget: 20000}
"""


# ----- the property: every admitted text renders and saves, through every entry point --------
def _user(e: Engine, text: str) -> str:
    return e.add_user(text).text


def _assistant(e: Engine, text: str) -> str:
    entry = e.add_assistant(text, [ToolUse(f"id{text}", f"n{text}", {text: text})])
    call = entry.message.tool_calls[0]
    assert call.input == {call.name[1:]: call.name[1:]}
    return call.name[1:]


def _result(e: Engine, text: str) -> str:
    e.add_assistant("", [ToolUse("c1", "read", {})])
    return str(e.add_tool_result("c1", text).blocks[0].content)


def _response(e: Engine, text: str) -> str:
    response = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": f"<{text}>"}],
        "stop_reason": "end_turn",
    }
    return e.add_response(response).text[1:-1]


def _write(e: Engine, text: str) -> str:
    e.write("facts", text, key="k")
    return e.window.region("facts").entries[0].text


def _tool(e: Engine, text: str) -> str:
    """(The text the engine receives is the JSON decoder's: it joins an escaped pair.)"""
    assert e.handle_tool_call("todo_add", json.dumps({"region": "plan", "text": f"<{text}>"})).ok
    return stored_texts(e).split("<", 1)[1].rsplit(">", 1)[0]


def _stream(e: Engine, text: str) -> str:
    with e.stream_assistant() as stream:
        stream.text(f"<{text}>")
    assert stream.entry is not None
    return stream.entry.text[1:-1]


ENTRY_POINTS: dict[str, Callable[[Engine, str], str]] = {
    "add_user": _user,
    "add_assistant": _assistant,
    "add_tool_result": _result,
    "add_response": _response,
    "write": _write,
    "handle_tool_call": _tool,
    "stream_assistant": _stream,
}


@pytest.mark.parametrize("entry_point", sorted(ENTRY_POINTS))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=hostile_text.filter(lambda t: t.strip() != "") | st.text(min_size=1))
def test_property_every_admitted_text_renders_and_saves(entry_point: str, text: str) -> None:
    e = engine()
    admitted = ENTRY_POINTS[entry_point](e, text)
    received = json.loads(json.dumps(text)) if entry_point == "handle_tool_call" else text
    fixed, repair = repair_text(received)
    assert admitted == fixed
    assert (repair is None) == (not repaired_events(e))
    renders_and_saves(e)
