"""Unreadable tool arguments in an imported trace take regio's one invalid-arguments form
(``regio.callargs.invalid_arguments``: ``{"_invalid_arguments": text}``) in every importer, as
the SDK readers and the agent loop's providers keep them; a regio trace of format version 1,
which kept them as ``{"_raw": text}``, still loads, in today's form."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.callargs import INVALID_ARGUMENTS_KEY, function_arguments, invalid_arguments
from regio.content import ToolUse
from regio.traces import import_file, loads_trace
from regio.traces.format import FORMAT_VERSION, AssistantMessage, Header, Trace
from regio.traces.jsonl import dumps_trace

SRC = Path(__file__).resolve().parents[1] / "src" / "regio" / "traces"
IMPORTER_MODULES = ("claudecode", "codex", "openhands", "importers", "openai_chat")


def _openai_file(tmp_path: Path, arguments: Any) -> Path:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    return path


def _codex_file(tmp_path: Path, arguments: str) -> Path:
    lines = [
        {"timestamp": "2025-09-10T14:02:11Z", "type": "session_meta", "payload": {"id": "s1"}},
        {
            "timestamp": "2025-09-10T14:02:12Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "go"}],
            },
        },
        {
            "timestamp": "2025-09-10T14:02:13Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "arguments": arguments,
                "call_id": "call_1",
            },
        },
    ]
    path = tmp_path / "rollout-s1.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _openhands_file(tmp_path: Path, arguments: str) -> Path:
    response = {
        "id": "r1",
        "choices": [
            {
                "message": {
                    "content": "",
                    "tool_calls": [
                        {"id": "t1", "function": {"name": "run", "arguments": arguments}}
                    ],
                }
            }
        ],
    }
    events = [
        {"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message",
         "args": {"content": "go"}, "message": "go"},
        {"id": 1, "timestamp": "2025-01-01T00:00:01", "source": "agent", "action": "run",
         "args": {}, "message": "",
         "tool_call_metadata": {"function_name": "run", "tool_call_id": "t1",
                                "model_response": response, "total_calls_in_response": 1}},
    ]  # fmt: skip
    path = tmp_path / "openhands.json"
    path.write_text(json.dumps(events))
    return path


def _claude_code_file(tmp_path: Path, tool_input: Any) -> Path:
    base = {"sessionId": "s1", "isSidechain": False, "timestamp": "2025-01-01T00:00:00Z"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": "go"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-6",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": tool_input}]}},
    ]  # fmt: skip
    path = tmp_path / "s1.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _only_input(path: Path, fmt: str | None = None) -> dict[str, Any]:
    result = import_file(path, fmt) if fmt else import_file(path)
    (trace,) = result.traces
    (call,) = trace.tool_calls()
    return call.input


@pytest.mark.parametrize("text", ['{"q": "x"', "[1, 2]", '"just a string"', "not json"])
def test_unreadable_openai_arguments_take_the_invalid_arguments_form(tmp_path, text):
    assert _only_input(_openai_file(tmp_path, text), "openai") == invalid_arguments(text)


def test_openai_arguments_of_another_type_keep_their_json_text(tmp_path):
    got = _only_input(_openai_file(tmp_path, [1, 2]), "openai")
    assert got == invalid_arguments("[1, 2]")


def test_unreadable_codex_arguments_take_the_invalid_arguments_form(tmp_path):
    assert _only_input(_codex_file(tmp_path, '{"cmd": '), "codex") == invalid_arguments('{"cmd": ')


def test_unreadable_openhands_arguments_take_the_invalid_arguments_form(tmp_path):
    got = _only_input(_openhands_file(tmp_path, "[1]"), "openhands")
    assert got == invalid_arguments("[1]")


@pytest.mark.parametrize("tool_input", [[1, 2], 7, "ls -la"])
def test_a_claude_code_tool_use_input_that_is_no_object_takes_the_invalid_form(
    tmp_path, tool_input
):
    got = _only_input(_claude_code_file(tmp_path, tool_input), "claude-code")
    assert set(got) == {INVALID_ARGUMENTS_KEY}
    assert "_raw" not in got


def test_a_claude_code_tool_use_without_input_is_a_call_without_arguments(tmp_path):
    assert _only_input(_claude_code_file(tmp_path, None), "claude-code") == {}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=40))
def test_any_argument_text_imports_as_the_live_reader_reads_it(tmp_path, text):
    """The importer and :func:`regio.callargs.function_arguments` (the SDK readers, the agent
    loop's providers) agree on every text within the limits both apply."""
    live = function_arguments(text)
    got = _only_input(_openai_file(tmp_path, text), "openai")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return  # the importer replaces lone surrogates (a trace must encode as UTF-8)
    assert got == live


def test_an_imported_invalid_call_is_answered_with_an_error_when_replayed(tmp_path):
    """The agent loop answers a replayed call in the invalid form as it answers a live one:
    an error tool result quoting the text, the tool never run."""
    from regio.agent import AgentLoop, ReplayProvider
    from regio.engine import Engine

    (trace,) = import_file(_openai_file(tmp_path, '{"q": '), "openai").traces
    blueprint = (
        "version: 1\nname: r\ntokenizer: o200k_base\n"
        "model: {provider: openai, name: gpt-4o, context_window: 8000, max_output_tokens: 200}\n"
        "regions:\n  - {name: conversation, kind: sliding_window, budget: 4000}\n"
    )
    engine = Engine.from_blueprint(blueprint)
    loop = AgentLoop(engine, ReplayProvider.from_trace(trace), (), max_steps=1)
    loop.run("go")
    payload = engine.request("openai")[1]
    (result,) = [m["content"] for m in payload["messages"] if m["role"] == "tool"]
    assert "not a valid JSON object" in result and repr('{"q": ') in result


def test_no_importer_imports_another_importer() -> None:
    importers = {f"regio.traces.{m}" for m in ("claudecode", "codex", "openhands", "importers")}
    for module in ("claudecode", "codex", "openhands", "importers"):
        tree = ast.parse((SRC / f"{module}.py").read_text())
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        }
        assert not imported & (importers - {f"regio.traces.{module}"}), module


# -- regio traces of format version 1 ---------------------------------------------------------


def _v1_line(tool_input: dict[str, Any], version: int = 1) -> str:
    header = {"type": "header", "id": "x", "source_format": "openai", "version": version}
    event = {
        "type": "assistant",
        "t": 0.0,
        "blocks": [{"type": "tool_use", "id": "c1", "name": "f", "input": tool_input}],
    }
    return json.dumps(header) + "\n" + json.dumps(event) + "\n"


def _loaded_input(text: str) -> dict[str, Any]:
    (call,) = loads_trace(text).tool_calls()
    return call.input


def test_a_version_1_trace_with_raw_arguments_loads_in_todays_form() -> None:
    assert FORMAT_VERSION >= 2
    assert _loaded_input(_v1_line({"_raw": '{"q": '})) == invalid_arguments('{"q": ')


@pytest.mark.parametrize(
    ("raw", "today"),
    [(None, {}), (3, invalid_arguments("3")), ([1, 2], invalid_arguments("[1, 2]"))],
)
def test_a_version_1_trace_with_a_non_object_input_loads_in_todays_form(
    raw: Any, today: dict[str, Any]
) -> None:
    # version 1's Claude Code importer kept any non-object tool_use input as {"_raw": value}
    assert _loaded_input(_v1_line({"_raw": raw})) == today


def test_a_version_1_trace_keeps_arguments_that_only_look_alike() -> None:
    for tool_input in ({"_raw": "x", "other": 1}, {"raw": "x"}):
        assert _loaded_input(_v1_line(tool_input)) == tool_input


def test_a_current_trace_keeps_a_real_raw_argument() -> None:
    assert _loaded_input(_v1_line({"_raw": "x"}, FORMAT_VERSION)) == {"_raw": "x"}


@settings(max_examples=60, deadline=None)
@given(
    tool_input=st.dictionaries(
        st.sampled_from(["_raw", INVALID_ARGUMENTS_KEY, "q"]),
        st.text(max_size=8) | st.integers(),
        max_size=2,
    )
)
def test_a_written_trace_reads_back_unchanged(tool_input):
    trace = Trace(
        Header(id="x", source_format="regio"),
        (AssistantMessage(0.0, (ToolUse("c1", "f", tool_input),)),),
    )
    assert loads_trace(dumps_trace(trace)) == trace
