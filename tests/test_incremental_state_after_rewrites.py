"""The state carried from one request to the next (the render log's kept message prefix, the
conversation's unit memo, the repair check's plain scan, the store's save memo) follows edits
made in the middle of a conversation, not only appends: a tool result cleared in place and
restored (what relief edits and the restore of an original do, ``SlidingWindow.rewrite_entry``),
a call ``Engine.repair`` closes, and a long job's progress report taken out of the window by
a newer one turns after it was sent (the render log then drops the report without starting
over, so only the kept prefix's own check of its blocks notices). After each, the payload is
the request rendered without the render log, the memo and the scan say what a reading from
scratch says, and the saved session loads to the same request. Each for every renderer API
that keeps a prefix: Anthropic Messages, Chat Completions and Responses."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.engine._history import needs_repair
from regio.engine._repairs import _needs_repair
from regio.persistence.store import SQLiteStore
from regio.regions.unitmemo import units_of
from render_support import PREFIX_APIS, whole_render
from runtime_stubs import StubCounter
from store_support import play_turn, store_engine


def _checked(engine: Any, db: SQLiteStore, api: str) -> dict[str, Any]:
    """The engine's next payload for ``api``, checked against the state read from scratch."""
    request, payload = engine.request(api=api)
    assert payload == whole_render(request, payload, api)
    c = engine.session
    conv = c.window.conversation
    memo, fresh = conv.units(), units_of(conv.entries, None)
    assert (memo.grouping, memo.turn_start, memo.relieved, memo.results) == (
        fresh.grouping,
        fresh.turn_start,
        fresh.relieved,
        fresh.results,
    )
    assert _needs_repair(c, conv.entries) == needs_repair(e.message for e in conv.entries)
    engine.save_to(db)
    loaded = Engine.load_from(db, "s", token_counter=StubCounter())
    assert loaded.request(api=api)[1] == payload
    return payload


@pytest.mark.parametrize("api", PREFIX_APIS)
def test_a_result_cleared_and_restored_and_a_call_repaired_mid_conversation_keep_state_fresh(
    tmp_path: Any, api: str
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    engine = store_engine()
    for turn in range(1, 7):
        play_turn(engine, turn)
        _checked(engine, db, api)
    conv = engine.session.window.conversation
    at = next(
        i for i, e in enumerate(conv.entries) if any(isinstance(b, ToolResult) for b in e.blocks)
    )
    original = conv.entries[at]
    call = next(b for b in original.blocks if isinstance(b, ToolResult)).tool_use_id
    before = _checked(engine, db, api)
    cleared = msgspec.structs.replace(
        original, blocks=(ToolResult(call, f"[result of read call {call} cleared]"),), tokens=4
    )
    conv.rewrite_entry(at, cleared)  # a relief edit of the second turn's result
    after = _checked(engine, db, api)
    assert after != before and "cleared]" in str(after)
    conv.rewrite_entry(at, original)  # its original restored
    assert _checked(engine, db, api) == before
    engine.add_assistant("calling again", [ToolUse("call-x", "read", {"path": "x.py"})])
    engine.add_user("never mind that file")  # the call is never answered
    assert [r.action for r in engine.repair()] == ["call_closed"]
    repaired = _checked(engine, db, api)
    assert "never returned a result" in str(repaired)
    play_turn(engine, 7)
    _checked(engine, db, api)
    db.close()


@pytest.mark.parametrize("api", PREFIX_APIS)
@pytest.mark.parametrize("beside_a_result", [False, True])
def test_a_progress_report_superseded_turns_later_leaves_payloads_whole_renders(
    tmp_path: Any, beside_a_result: bool, api: str
) -> None:
    """The report is its own entry (the entry leaves the window) or sits beside a parallel
    call's result (the entry is rewritten without it)."""
    db = SQLiteStore(tmp_path / "s.db")
    engine = store_engine()
    play_turn(engine, 1)
    engine.add_user("start the job and read a file")
    engine.add_assistant(
        "starting", [ToolUse("job", "run", {"x": 1}), ToolUse("rd", "read", {"p": "a"})]
    )
    report = ToolResult("job", "progress 0", final=False)
    if beside_a_result:
        engine.add_message(Message.tool([report, ToolResult("rd", "file a")]))
    else:
        engine.add_message(Message.tool([report]))
        engine.add_message(Message.tool([ToolResult("rd", "file a")]))
    _checked(engine, db, api)
    for turn in range(2, 6):
        play_turn(engine, turn)
        _checked(engine, db, api)
    engine.add_message(Message.tool([ToolResult("job", "progress 1", final=False)]))
    assert "progress 0" not in str(_checked(engine, db, api))
    engine.add_message(Message.tool([ToolResult("job", "done")]))
    assert "progress 1" not in str(_checked(engine, db, api))
    db.close()
