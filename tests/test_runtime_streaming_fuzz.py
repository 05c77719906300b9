"""Streamed assistant turns under hostile deltas: any sequence of text, thinking and tool-call
deltas (lone surrogates, JSON escapes of them, values that are not text, calls out of order)
either goes in or raises a ``RegioError`` at the call; what finishes is admitted repaired, and
the engine still renders and saves.

Example count: ``REGIO_FUZZ_EXAMPLES`` (default 60 in CI; the long run in
``docs/security.md`` used 2,000).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mutation_support import CONVERSATION_BLUEPRINT, fuzz_settings, hostile_json, hostile_text
from regio.content import Text
from regio.engine import Engine
from regio.errors import RegioError

FUZZ = fuzz_settings(60)
BLUEPRINT = CONVERSATION_BLUEPRINT

call_ids = st.sampled_from(["c1", "c2", "c3"]) | hostile_json
texts = hostile_text | hostile_json


@st.composite
def argument_pieces(draw: st.DrawFn) -> list[Any]:
    """A JSON arguments text (surrogates written as ``\\ud800`` escapes) cut in pieces, or
    hostile values."""
    if draw(st.booleans()):
        return [draw(texts) for _ in range(draw(st.integers(1, 3)))]
    value = draw(st.dictionaries(hostile_text, hostile_json, max_size=3))
    try:
        raw = json.dumps(value)
    except (ValueError, RecursionError):
        raw = "{}"
    cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=3)))
    return [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]


operations = st.lists(
    st.one_of(
        st.tuples(st.just("text"), texts),
        st.tuples(st.just("thinking"), texts, st.none() | texts),
        st.tuples(st.just("start"), call_ids, st.sampled_from(["read", ""]) | texts),
        st.tuples(st.just("name"), call_ids, texts),
        st.tuples(st.just("delta"), call_ids, argument_pieces()),
        st.tuples(st.just("end"), call_ids),
    ),
    max_size=12,
)


def apply(stream: Any, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "text":
        stream.text(op[1])
    elif kind == "thinking":
        stream.thinking(op[1], op[2])
    elif kind == "start":
        stream.tool_call_start(op[1], op[2])
    elif kind == "name":
        stream.tool_call_name(op[1], op[2])
    elif kind == "delta":
        for piece in op[2]:
            stream.tool_call_delta(op[1], piece)
    else:
        stream.tool_call_end(op[1])


@FUZZ
@given(ops=operations, cancel=st.booleans())
def test_fuzz_hostile_stream_deltas_are_admitted_repaired_or_refused_at_the_call(
    ops: list[tuple[Any, ...]], cancel: bool
) -> None:
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("Read a.py.")
    stream = engine.stream_assistant()
    for op in ops:
        with contextlib.suppress(RegioError):  # refused at the call: the stream goes on
            apply(stream, op)
    entry = stream.cancel() if cancel else stream.finish()
    if entry is not None:
        assert entry.message.role == "assistant"
        for call in entry.message.tool_calls:
            assert isinstance(call.input, dict)
    engine.request()
    engine.request("openai")
    with tempfile.TemporaryDirectory() as tmp:
        Engine.load(engine.save(Path(tmp) / "state.json"))


def test_streamed_arguments_holding_a_surrogate_escape_are_admitted_repaired() -> None:
    engine = Engine.from_blueprint(BLUEPRINT)
    engine.add_user("Read the file.")
    seen: list[Any] = []
    engine.subscribe(seen.append)
    with engine.stream_assistant() as stream:
        stream.text("Reading \ud83d")
        stream.tool_call_start("c1", "read")
        stream.tool_call_delta("c1", '{"path": "caf')
        stream.tool_call_delta("c1", '\\udce9.txt"}')
        stream.tool_call_end("c1")
    assert stream.entry is not None
    assert stream.entry.blocks[0] == Text("Reading \ufffd")
    assert stream.entry.message.tool_calls[0].input == {"path": "caf\ufffd.txt"}
    (repaired,) = [e for e in seen if e.kind == "text_repaired"]
    assert repaired.places == ("blocks[0].text", "blocks[1].input['path']")
    engine.request()
    with tempfile.TemporaryDirectory() as tmp:
        engine.save(Path(tmp) / "state.json")
