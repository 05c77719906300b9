"""Peak memory of importing 100 MB trace files: streamed, or refused before reading.

Run with ``pytest benchmarks/test_bench_traces_memory.py -s``. Each import runs in a fresh
Python process; its peak RSS (``VmHWM`` in ``/proc/self/status``, Linux) is compared, within
the run, with the peak of a process that only imports regio (the baseline). Figures printed
per case:

* a 100 MB regio JSONL trace (a generated session) is **streamed**: the extra memory is the
  trace being built, bounded by a small multiple of the file size, never the parse tree of the
  whole file;
* a 100 MB Claude Code session (the fixture's lines repeated with fresh ids) is streamed too;
* a 100 MB OpenAI message list (one JSON document) is over ``max_document_bytes`` (64 MiB) and
  **refused before it is read**: the extra memory is about zero;
* a 100 MB single-line file is refused at ``max_document_bytes`` (64 MiB), the most one JSON
  value may hold: a line is read in pieces of ``max_line_bytes`` and joined, so about that
  cap is read before the refusal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from regio.traces import DEFAULT_LIMITS

SIZE = 100 * 2**20
ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys
from regio.traces import import_file, TraceError
try:
    result = import_file(sys.argv[1])
    print("imported", sum(len(t.events) for t in result.traces))
except TraceError as exc:
    print("refused", str(exc)[:120])
print("peak_kib", next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
"""
BASELINE = """
import regio.traces
print("peak_kib", next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
"""


def _peak(code: str, *args: str) -> tuple[int, str]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    ).stdout
    lines = out.strip().splitlines()
    return int(lines[-1].split()[1]) * 1024, "\n".join(lines[:-1])


@pytest.fixture(scope="module")
def baseline() -> int:
    if not Path("/proc/self/status").is_file():
        pytest.skip("peak RSS is read from /proc/self/status (Linux)")
    return _peak(BASELINE)[0]


@pytest.fixture(scope="module")
def big_regio_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from regio.traces import dumps_trace, synthesize

    path = tmp_path_factory.mktemp("mem") / "big.jsonl"
    trace = synthesize(2_000, 1)
    text = dumps_trace(trace)
    header, body = text.split("\n", 1)
    last = trace.events[-1].t
    with path.open("w", encoding="utf-8") as handle:
        handle.write(header + "\n")
        written, shift = len(header), 0.0
        while written < SIZE:
            for line in body.splitlines():
                event = json.loads(line)
                event["t"] = round(event["t"] + shift, 3)
                handle.write(json.dumps(event) + "\n")
            written += len(body)
            shift += last + 1.0
    return path


def _report(name: str, path: Path, peak: int, baseline: int, status: str) -> float:
    size = path.stat().st_size
    extra = max(peak - baseline, 0)
    ratio = extra / size
    print(
        f"\n{name}: file {size / 2**20:.0f} MiB, {status}, extra peak RSS "
        f"{extra / 2**20:.0f} MiB = {ratio:.2f} x file size"
    )
    return ratio


def test_bench_a_100mb_regio_trace_is_streamed_with_bounded_memory(
    big_regio_trace: Path, baseline: int
) -> None:
    peak, status = _peak(PROBE, str(big_regio_trace))
    assert status.startswith("imported")
    ratio = _report("regio JSONL (streamed)", big_regio_trace, peak, baseline, status)
    assert ratio < 3.0


def test_bench_a_100mb_claude_code_session_is_streamed_with_bounded_memory(
    tmp_path: Path, baseline: int
) -> None:
    fixture = ROOT / "tests" / "fixtures" / "traces" / "claude-code"
    lines = next(fixture.glob("*.jsonl")).read_text().splitlines()
    path = tmp_path / "session.jsonl"
    with path.open("w") as handle:
        written = k = 0
        while written < SIZE:
            k += 1
            for line in lines:
                text = line.replace('"msg_01', f'"msg_{k}_').replace('"toolu_0', f'"toolu_{k}_')
                handle.write(text + "\n")
                written += len(text) + 1
    peak, status = _peak(PROBE, str(path))
    assert status.startswith("imported")
    assert _report("Claude Code JSONL (streamed)", path, peak, baseline, status) < 3.0


def test_bench_a_100mb_json_document_is_refused_before_reading(
    tmp_path: Path, baseline: int
) -> None:
    path = tmp_path / "big.json"
    message = json.dumps({"role": "user", "content": "x" * 4096})
    with path.open("w") as handle:
        handle.write("[\n")
        for _ in range(SIZE // len(message)):
            handle.write(message + ",\n")
        handle.write(message + "\n]\n")
    peak, status = _peak(PROBE, str(path))
    assert status.startswith("refused")
    assert _report("OpenAI JSON document (size cap)", path, peak, baseline, status) < 0.05


def test_bench_a_100mb_single_line_is_refused_at_the_line_cap(
    tmp_path: Path, baseline: int
) -> None:
    path = tmp_path / "line.jsonl"
    with path.open("w") as handle:
        handle.write('{"type":"header","id":"x","source_format":"regio"}\n')
        handle.write('{"type":"system","t":0.0,"text":"')
        for _ in range(SIZE // 2**20):
            handle.write("y" * 2**20)
        handle.write('"}\n')
    peak, status = _peak(PROBE, str(path))
    assert status.startswith("refused")
    _report("one 100 MiB line (document cap)", path, peak, baseline, status)
    assert peak - baseline < 3 * DEFAULT_LIMITS.max_document_bytes  # the pieces + the last one
