"""Importers on the bundled real runs, on malformed input, and the builder's repairs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _traces_support import raw_traces_dir
from regio.callargs import invalid_arguments
from regio.content import ToolUse
from regio.traces import (
    ImportResult,
    Timing,
    ToolResults,
    Trace,
    TraceFormatError,
    UserMessage,
    bundled_trace_paths,
    bundled_traces_dir,
    detect_format,
    import_file,
    load_bundled_traces,
    load_source,
)
from regio.traces.builder import NO_RESULT

# Counts verified by reading the source files (see the PROVENANCE.md table): number of traces,
# conversation messages (source messages minus the system prompt) and tool calls.
EXPECTED = {
    "mini-swe-agent/github_issue.traj.json": ("mini-swe-agent", 1, 21, 0),
    "mini-swe-agent/local.traj.json": ("mini-swe-agent", 1, 5, 0),
    "swe-agent/ctf_crypto_BabyEncryption.traj": ("swe-agent", 1, 30, 0),
    "swe-agent/function_calling_simple.traj": ("swe-agent", 1, 11, 5),
    "swe-agent/humanevalfix-python-0.traj": ("swe-agent", 1, 10, 0),
    "swe-agent/marshmallow-1867__default_window100.traj": ("swe-agent", 1, 22, 0),
    "swe-agent/marshmallow-1867__function_calling_replace.traj": ("swe-agent", 1, 23, 11),
    # 40 runs; 1,222 messages of which 40 system prompts; 254 tool calls and 254 tool messages
    "tau-bench/gpt-4o-airline.first40.json": ("tau-bench", 40, 1182, 254),
}


@pytest.fixture(scope="module")
def bundled() -> dict[str, ImportResult]:
    root = bundled_traces_dir()
    return {
        p.relative_to(root).as_posix(): r
        for p, r in zip(bundled_trace_paths(), load_bundled_traces(), strict=True)
    }


def _all_traces(results: dict[str, ImportResult]) -> list[Trace]:
    return [t for r in results.values() for t in r.traces]


# -- bundled real runs -------------------------------------------------------------------------


def test_the_bundled_copies_are_byte_identical_to_the_shared_raw_traces() -> None:
    root, raw = bundled_traces_dir(), raw_traces_dir()
    for rel in EXPECTED:
        assert (root / rel).read_bytes() == (raw / rel).read_bytes(), rel
    for folder in ("swe-agent", "mini-swe-agent", "tau-bench"):
        assert list((root / folder).glob("LICENSE*")), f"{folder} lost its licence"
    assert (root / "PROVENANCE.md").is_file()


def test_every_bundled_file_imports_with_the_expected_counts(
    bundled: dict[str, ImportResult],
) -> None:
    assert sorted(bundled) == sorted(EXPECTED)
    for rel, (fmt, n_traces, n_messages, n_calls) in EXPECTED.items():
        result = bundled[rel]
        assert result.format == fmt, rel
        assert len(result.traces) == n_traces, rel
        assert sum(len(t.messages()) for t in result.traces) == n_messages, rel
        assert sum(len(t.tool_calls()) for t in result.traces) == n_calls, rel
        assert [i for i in result.issues if i.severity == "error"] == [], rel


def test_auto_detection_picks_the_importer_of_each_bundled_file() -> None:
    root = bundled_traces_dir()
    for rel, (fmt, *_rest) in EXPECTED.items():
        assert detect_format(load_source(root / rel)) == fmt, rel


def test_every_tool_result_answers_a_call_of_an_earlier_assistant_message(
    bundled: dict[str, ImportResult],
) -> None:
    for trace in _all_traces(bundled):
        seen: set[str] = set()
        for event in trace.events:
            for block in getattr(event, "blocks", ()):
                if isinstance(block, ToolUse):
                    seen.add(block.id)
            if isinstance(event, ToolResults):
                missing = [r.tool_use_id for r in event.results if r.tool_use_id not in seen]
                assert not missing, f"{trace.id}: results for unknown calls {missing}"
        assert trace.problems() == [], trace.id


def test_tau_bench_runs_become_one_trace_each_with_the_fixed_policy_prompt(
    bundled: dict[str, ImportResult],
) -> None:
    traces = bundled["tau-bench/gpt-4o-airline.first40.json"].traces
    assert [t.header.record for t in traces] == list(range(40))
    assert len({t.id for t in traces}) == 40
    for trace in traces:
        assert "The current time is 2024-05-15 15:00:00 EST." in trace.system_prompt
        assert trace.is_append_only()
    first = traces[0]
    assert first.header.meta["task_id"] == 0
    call = first.tool_calls()[0]
    assert (call.name, call.input) == ("get_user_details", {"user_id": "mia_li_3668"})


def test_tau_bench_call_ids_reused_within_a_run_are_renamed_and_results_follow(
    bundled: dict[str, ImportResult],
) -> None:
    result = bundled["tau-bench/gpt-4o-airline.first40.json"]
    run0 = result.traces[0]
    ids = [c.id for c in run0.tool_calls()]
    assert len(ids) == len(set(ids)) == 8
    assert "call_HGn16KZh9oNCruxsMJ4gYXan-1" in ids  # every provider accepts it
    renames = [i for i in result.issues if i.record == 0]
    assert [i.field for i in renames] == ["traj[12].tool_calls[0].id", "traj[16].tool_calls[0].id"]
    assert all(i.severity == "warning" for i in renames)
    # reuse found by reading the source: 11 runs, 17 reused ids in all
    assert sorted({i.record for i in result.issues}) == [0, 3, 13, 14, 17, 28, 30, 31, 32, 33, 37]
    assert len(result.issues) == 17


def test_swe_agent_function_calling_runs_keep_call_ids_and_parse_arguments(
    bundled: dict[str, ImportResult],
) -> None:
    trace = bundled["swe-agent/function_calling_simple.traj"].traces[0]
    first = trace.tool_calls()[0]
    assert first.id == "call_PbWErNIge3YTrli3fiVvmIid"
    assert (first.name, first.input) == ("find_file", {"file_name": "missing_colon.py"})
    results = [e for e in trace.events if isinstance(e, ToolResults)]
    assert results[0].results[0].tool_use_id == first.id


def test_plain_text_agents_send_observations_as_user_messages(
    bundled: dict[str, ImportResult],
) -> None:
    for rel in (
        "swe-agent/marshmallow-1867__default_window100.traj",
        "mini-swe-agent/github_issue.traj.json",
    ):
        trace = bundled[rel].traces[0]
        users = [e for e in trace.events if isinstance(e, UserMessage)]
        assert users[0].observation is False
        assert all(u.observation for u in users[1:]), rel
        assert trace.tool_calls() == []


def test_swe_agent_model_comes_from_the_replay_config(bundled: dict[str, ImportResult]) -> None:
    trace = bundled["swe-agent/marshmallow-1867__default_window100.traj"].traces[0]
    assert trace.header.model == "gpt-4o"
    assert trace.header.license.startswith("MIT License")
    assert "SWE-agent/SWE-agent @ 3ea751c087f3" in trace.header.provenance


def test_synthetic_timestamps_follow_the_documented_rule(
    bundled: dict[str, ImportResult],
) -> None:
    trace = bundled["tau-bench/gpt-4o-airline.first40.json"].traces[0]
    events = trace.events
    # system + first user at 0; the first reply lasts 1 s + its characters / 100
    assert events[0].t == events[1].t == 0.0
    reply = trace.steps()[0].response
    assert events[2].t == round(1.0 + len(reply.text) / 100.0, 3)
    # the next user message comes 10 s later
    assert events[3].t == round(events[2].t + 10.0, 3)
    slow = import_file(
        bundled_traces_dir() / "tau-bench/gpt-4o-airline.first40.json", timing=Timing(user_s=60.0)
    ).traces[0]
    assert slow.events[3].t == round(slow.events[2].t + 60.0, 3)
    again = load_bundled_traces()
    assert [t for r in again for t in r.traces] == _all_traces(bundled)


# -- malformed input -------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _call(cid: str | None, name: str, arguments: str) -> dict[str, object]:
    out: dict[str, object] = {
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    if cid is not None:
        out["id"] = cid
    return out


def test_a_broken_jsonl_line_is_reported_and_the_other_lines_import(tmp_path: Path) -> None:
    lines = [
        json.dumps({"role": "system", "content": "be brief"}),
        json.dumps({"role": "user", "content": "hi"}),
        '{"role": "assistant", "content": ',
        json.dumps({"role": "assistant", "content": "hello"}),
    ]
    path = _write(tmp_path, "chat.jsonl", "\n".join(lines) + "\n")
    result = import_file(path)
    assert result.format == "openai"
    (issue,) = result.issues
    assert (issue.file, issue.record, issue.severity) == (str(path), 3, "error")
    assert "not valid JSON" in issue.message
    assert [m.text for m in result.traces[0].messages()] == ["hi", "hello"]


def test_a_record_missing_its_role_is_reported_and_skipped(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"content": "who am I"},
        {"role": "assistant", "content": "ok"},
    ]
    result = import_file(_write(tmp_path, "chat.json", json.dumps(messages)))
    (issue,) = result.issues
    assert (issue.record, issue.field) == (1, "role")
    assert len(result.traces[0].messages()) == 2


def test_bad_arguments_json_is_kept_invalid_with_a_warning(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c1", "search", '{"q": "x"'), _call("c2", "calc", "[1, 2]")],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
    ]
    result = import_file(_write(tmp_path, "chat.json", json.dumps(messages)))
    fields = [(i.record, i.field, i.severity) for i in result.issues]
    assert fields == [
        (1, "tool_calls[0].function.arguments", "warning"),
        (1, "tool_calls[1].function.arguments", "warning"),
    ]
    calls = result.traces[0].tool_calls()
    assert calls[0].input == invalid_arguments('{"q": "x"')
    assert calls[1].input == invalid_arguments("[1, 2]")


def test_a_tau_bench_run_without_traj_is_reported_and_the_others_import(tmp_path: Path) -> None:
    src = json.loads((bundled_traces_dir() / "tau-bench/gpt-4o-airline.first40.json").read_text())
    runs = [src[0], {"task_id": 99}, src[1]]
    runs[2]["traj"][3].pop("role")
    result = import_file(_write(tmp_path, "runs.json", json.dumps(runs)), "tau-bench")
    assert len(result.traces) == 2
    assert [(i.record, i.field) for i in result.issues if i.severity == "error"] == [
        (1, "traj"),
        (2, "traj[3].role"),
    ]


def test_missing_call_ids_are_generated_deterministically(tmp_path: Path) -> None:
    history = {
        "history": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {
                "role": "assistant",
                "content": "look",
                "tool_calls": json.dumps([_call(None, "ls", "{}")]),
            },
            {"role": "tool", "content": "a.py"},
            {
                "role": "assistant",
                "content": "done",
                "tool_calls": "[{'function': {'name': 'submit', 'arguments': '{}'}}]",
            },
            {"role": "tool", "content": "submitted"},
        ]
    }
    path = _write(tmp_path, "run.traj", json.dumps(history))
    first = import_file(path)
    assert first.format == "swe-agent"
    ids = [c.id for c in first.traces[0].tool_calls()]
    assert ids == ["call_2_0", "call_4_0"]
    assert first.traces[0].problems() == []
    assert import_file(path).traces == first.traces


def test_unanswered_calls_get_an_error_result_and_orphans_become_observations(
    tmp_path: Path,
) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [_call("c1", "ls", "{}")]},
        {"role": "assistant", "content": "again"},
        {"role": "tool", "tool_call_id": "zz", "content": "stray"},
    ]
    result = import_file(_write(tmp_path, "chat.json", json.dumps(messages)))
    trace = result.traces[0]
    assert trace.problems() == []
    tool_msgs = [e for e in trace.events if isinstance(e, ToolResults)]
    assert tool_msgs[0].results[0].content == NO_RESULT and tool_msgs[0].results[0].is_error
    assert "stray" in trace.messages()[-1].text
    assert {i.record for i in result.issues} == {2, 3}


@pytest.mark.parametrize(
    ("text", "fmt", "why"),
    [
        ("", "auto", "empty"),
        ("{not json", "auto", "not valid JSON"),
        ('{"foo": 1}', "auto", "cannot tell the trace format"),
        ('{"foo": 1}', "swe-agent", "no 'history' list"),
        ('[{"content": "no role"}]', "openai", "no openai message could be imported"),
        ("[]", "bogus", "unknown format"),
    ],
)
def test_a_file_that_cannot_be_imported_raises_naming_the_file_and_why(
    tmp_path: Path, text: str, fmt: str, why: str
) -> None:
    path = _write(tmp_path, "bad.json", text)
    with pytest.raises(TraceFormatError, match=why) as info:
        import_file(path, fmt)
    assert info.value.file == str(path)


def test_openai_jsonl_with_one_conversation_per_line_gives_one_trace_each(tmp_path: Path) -> None:
    convs = [
        {
            "messages": [
                {"role": "user", "content": f"q{i}"},
                {"role": "assistant", "content": f"a{i}"},
            ],
            "tools": [{"type": "function", "function": {"name": "f"}}],
        }
        for i in range(3)
    ]
    path = _write(tmp_path, "convs.jsonl", "\n".join(json.dumps(c) for c in convs))
    result = import_file(path)
    assert [t.id for t in result.traces] == [f"openai/convs#{n}" for n in (1, 2, 3)]
    assert result.traces[0].header.tools[0]["function"]["name"] == "f"


def test_a_regio_trace_is_detected_and_read_back(tmp_path: Path) -> None:
    from regio.traces import write_trace

    trace = import_file(bundled_traces_dir() / "mini-swe-agent/local.traj.json").traces[0]
    path = write_trace(trace, tmp_path / "local.jsonl")
    assert import_file(path).traces == (trace,)


def test_mini_swe_agent_object_form_is_detected(tmp_path: Path) -> None:
    src = json.loads((bundled_traces_dir() / "mini-swe-agent/local.traj.json").read_text())
    doc = {
        "trajectory_format": "mini-swe-agent-1",
        "info": {"exit_status": "Submitted"},
        "messages": src,
    }
    result = import_file(_write(tmp_path, "run.json", json.dumps(doc)))
    assert result.format == "mini-swe-agent"
    assert len(result.traces[0].messages()) == 5
    assert result.traces[0].header.meta == {"exit_status": "Submitted"}


def test_bundled_traces_dir_honours_the_override_and_says_when_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(bundled_traces_dir() / "mini-swe-agent", tmp_path / "mini-swe-agent")
    monkeypatch.setenv("REGIO_TRACES_DIR", str(tmp_path))
    assert [p.name for p in bundled_trace_paths()] == ["github_issue.traj.json", "local.traj.json"]
    monkeypatch.setenv("REGIO_TRACES_DIR", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="REGIO_TRACES_DIR"):
        bundled_traces_dir()


# -- property: imported traces are always consistent ----------------------------------------

ids = st.sampled_from(["a", "b", "c", None])


@st.composite
def openai_streams(draw: st.DrawFn) -> list[dict[str, object]]:
    out: list[dict[str, object]] = [{"role": "user", "content": "start"}]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "tool", "broken"]))
        if kind == "user":
            out.append({"role": "user", "content": draw(st.text(max_size=5))})
        elif kind == "assistant":
            out.append({"role": "assistant", "content": draw(st.text(max_size=5))})
        elif kind == "calls":
            calls = [
                _call(draw(ids), "f", draw(st.sampled_from(["{}", '{"x": 1}', "{bad"])))
                for _ in range(draw(st.integers(1, 3)))
            ]
            out.append({"role": "assistant", "content": None, "tool_calls": calls})
        elif kind == "tool":
            out.append({"role": "tool", "tool_call_id": draw(ids), "content": "r"})
        else:
            out.append({"content": "no role"})
    return out


@settings(max_examples=75, deadline=None)
@given(stream=openai_streams())
def test_imported_traces_never_hold_orphan_results_or_reused_ids(
    stream: list[dict[str, object]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("p") / "s.json"
    path.write_text(json.dumps(stream))
    (trace,) = import_file(path).traces
    problems = trace.problems()
    assert problems == [], problems
    times = [e.t for e in trace.events]
    assert times == sorted(times)


def test_trace_code_and_tests_name_no_absolute_path_of_a_machine() -> None:
    # The shared traces are found from the project root (../shared), never by a fixed path.
    root = Path(__file__).resolve().parents[1]
    needle = "/" + "work" + "/"
    files = [
        *sorted((root / "tests").glob("test_traces_*.py")),
        root / "tests" / "_traces_support.py",
        *sorted((root / "src" / "regio" / "traces").glob("*.py")),
        root / "docs" / "traces.md",
    ]
    offenders = [f.name for f in files if needle in f.read_text(encoding="utf-8")]
    assert offenders == []
