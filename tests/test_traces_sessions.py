"""Importers for logs users already have: Claude Code, Codex CLI, OpenHands (recorded usage)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _traces_support import raw_traces_dir
from regio.content import Text, Thinking, ToolUse
from regio.traces import (
    AssistantMessage,
    Compaction,
    ToolResults,
    Usage,
    UserMessage,
    detect_format,
    dumps_trace,
    import_file,
    load_source,
    loads_trace,
    recorded_usage,
    usage_totals,
)

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
CLAUDE = FIXTURES / "claude-code" / "7d3c1c52-5b7e-4d43-9a1e-2f0c5b0e9a11.jsonl"
CODEX = (
    FIXTURES / "codex" / "rollout-2025-09-10T14-02-11-0198a6c2-3b1f-7c20-9d55-6f3e2a1b0c4d.jsonl"
)


# -- Claude Code -------------------------------------------------------------------------------


def test_claude_code_sessions_are_detected() -> None:
    assert detect_format(load_source(CLAUDE)) == "claude-code"


def test_claude_code_lines_of_one_message_id_are_one_model_call_with_its_usage() -> None:
    trace = import_file(CLAUDE).traces[0]
    first = next(e for e in trace.events if isinstance(e, AssistantMessage))
    assert [type(b) for b in first.blocks] == [Thinking, Text, ToolUse]
    assert first.usage == Usage.anthropic(4, 96, 0, 5210)
    assert len(trace.steps()) == 4  # msg_01A, msg_01B, msg_01C, msg_01D; the sidechain is out


def test_claude_code_keeps_every_recorded_usage_and_its_cache_fields() -> None:
    result = import_file(CLAUDE)
    usages = recorded_usage(result.traces[0])
    assert [u.reported["cache_read_input_tokens"] for u in usages if u] == [0, 5210, 5622, 1890]
    totals = usage_totals(usages)
    assert totals.recorded == totals.calls == 4
    assert totals.prompt_tokens == (4 + 5210) + (6 + 412 + 5210) + (5 + 655 + 5622) + (3 + 1890)


def test_claude_code_parallel_results_in_separate_lines_answer_their_calls() -> None:
    trace = import_file(CLAUDE).traces[0]
    assert trace.problems() == []
    second = [e for e in trace.events if isinstance(e, AssistantMessage)][1]
    assert [b.id for b in second.blocks if isinstance(b, ToolUse)] == ["toolu_02", "toolu_03"]
    results = [r.tool_use_id for e in trace.events if isinstance(e, ToolResults) for r in e.results]
    assert results == ["toolu_01", "toolu_02", "toolu_03"]


def test_claude_code_sidechains_are_skipped_and_compaction_is_kept() -> None:
    trace = import_file(CLAUDE).traces[0]
    assert trace.header.meta["sidechain_lines"] == 1
    assert trace.header.meta["summary"] == "Fix the failing date parser test"
    assert any(isinstance(e, Compaction) for e in trace.events)
    assert not trace.is_append_only()
    assert "(subagent work)" not in dumps_trace(trace)


def test_claude_code_times_are_the_recorded_ones() -> None:
    trace = import_file(CLAUDE).traces[0]
    assert trace.header.timing.startswith("recorded")
    assert trace.events[0].t == 0.0
    assert trace.duration == pytest.approx(322.0)


def test_claude_code_header_names_session_agent_and_model() -> None:
    header = import_file(CLAUDE).traces[0].header
    assert header.id == "claude-code/7d3c1c52-5b7e-4d43-9a1e-2f0c5b0e9a11"
    assert (header.agent, header.model) == ("Claude Code 1.0.51", "claude-sonnet-4-20250514")


def test_claude_code_usage_with_bad_counts_is_dropped_with_a_warning(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["message"]["usage"]["input_tokens"] = -3
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([lines[1], json.dumps(bad)]) + "\n")
    result = import_file(path, "claude-code")
    assert recorded_usage(result.traces[0]) == [None]
    assert any("usage" in i.message for i in result.issues)


# -- Codex CLI ---------------------------------------------------------------------------------


def test_codex_rollouts_are_detected() -> None:
    assert detect_format(load_source(CODEX)) == "codex"


def test_codex_token_counts_become_the_usage_of_the_call_they_close() -> None:
    trace = import_file(CODEX).traces[0]
    assert recorded_usage(trace) == [
        Usage.openai(4120, 210, cached_tokens=0),
        Usage.openai(4710, 96, cached_tokens=4096),
        Usage.openai(5020, 58, cached_tokens=4608),
    ]
    assert usage_totals(recorded_usage(trace)).hit_rate == pytest.approx(8704 / 13850)


def test_codex_calls_outputs_and_reasoning_are_kept() -> None:
    trace = import_file(CODEX).traces[0]
    assert trace.problems() == []
    calls = trace.tool_calls()
    assert [(c.id, c.name) for c in calls] == [("call_A1", "shell"), ("call_A2", "apply_patch")]
    assert calls[0].input["command"] == ["bash", "-lc", "make test"]
    first = next(e for e in trace.events if isinstance(e, AssistantMessage))
    assert first.blocks[0] == Thinking("**Running the test suite**", "")
    users = [e for e in trace.events if isinstance(e, UserMessage)]
    assert "make test" in users[1].blocks[0].text
    assert trace.header.model == "gpt-5-codex"
    assert trace.header.id == "codex/0198a6c2-3b1f-7c20-9d55-6f3e2a1b0c4d"


def test_codex_rollouts_without_the_payload_wrapper_are_read(tmp_path: Path) -> None:
    old = [
        {"id": "s1", "timestamp": "2025-05-07T17:24:21.123Z", "instructions": "Be brief."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"record_type": "state"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "yo"}],
        },
    ]
    path = tmp_path / "rollout-old.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in old))
    trace = import_file(path, "codex").traces[0]
    assert trace.system_prompt == "Be brief."
    assert [m.role for m in trace.messages()] == ["user", "assistant"]


# -- OpenHands (the real shared trajectories) ---------------------------------------------------

# Read from the source files: model calls and the per-call Anthropic usage LiteLLM recorded.
OPENHANDS = {
    "basic.json": ("claude-3-5-sonnet-20241022", 2, [(4, 0, 3482), (6, 3482, 1158)]),
    "wrong_initial_state.json": (
        "claude-3-5-sonnet-20241022",
        4,
        [(4, 0, 3471), (6, 3471, 139), (6, 3610, 188), (6, 3798, 129)],
    ),
}


@pytest.mark.parametrize("name", sorted(OPENHANDS))
def test_openhands_real_anthropic_usage_is_kept_per_call(name: str) -> None:
    path = raw_traces_dir() / "openhands" / name
    result = import_file(path)
    assert result.format == "openhands"
    trace = result.traces[0]
    model, calls, expected = OPENHANDS[name]
    assert (trace.header.model, len(trace.steps())) == (model, calls)
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    got = [tuple(u.reported[k] for k in keys) for u in recorded_usage(trace) if u is not None]
    assert got == expected
    assert trace.problems() == []
    assert loads_trace(dumps_trace(trace)) == trace


def test_openhands_openai_usage_keeps_cached_tokens() -> None:
    trace = import_file(raw_traces_dir() / "openhands" / "basic_interactions.json").traces[0]
    usages = recorded_usage(trace)
    assert usages[:2] == [None, None]  # plain replies logged without a model response
    assert usages[2] == Usage.openai(2473, 10, cached_tokens=2304)


def test_openhands_multi_call_responses_are_one_model_call(tmp_path: Path) -> None:
    source = json.loads((raw_traces_dir() / "openhands" / "basic.json").read_text())
    step = source[1]
    twin = json.loads(json.dumps(step))
    twin["id"] = 99
    twin["tool_call_metadata"]["tool_call_id"] = "toolu_twin"
    response = step["tool_call_metadata"]["model_response"]["choices"][0]["message"]
    extra = json.loads(json.dumps(response["tool_calls"][0]))
    extra["id"] = "toolu_twin"
    for event in (step, twin):
        message = event["tool_call_metadata"]["model_response"]["choices"][0]["message"]
        message["tool_calls"] = [response["tool_calls"][0], extra]
    path = tmp_path / "multi.json"
    path.write_text(json.dumps([source[0], step, twin]))
    trace = import_file(path, "openhands").traces[0]
    assert len(trace.steps()) == 1
    assert len(trace.tool_calls()) == 2


def test_openhands_times_are_the_recorded_ones() -> None:
    trace = import_file(raw_traces_dir() / "openhands" / "basic.json").traces[0]
    assert trace.header.timing.startswith("recorded")
    assert trace.duration == pytest.approx(21.505)


def test_a_claude_code_subagent_transcript_is_imported_as_its_own_trace(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    conversation = [x for x in lines if x.get("type") in ("user", "assistant")][:5]
    for line in conversation:
        line["isSidechain"], line["agentId"] = True, "a1b2"
    path = tmp_path / "agent-a1b2.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in conversation))
    trace = import_file(path).traces[0]
    assert trace.id == "claude-code/7d3c1c52-5b7e-4d43-9a1e-2f0c5b0e9a11/agent-a1b2"
    assert len(trace.steps()) == 1
    assert recorded_usage(trace) == [Usage.anthropic(4, 96, 0, 5210)]


def test_codex_token_count_after_the_tool_output_still_bills_its_call(tmp_path: Path) -> None:
    lines = CODEX.read_text().splitlines()
    objs = [json.loads(x) for x in lines]
    first_count = next(
        i
        for i, o in enumerate(objs)
        if o["payload"].get("type") == "token_count" and o["payload"]["info"]
    )
    output = next(
        i for i, o in enumerate(objs) if o["payload"].get("type") == "function_call_output"
    )
    objs[first_count], objs[output] = objs[output], objs[first_count]  # output, then the count
    path = tmp_path / "rollout-reordered.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    result = import_file(path)
    assert recorded_usage(result.traces[0]) == recorded_usage(import_file(CODEX).traces[0])
    assert not [i for i in result.issues if "token_count" in i.message]


def test_openhands_evaluation_runs_are_read_as_objects_and_as_jsonl(tmp_path: Path) -> None:
    events = json.loads((raw_traces_dir() / "openhands" / "wrong_initial_state.json").read_text())
    single = tmp_path / "run.json"
    single.write_text(json.dumps({"instance_id": "repo__1", "history": events}))
    one = import_file(single)
    assert one.format == "openhands"
    assert one.traces[0].header.meta["instance_id"] == "repo__1"
    output = tmp_path / "output.jsonl"
    runs = [{"instance_id": f"repo__{k}", "history": events} for k in (1, 2)]
    output.write_text("".join(json.dumps(r) + "\n" for r in runs) + '{"history": 3}\n')
    result = import_file(output)
    assert result.format == "openhands"
    assert [t.id for t in result.traces] == ["openhands/repo__1", "openhands/repo__2"]
    assert [i.record for i in result.issues] == [3]
    expected = recorded_usage(
        import_file(raw_traces_dir() / "openhands" / "wrong_initial_state.json").traces[0]
    )
    assert all(recorded_usage(t) == expected for t in result.traces)


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.booleans(), min_size=2, max_size=2))
def test_claude_code_any_split_of_a_message_over_lines_is_the_same_model_call(
    cuts: list[bool],
) -> None:
    lines = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    parts = [x for x in lines if x.get("message", {}).get("id") == "msg_01A"]
    blocks = [b for p in parts for b in p["message"]["content"]]
    groups: list[list[dict[str, object]]] = [[blocks[0]]]
    for block, cut in zip(blocks[1:], cuts, strict=True):
        if cut:
            groups.append([])
        groups[-1].append(block)
    rebuilt = []
    for group in groups:
        line = json.loads(json.dumps(parts[0]))
        line["message"]["content"] = group
        rebuilt.append(line)
    start = lines.index(parts[0])
    new_lines = lines[:start] + rebuilt + lines[start + len(parts) :]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / CLAUDE.name
        path.write_text("".join(json.dumps(x) + "\n" for x in new_lines))
        got = import_file(path).traces[0]
    want = import_file(CLAUDE).traces[0]
    assert got.events == want.events


@settings(max_examples=30, deadline=None)
@given(repeats=st.lists(st.integers(0, 3), min_size=3, max_size=3))
def test_codex_repeated_token_counts_do_not_change_the_usage(repeats: list[int]) -> None:
    lines = [json.loads(x) for x in CODEX.read_text().splitlines()]
    out: list[object] = []
    k = 0
    for line in lines:
        out.append(line)
        payload = line["payload"]
        if payload.get("type") == "token_count" and payload.get("info"):
            out.extend([line] * repeats[min(k, 2)])
            k += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / CODEX.name
        path.write_text("".join(json.dumps(x) + "\n" for x in out))
        got = recorded_usage(import_file(path).traces[0])
    assert got == recorded_usage(import_file(CODEX).traces[0])
