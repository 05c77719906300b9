"""Fuzzing the trace importers: every input is imported or refused with a TraceError.

Inputs are random bytes, random JSON, and mutations of real records of every format (the
Claude Code and Codex fixtures, the bundled SWE-agent / mini-swe-agent / tau-bench runs, OpenAI
messages, regio traces, and OpenHands events when ../shared is present). An imported trace
must also be writable, read back equal, and consistent when it was converted
(``Trace.problems()`` empty: the builder's repairs hold for any input). Example counts:
``REGIO_FUZZ_EXAMPLES`` (default 40 per test in CI; e.g. ``REGIO_FUZZ_EXAMPLES=5000`` for a
long run).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _traces_support import shared_dir
from regio.traces import (
    FORMATS,
    TraceError,
    bundled_traces_dir,
    dumps_trace,
    import_file,
    loads_trace,
    synthesize,
)

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FIXTURES = Path(__file__).parent / "fixtures" / "traces"


def _seed_documents() -> list[tuple[str, Any]]:
    """(file name, parsed JSON) of small real documents, JSONL files as lists of lines."""
    seeds: list[tuple[str, Any]] = []
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        seeds.append((path.name, ("jsonl", lines)))
    root = bundled_traces_dir()
    for rel in (
        "swe-agent/function_calling_simple.traj",
        "mini-swe-agent/local.traj.json",
    ):
        seeds.append((Path(rel).name, json.loads((root / rel).read_text())))
    tau = json.loads((root / "tau-bench/gpt-4o-airline.first40.json").read_text())
    seeds.append(("runs.json", tau[:2]))
    regio = [json.loads(x) for x in dumps_trace(synthesize(6, 1)).splitlines()]
    seeds.append(("synth.jsonl", ("jsonl", regio)))
    seeds.append(("chat.json", [{"role": "user", "content": "hi"}, {"role": "assistant"}]))
    shared = shared_dir()
    if shared is not None:
        for path in sorted((shared / "traces" / "raw" / "openhands").glob("*.json")):
            seeds.append((path.name, json.loads(path.read_text())))
    return seeds


SEEDS = _seed_documents()

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["user", "assistant", "tool", "message", "function_call", "\ud800"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Replace, drop or keep parts of ``value`` at random (hypothesis chooses)."""
    action = data.draw(st.integers(0, 9), label="action")
    if action == 0 or depth > 6:
        return data.draw(json_values, label="replacement")
    if isinstance(value, dict) and value:
        keys = sorted(value)
        key = data.draw(st.sampled_from(keys), label="key")
        out = dict(value)
        if action == 1:
            del out[key]
        else:
            out[key] = _mutate(value[key], data, depth + 1)
        return out
    if isinstance(value, list) and value:
        i = data.draw(st.integers(0, len(value) - 1), label="index")
        out_list = list(value)
        if action == 1:
            del out_list[i]
        elif action == 2:
            out_list.insert(i, data.draw(json_values, label="inserted"))
        else:
            out_list[i] = _mutate(value[i], data, depth + 1)
        return out_list
    return value


def _encode(value: Any) -> bytes:
    if isinstance(value, tuple) and value and value[0] == "jsonl":
        return "".join(json.dumps(x) + "\n" for x in value[1]).encode("utf-8", "surrogatepass")
    return json.dumps(value).encode("utf-8", "surrogatepass")


def _check(name: str, payload: bytes, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(payload)
        try:
            result = import_file(path, fmt)
        except TraceError:
            return
        for trace in result.traces:
            assert loads_trace(dumps_trace(trace)) == trace
            if result.format != "regio":  # regio traces are read as written, not repaired
                assert trace.problems() == [], trace.problems()


formats = st.one_of(st.just("auto"), st.sampled_from(FORMATS))


@FUZZ
@given(seed=st.sampled_from(SEEDS), fmt=formats, data=st.data())
def test_mutated_real_records_are_imported_or_refused_with_a_trace_error(
    seed: tuple[str, Any], fmt: str, data: st.DataObject
) -> None:
    name, document = seed
    if isinstance(document, tuple):
        mutated: Any = ("jsonl", _mutate(document[1], data))
        if not isinstance(mutated[1], list):
            mutated = mutated[1]
    else:
        mutated = _mutate(document, data)
    _check(name, _encode(mutated), fmt)


@FUZZ
@given(payload=st.binary(max_size=400), name=st.sampled_from(["a.json", "b.jsonl", "c.traj"]))
def test_random_bytes_are_imported_or_refused_with_a_trace_error(payload: bytes, name: str) -> None:
    _check(name, payload, "auto")


@FUZZ
@given(value=json_values, fmt=formats, lines=st.booleans())
def test_random_json_is_imported_or_refused_with_a_trace_error(
    value: Any, fmt: str, lines: bool
) -> None:
    payload = _encode(("jsonl", value) if lines and isinstance(value, list) else value)
    _check("x.jsonl" if lines else "x.json", payload, fmt)
