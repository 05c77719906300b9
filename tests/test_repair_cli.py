"""``regio repair``: stored sessions (SQLite, Redis, under the session's lease), state files and
imported traces of every bundled format, each broken, come out valid for both providers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from _traces_support import shared_dir
from history_support import history_engine
from regio.callids import provider_id
from regio.cli import main
from regio.content import ToolUse
from regio.engine import Engine
from regio.engine._history import INTERRUPTED_RESULT, repair_history
from regio.engine._repair_cli import repair_target
from regio.layout import check_anthropic, check_openai_chat
from regio.layout.events import OrphanResultDropped, ResultSynthesized
from regio.persistence.store import RedisStore, SQLiteStore
from regio.tokens import get_counter
from regio.traces import bundled_traces_dir, import_file, write_trace
from regio.traces.detect import expand_sources
from regio.traces.format import ToolResults, Trace
from store_support import redis_url

__all__ = ["redis_url"]

#: ``shared/traces/raw`` beside the project (``None`` when absent: the bundled traces alone).
_SHARED = shared_dir()
RAW = _SHARED / "traces" / "raw" if _SHARED is not None else None


def _broken() -> Engine:
    engine = history_engine(get_counter("heuristic"))  # a counter `regio repair` can rebuild
    engine.add_user("please fix the failing test")
    engine.add_assistant("reading", [ToolUse("c1", "read", {"path": "a.py"})])
    engine.add_tool_result("c9", "a result nobody asked for")
    return engine


def _valid(engine: Engine) -> None:
    """Both providers accept the session's request and the render-time repair had nothing to
    synthesize or drop."""
    for provider, model in (("anthropic", "claude-sonnet-4-6"), ("openai", "gpt-4o")):
        request, payload = engine.request(provider, model)
        check = check_anthropic if provider == "anthropic" else check_openai_chat
        assert check(payload) == []
        fixes = [
            e for e in request.events if isinstance(e, OrphanResultDropped | ResultSynthesized)
        ]
        assert fixes == []


def test_repair_of_a_state_file_writes_it_back_valid(tmp_path: Path, capsys: Any) -> None:
    path = _broken().save(tmp_path / "state.json")
    assert main(["repair", str(path)]) == 0
    out = capsys.readouterr().out
    assert "call_closed c1" in out and "orphan_result_dropped c9" in out and "written:" in out
    repaired = Engine.load(path)
    _valid(repaired)
    assert main(["repair", str(path)]) == 0
    assert "nothing to repair" in capsys.readouterr().out


def test_a_dry_run_writes_nothing(tmp_path: Path, capsys: Any) -> None:
    path = _broken().save(tmp_path / "state.json")
    before = path.read_bytes()
    assert main(["repair", str(path), "--dry-run"]) == 0
    assert "dry run: nothing written" in capsys.readouterr().out
    assert path.read_bytes() == before


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        db = SQLiteStore(tmp_path / "sessions.db")
        yield db
        db.close()
        return
    out = RedisStore.from_url(request.getfixturevalue("redis_url"))  # the prefix a URL opens
    out.delete(SID)
    yield out
    out.delete(SID)


SID = "repair-cli"


def _url(store: Any) -> str:
    return f"{store.url}#{SID}"


def test_repair_of_a_stored_session_saves_it_under_its_lease(store: Any, capsys: Any) -> None:
    engine = _broken()
    engine.save_to(store, SID)
    with store.lease(SID, ttl=30, wait=0):
        assert main(["repair", _url(store), "--wait", "0"]) == 2  # another writer holds it
        err = capsys.readouterr().err
        assert "leased by another writer" in err
        assert "--wait SECONDS" in err and "lease(..., wait" not in err  # the CLI's own option
    assert main(["repair", _url(store)]) == 0
    assert "call_closed c1" in capsys.readouterr().out
    repaired = Engine.load_from(store, SID)
    assert repaired.store_mark.version == 2
    _valid(repaired)
    assert len(repaired.transcript()) > len(engine.transcript())  # nothing left it


# ----- every bundled trace, with one call's result removed ----------------------------------
def _bundled() -> list[Path]:
    paths = expand_sources([bundled_traces_dir()])
    if RAW is not None and RAW.is_dir():
        paths += expand_sources([RAW])
    return sorted({p.resolve() for p in paths if p.suffix in (".traj", ".json", ".jsonl")})


def _without_one_result(trace: Trace) -> tuple[Trace, str | None]:
    """``trace`` with the result of its middle call removed (``None``: it makes no call)."""
    answered = [
        (k, r.tool_use_id)
        for k, e in enumerate(trace.events)
        if isinstance(e, ToolResults)
        for r in e.results
    ]
    if not answered:
        return trace, None
    k, call_id = answered[len(answered) // 2]
    events = list(trace.events)
    event = events[k]
    assert isinstance(event, ToolResults)
    rest = tuple(r for r in event.results if r.tool_use_id != call_id)
    if rest:
        events[k] = msgspec.structs.replace(event, results=rest)
    else:
        del events[k]
    return Trace(trace.header, tuple(events)), call_id


@pytest.mark.parametrize("source", _bundled(), ids=lambda p: "/".join(p.parts[-3:]))
def test_a_bundled_trace_with_a_result_removed_is_repaired_into_a_valid_session(
    source: Path, tmp_path: Path
) -> None:
    runs = import_file(source).traces
    for n, run in enumerate(runs[:3]):  # tau-bench: the first three of its 40 runs
        broken, call_id = _without_one_result(run)
        path = tmp_path / f"run{n}.jsonl"
        write_trace(broken, path)
        out = tmp_path / f"run{n}.state.json"
        outcome = repair_target(str(path), output=str(out))
        changes, written = outcome.changes, outcome.written
        assert written == str(out)
        open_before = set(repair_history(run.messages()).closed)  # a run ending mid-call
        if call_id is None:  # a plain-text agent: no call to lose a result
            assert [c.tool_use_id for c in changes] == sorted(open_before)
        else:
            closed = {c.tool_use_id: c.detail for c in changes if c.action == "call_closed"}
            assert set(closed) == open_before | {call_id}
            assert closed[call_id] == INTERRUPTED_RESULT
        _valid(Engine.load(out))


# ----- a trace broken in every way at once, repaired as recorded --------------------------------
def _call(call_id: str, path: str) -> dict[str, Any]:
    arguments = json.dumps({"path": path})
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": arguments}}


BROKEN_TRACE = [
    {"role": "system", "content": "You are an agent."},
    {"role": "user", "content": "Read a.py then b.py"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_0", "a.py")]},
    {"role": "tool", "tool_call_id": "call_0", "content": "A content"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_0", "b.py")]},
    {"role": "tool", "tool_call_id": "call_0", "content": "B content"},
    {"role": "tool", "tool_call_id": "ghost", "content": "orphan result"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call("c.1:x", "c.py"), _call("c2", "d.py")],
    },
    {"role": "tool", "tool_call_id": "c.1:x", "content": "C content"},
    {"role": "user", "content": "hurry"},
    {"role": "tool", "tool_call_id": "c2", "content": "D content"},
    {"role": "assistant", "content": None, "tool_calls": [_call("c3", "e.py")]},
]


def test_a_trace_is_repaired_as_recorded_and_every_change_is_reported(
    tmp_path: Path, capsys: Any
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(BROKEN_TRACE))
    out = tmp_path / "out.json"
    assert main(["repair", str(path), "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    mapped = provider_id("c.1:x")
    expected = [
        "call_renamed call_0",
        "result_renamed call_0",
        f"id_mapped c.1:x (entry e8): {mapped}",
        f"id_mapped c.1:x (entry e9): {mapped}",
        "orphan_result_dropped ghost",
        "call_closed c3",
        "placed: the result of c2",
    ]
    for want in expected:
        assert any(line.startswith(want) for line in lines), (want, lines)
    _, payload = Engine.load(out).request("openai", "gpt-4o")
    assert check_openai_chat(payload) == []
    answers = {m["tool_call_id"]: m["content"] for m in payload["messages"] if m["role"] == "tool"}
    # every recorded result stays with its own call, none becomes user text
    assert answers["call_0"] == "A content" and answers["call_0-1"] == "B content"
    assert answers[mapped] == "C content" and answers["c2"] == "D content"
    assert "ghost" not in json.dumps(payload) and "unknown call" not in json.dumps(payload)


def test_the_trace_importers_warnings_are_printed(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "no-id.json"
    trace = [
        {"role": "user", "content": "go"},
        {"role": "tool", "content": "a result with no call id and no call to answer"},
        {"role": "assistant", "content": "done"},
    ]
    path.write_text(json.dumps(trace))
    assert main(["repair", str(path), "-o", str(tmp_path / "o.json")]) == 0
    assert "warning: " in capsys.readouterr().out
