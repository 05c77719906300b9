"""The generator's shapes: each is deterministic per seed, well formed, of exactly the asked
calls, and has the structure it declares (parallel calls, large results, re-read files, long
chat turns, few user messages)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Text, ToolUse
from regio.tokens import get_counter
from regio.traces import dumps_trace, loads_trace, synthesize
from regio.traces.format import AssistantMessage, ToolResults, UserMessage
from regio.traces.synthshapes import SHAPES

SHAPED = [s for s in SHAPES if s != "coding"]
COUNTER = get_counter("o200k_base")


@settings(max_examples=12, deadline=None)
@given(shape=st.sampled_from(SHAPED), calls=st.integers(1, 60), seed=st.integers(0, 2**32))
def test_every_shape_has_exactly_the_asked_calls_and_is_well_formed(
    shape: str, calls: int, seed: int
) -> None:
    trace = synthesize(calls, seed, shape=shape)
    assert len(trace.steps()) == calls
    assert trace.problems() == []
    assert trace.is_append_only()
    assert loads_trace(dumps_trace(trace)) == trace
    assert trace.header.meta["shape"] == shape and trace.id == f"synth/{shape}-{calls}-seed{seed}"


@pytest.mark.parametrize("shape", SHAPED)
def test_a_shape_gives_the_same_bytes_for_the_same_seed_in_another_process(shape: str) -> None:
    code = "import sys; from regio.traces import synthesize, dumps_trace; "
    code += f"sys.stdout.write(dumps_trace(synthesize(15, 3, shape={shape!r})))"
    env = dict(os.environ, PYTHONHASHSEED="4321")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out == dumps_trace(synthesize(15, 3, shape=shape))
    assert out != dumps_trace(synthesize(15, 4, shape=shape))


def test_the_coding_shape_is_the_generator_of_before_shapes() -> None:
    assert dumps_trace(synthesize(60, 9)) == dumps_trace(synthesize(60, 9, shape="coding"))
    assert synthesize(60, 9).id == "synth/coding-60-seed9"


def test_an_unknown_shape_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown shape 'wide'.*parallel"):
        synthesize(10, 1, shape="wide")


def _results(shape: str, calls: int = 100, seed: int = 5) -> list[tuple[int, ...]]:
    """Per tool-results message, each result's tokens."""
    trace = synthesize(calls, seed, shape=shape)
    return [
        tuple(COUNTER.count(r.content) for r in e.results if isinstance(r.content, str))
        for e in trace.events
        if isinstance(e, ToolResults)
    ]


def test_parallel_turns_have_two_to_four_large_results_often_past_half_a_32k_window() -> None:
    turns = _results("parallel")
    assert {len(t) for t in turns} == {2, 3, 4}
    sizes = [n for t in turns for n in t]
    assert min(sizes) >= 2_000 and max(sizes) <= 6_800  # 2,500-6,500 tokens and a footer
    assert sum(sum(t) > 16_384 for t in turns) >= len(turns) // 10
    assert max(sum(t) for t in turns) < 32_768


def test_bigtool_results_are_two_to_twenty_thousand_tokens() -> None:
    sizes = [n for t in _results("bigtool") for n in t]
    assert min(sizes) >= 1_700 and max(sizes) <= 20_500
    assert sorted(sizes)[len(sizes) // 2] > 4_000


def test_reread_sessions_read_the_same_ten_files_again_and_see_their_edits() -> None:
    trace = synthesize(300, 2, shape="reread")
    reads: Counter[str] = Counter()
    contents: dict[str, set[str]] = {}
    calls = {}
    for e in trace.events:
        if isinstance(e, AssistantMessage):
            calls.update({b.id: b for b in e.blocks if isinstance(b, ToolUse)})
        if isinstance(e, ToolResults):
            for r in e.results:
                command = str(calls[r.tool_use_id].input["command"])
                if command.startswith("cat /"):  # a read of one of the session's files
                    path = command.split()[1]
                    reads[path] += 1
                    contents.setdefault(path, set()).add(r.content.split("\n(Open file:")[0])
    assert len(reads) == 10
    assert sum(reads.values()) > 150 and min(reads.values()) >= 3
    assert any(len(v) > 1 for v in contents.values())  # an edit changed what a read returns
    assert sum(len(v) for v in contents.values()) < sum(reads.values()) // 2


def test_chat_sessions_are_long_prose_turns_with_few_tool_calls() -> None:
    trace = synthesize(200, 4, shape="chat")
    users = [e for e in trace.events if isinstance(e, UserMessage)]
    replies = [
        sum(len(b.text) for b in e.blocks if isinstance(b, Text))
        for e in trace.events
        if isinstance(e, AssistantMessage) and not any(isinstance(b, ToolUse) for b in e.blocks)
    ]
    tools = sum(isinstance(e, ToolResults) for e in trace.events)
    assert len(users) > 120 and tools < 60
    assert sorted(replies)[len(replies) // 2] > 1_500
    assert sorted(len(u.blocks[0].text) for u in users)[len(users) // 2] > 1_500


def test_solo_sessions_have_one_user_task_per_250_calls() -> None:
    trace = synthesize(500, 6, shape="solo")
    assert sum(isinstance(e, UserMessage) for e in trace.events) == 2
    assert trace.header.meta["episodes"] == 2
