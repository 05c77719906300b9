"""Hostile trace files: depth, huge integers, lone surrogates, sizes; clean errors, no crash."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.callargs import invalid_arguments
from regio.cli import main
from regio.content import Text, ToolUse
from regio.errors import RegioError
from regio.traces import (
    AssistantMessage,
    Header,
    Trace,
    TraceFormatError,
    UserMessage,
    dumps_trace,
    import_file,
    loads_trace,
    read_trace,
    write_trace,
)
from regio.traces.safejson import DEFAULT_LIMITS, TraceLimits

HEADER = '{"type":"header","id":"x","source_format":"regio"}\n'


def _deep(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _tool_line(value: str) -> str:
    return (
        '{"type":"assistant","t":1.0,"blocks":[{"type":"tool_use","id":"c","name":"n",'
        f'"input":{value}}}]}}\n'
    )


def test_trace_errors_are_regio_errors() -> None:
    assert issubclass(TraceFormatError, RegioError)


# -- JSON depth -------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [DEFAULT_LIMITS.max_depth + 1, 5_000, 200_000])
def test_a_deeply_nested_regio_trace_is_refused_naming_file_and_line(depth: int) -> None:
    text = HEADER + '{"type":"user","t":0.0,"blocks":[]}\n' + _tool_line(_deep(depth))
    with pytest.raises(TraceFormatError, match=r"deep\.jsonl: line 3: .*nested"):
        loads_trace(text, "deep.jsonl")


def test_nesting_at_the_limit_is_accepted() -> None:
    trace = loads_trace(HEADER + _tool_line(_deep(DEFAULT_LIMITS.max_depth)))
    assert trace.tool_calls()[0].name == "n"


@pytest.mark.parametrize("depth", [DEFAULT_LIMITS.max_depth + 1, 200_000])
def test_a_deeply_nested_source_file_is_refused_naming_the_file(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "chat.json"
    path.write_text('[{"role":"user","content":"hi","x":' + _deep(depth) + "}]")
    with pytest.raises(TraceFormatError, match=r"chat\.json: .*nested"):
        import_file(path)


def test_deeply_nested_tool_arguments_are_kept_invalid_with_a_warning(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": _deep(3_000)}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    result = import_file(path, "openai")
    assert result.traces[0].tool_calls()[0].input == invalid_arguments(_deep(3_000))
    assert any("arguments refused" in issue.message for issue in result.issues)


def test_a_deeply_nested_jsonl_line_is_skipped_as_an_issue(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    path.write_text(json.dumps(lines[0]) + "\n" + _deep(10_000) + "\n" + json.dumps(lines[1]))
    result = import_file(path)
    assert [i.record for i in result.issues] == [2]
    assert len(result.traces[0].messages()) == 2


# -- integers ---------------------------------------------------------------------------------


def test_a_5000_digit_integer_in_a_source_file_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text('[{"role":"user","content":"hi","n":' + "7" * 5_000 + "}]")
    with pytest.raises(TraceFormatError, match="integer of 5000 digits"):
        import_file(path)


def test_a_5000_digit_integer_in_tool_arguments_is_kept_invalid(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    call["function"]["arguments"] = '{"n": ' + "9" * 5_000 + "}"
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [call]}])
    )
    result = import_file(path, "openai")
    expected = invalid_arguments(call["function"]["arguments"])
    assert result.traces[0].tool_calls()[0].input == expected


def test_a_5000_digit_integer_in_a_regio_trace_is_refused_naming_the_line() -> None:
    with pytest.raises(TraceFormatError, match="line 2"):
        loads_trace(HEADER + _tool_line('{"n":' + "1" * 5_000 + "}"), "big.jsonl")


# -- lone surrogates --------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_source_is_replaced_and_the_trace_can_be_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(
        '[{"role":"user","content":"caf\\ud83d end"},{"role":"assistant","content":"ok"}]'
    )
    result = import_file(path)
    text = result.traces[0].messages()[0].text
    assert text == "caf\ufffd end"
    assert any("surrogate" in issue.message for issue in result.issues)
    out = write_trace(result.traces[0], tmp_path / "out.jsonl")
    assert read_trace(out) == result.traces[0]


def test_a_valid_surrogate_pair_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text('[{"role":"user","content":"\\ud83d\\ude00"}]')
    assert import_file(path).traces[0].messages()[0].text == "\U0001f600"


def test_a_lone_surrogate_in_a_regio_trace_is_refused_naming_the_line() -> None:
    bad = HEADER + '{"type":"user","t":0.0,"blocks":[{"type":"text","text":"a\\udc00"}]}\n'
    with pytest.raises(TraceFormatError, match=r"s\.jsonl: line 2: a lone UTF-16 surrogate"):
        loads_trace(bad, "s.jsonl")


def test_writing_a_trace_holding_a_lone_surrogate_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    trace = Trace(Header("x", "regio"), (UserMessage(0.0, (Text("a\udc00"),)),))
    with pytest.raises(TraceFormatError, match="event 0 holds a lone UTF-16 surrogate"):
        dumps_trace(trace)
    with pytest.raises(TraceFormatError):
        write_trace(trace, tmp_path / "t.jsonl")
    assert list(tmp_path.iterdir()) == []


# -- sizes ------------------------------------------------------------------------------------


def test_a_json_document_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"role": "user", "content": "x" * 5_000}]))
    with pytest.raises(TraceFormatError, match="over the 1000-byte limit"):
        import_file(path, limits=TraceLimits(max_document_bytes=1_000))


def test_a_jsonl_line_over_the_piece_size_loads_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trace = Trace(Header("x", "regio"), (UserMessage(0.0, (Text("y" * 5_000),)),))
    write_trace(trace, path)
    limits = TraceLimits(max_line_bytes=1_000)
    assert read_trace(path, limits) == trace
    assert import_file(path, limits=limits).traces[0].events == trace.events


def test_a_jsonl_line_over_the_document_limit_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trace = Trace(Header("x", "regio"), (UserMessage(0.0, (Text("y" * 5_000),)),))
    write_trace(trace, path)
    limits = TraceLimits(max_line_bytes=1_000, max_document_bytes=3_000)
    with pytest.raises(TraceFormatError, match="line 2: longer than 3000 bytes"):
        read_trace(path, limits)
    with pytest.raises(TraceFormatError, match="line 2: longer than 3000 bytes"):
        import_file(path, limits=limits)


@settings(max_examples=20, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 3_000), min_size=1, max_size=6),
    piece=st.integers(1, 700),
)
def test_lines_read_in_pieces_are_the_lines_written(sizes: list[int], piece: int) -> None:
    import io

    from regio.traces.source import iter_lines

    lines = [b"x" * n + b"\n" for n in sizes]
    read = list(iter_lines(io.BytesIO(b"".join(lines)), "mem", TraceLimits(max_line_bytes=piece)))
    assert read == [(k + 1, line) for k, line in enumerate(lines) if line.strip()]


def test_any_file_over_the_file_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_trace(Trace(Header("x", "regio"), (UserMessage(0.0, (Text("y" * 500),)),)), path)
    with pytest.raises(TraceFormatError, match="over the 100-byte limit for any trace file"):
        import_file(path, limits=TraceLimits(max_file_bytes=100))


@settings(max_examples=15, deadline=None)
@given(calls=st.integers(1, 120), seed=st.integers(0, 10**6))
def test_streamed_jsonl_import_equals_the_in_memory_reading(calls: int, seed: int) -> None:
    from regio.traces import synthesize

    trace = synthesize(calls, seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_trace(trace, Path(tmp) / "s.jsonl")
        assert import_file(path).traces[0] == trace == loads_trace(path.read_bytes())
        assert read_trace(path) == trace


def test_a_newer_trace_format_version_is_refused_with_the_fix() -> None:
    with pytest.raises(TraceFormatError, match="upgrade regio"):
        loads_trace('{"type":"header","id":"x","source_format":"regio","version":99}\n')


# -- the CLI ----------------------------------------------------------------------------------


BAD_INPUTS = {
    "deep.json": '[{"role":"user","content":' + _deep(100_000) + "}]",
    "bigint.json": '[{"role":"user","content":"x","n":' + "1" * 5_000 + "}]",
    "surrogate.jsonl": HEADER
    + '{"type":"user","t":0.0,"blocks":[{"type":"text","text":"\\ud800"}]}',
    "garbage.json": "\x00\x01{not json",
    "shape.json": '{"nothing": true}',
    "deep.jsonl": HEADER + _tool_line(_deep(100_000)),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_cli_import_of_bad_input_exits_2_with_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = tmp_path / name
    path.write_text(BAD_INPUTS[name], encoding="utf-8", errors="surrogatepass")
    assert main(["traces", "import", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"error: {path}: ")
    assert err[1:] == ["error: nothing was imported"]
    assert "Traceback" not in "\n".join(err)


def test_cli_import_reports_a_bad_file_and_still_imports_the_good_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.json").write_text(BAD_INPUTS["deep.json"])
    (tmp_path / "good.json").write_text('[{"role":"user","content":"hi"}]')
    assert main(["traces", "import", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("openai/good")
    assert captured.err.startswith(f"error: {tmp_path / 'bad.json'}: ")
    assert (tmp_path / "out" / "openai__good.jsonl").is_file()


def test_cli_show_of_a_deep_trace_exits_2_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(BAD_INPUTS["deep.jsonl"])
    assert main(["traces", "show", str(path)]) == 2
    assert f"error: {path}: line 2:" in capsys.readouterr().err


def test_cli_import_prints_the_recorded_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixture = Path(__file__).parent / "fixtures" / "traces" / "codex"
    assert main(["traces", "import", str(fixture)]) == 0
    assert "usage=3/3  prompt=13850  cached=8704  written=0  hit=62.8%" in capsys.readouterr().out


def test_tool_use_inputs_deeper_than_the_limit_cannot_be_written_back_silently() -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(DEFAULT_LIMITS.max_depth + 5):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    trace = Trace(Header("x", "regio"), (AssistantMessage(0.0, (ToolUse("c", "n", deep),)),))
    with pytest.raises(TraceFormatError, match="line 2"):
        loads_trace(dumps_trace(trace))


def test_a_one_line_regio_trace_or_session_is_read_as_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(HEADER)
    assert import_file(path).traces[0].events == ()
    one = tmp_path / "one.jsonl"
    line = {"type": "user", "sessionId": "s", "parentUuid": None, "message": {"content": "hi"}}
    one.write_text(json.dumps(line) + "\n")
    result = import_file(one)
    assert (result.format, result.traces[0].messages()[0].text) == ("claude-code", "hi")
