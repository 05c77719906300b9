"""``regio count`` on real agent traces and on bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from regio.cli import main
from regio.content import Message
from regio.tokens import get_counter
from regio.tokens.chatfile import TranscriptError, parse_transcript, read_transcript

ROOT = Path(__file__).resolve().parents[1]


def _traces_dir() -> Path:
    path = ROOT / "examples" / "traces"  # bundled with the repository
    assert path.is_dir(), f"the bundled traces are missing: {path}"
    return path


def _trace_files() -> list[Path]:
    base = _traces_dir()
    return sorted(
        p for p in base.rglob("*") if p.is_file() and p.suffix in {".json", ".jsonl", ".traj"}
    )


LINE = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\d+)$")
TOTAL = re.compile(r"^total (\d+) tokens \((\S+)\)$")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    status = main(["count", *argv])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def test_the_real_traces_are_present() -> None:
    names = {p.name for p in _trace_files()}
    assert "marshmallow-1867__function_calling_replace.traj" in names
    assert len(names) >= 8


@pytest.mark.parametrize("trace", _trace_files(), ids=lambda p: p.name)
@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base", "heuristic"])
def test_every_real_trace_counts_and_its_last_line_is_the_sum(
    capsys: pytest.CaptureFixture[str], trace: Path, encoding: str
) -> None:
    status, lines, err = _run(capsys, str(trace), "--encoding", encoding)
    assert status == 0, err
    assert len(lines) >= 2
    total = TOTAL.match(lines[-1])
    assert total is not None, lines[-1]
    assert total.group(2) == encoding
    per_message = []
    for line in lines[:-1]:
        match = LINE.match(line)
        assert match is not None, line
        per_message.append(int(match.group(3)))
    assert all(n > 0 for n in per_message)  # every message carries at least its overhead
    assert int(total.group(1)) == sum(per_message)
    assert len(per_message) == len(read_transcript(trace))


def test_tau_bench_runs_are_numbered_run_dot_message(capsys: pytest.CaptureFixture[str]) -> None:
    trace = next(p for p in _trace_files() if "tau-bench" in str(p))
    status, lines, _ = _run(capsys, str(trace))
    assert status == 0
    assert lines[0].split()[:2] == ["0.0", "system"]
    assert any(line.split()[0].startswith("39.") for line in lines[:-1])


def test_tool_calls_and_tool_results_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    trace = next(p for p in _trace_files() if p.name.startswith("marshmallow-1867__function"))
    items = read_transcript(trace)
    calls = [b for item in items for b in item.message.tool_calls]
    results = [b for item in items for b in item.message.tool_results]
    assert calls and results
    assert {r.tool_use_id for r in results} <= {c.id for c in calls}
    assert all(c.name for c in calls)


def test_a_text_file_prints_only_the_total(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello world", encoding="utf-8")
    status, lines, _ = _run(capsys, str(path), "--encoding", "cl100k_base")
    assert status == 0
    assert lines == ["total 2 tokens (cl100k_base)"]


def test_jsonl_list_parts_names_and_tool_calls_are_all_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    messages = [
        {"role": "system", "content": "hello world"},
        {"role": "user", "name": "mia", "content": [{"type": "text", "text": "hello world"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "hello world"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in messages) + "\n", encoding="utf-8")
    status, lines, _ = _run(capsys, str(path))
    assert status == 0
    counter = get_counter("o200k_base")
    tokens = [int(LINE.match(line).group(3)) for line in lines[:-1]]  # type: ignore[union-attr]
    assert tokens[0] == 2 + 3
    assert tokens[1] == 2 + 3 + 1 + counter.count("mia")
    assert tokens[2] == 3 + counter.count("lookup") + counter.count('{"q":"x"}')
    assert tokens[3] == 2 + 3
    assert lines[-1] == f"total {sum(tokens)} tokens (o200k_base)"


def test_model_picks_tokenizer_and_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hello world"}]), encoding="utf-8")
    status, lines, _ = _run(capsys, str(path), "--model", "gpt-3.5-turbo")
    assert status == 0
    assert lines[-1] == "total 5 tokens (cl100k_base)"


def test_a_missing_file_exits_2_with_a_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, lines, err = _run(capsys, str(tmp_path / "absent.json"))
    assert status == 2
    assert lines == []
    assert "absent.json: no such file" in err


def test_bad_json_exits_2_naming_line_and_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[{"role": "user",\n "content": }]', encoding="utf-8")
    status, _, err = _run(capsys, str(path))
    assert status == 2
    assert "broken.json: invalid JSON at line 2" in err


def test_json_without_messages_exits_2_naming_the_expected_shapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model": "gpt-4o"}', encoding="utf-8")
    status, _, err = _run(capsys, str(path))
    assert status == 2
    assert "no messages found" in err and "--text" in err
    status, lines, _ = _run(capsys, str(path), "--text")
    assert status == 0 and lines[-1].startswith("total ")


def test_non_utf8_text_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "binary.txt"
    path.write_bytes(b"\xff\xfe\x00garbage\x80")
    status, _, err = _run(capsys, str(path))
    assert status == 2
    assert "not UTF-8" in err


def test_parse_transcript_rejects_a_message_without_a_role() -> None:
    with pytest.raises(TranscriptError, match="no messages found"):
        parse_transcript([{"content": "x"}], "t.json")
    with pytest.raises(TranscriptError, match=r"message 0\.1"):
        parse_transcript([{"traj": [{"role": "user", "content": "a"}, {"content": "b"}]}], "t.json")


def test_anthropic_content_blocks_are_converted() -> None:
    items = parse_transcript(
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                        {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": [{"type": "text", "text": "a.py"}],
                        },
                    ],
                },
            ]
        }
    )
    first: Message = items[0].message
    assert [type(b).__name__ for b in first.blocks] == ["Thinking", "ToolUse"]
    assert items[1].message.tool_results[0].content == "a.py"
