"""``context_restore`` finds a result through the session's own index of its transcript
(built from the records on first use, so a loaded session has it too), never by scanning the
whole session; it finds exactly what a scan would, and an unknown call id comes back to the
agent as text."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolResult
from regio.policies.relief import ReliefPolicy
from regio.regions import Pinned, SlidingWindow
from regio.runtime.transcript import Transcript
from runtime_stubs import StubCounter, make_engine, words


def _scan(t: Transcript, call_id: str) -> ToolResult | None:
    for record in reversed(t.records):
        if record.kind == "message" and record.entry is not None:
            for b in record.entry.blocks:
                if isinstance(b, ToolResult) and b.tool_use_id == call_id:
                    return b
    return None


_RECORD = st.tuples(
    st.sampled_from(["message", "write"]),
    st.lists(st.integers(min_value=0, max_value=6), max_size=3),  # call ids of its results
    st.integers(min_value=0, max_value=5),  # entry id
)


@given(st.lists(_RECORD, max_size=30), st.integers(min_value=0, max_value=40))
def test_the_transcript_index_finds_what_a_scan_finds_also_after_a_reload(
    records: list[Any], split: int
) -> None:
    live = Transcript()
    for n, (kind, ids, entry_id) in enumerate(records):
        blocks = tuple(ToolResult(f"c{i}", f"r{n}-{i}") for i in ids) or (Text(f"t{n}"),)
        live.add(kind, "conversation", turn=0, entry=Entry(id=f"e{entry_id}", blocks=blocks))
        if n == split:  # a lookup midway, then more records come
            assert live.tool_result("c0") == _scan(live, "c0")
    loaded = Transcript(list(live.records))  # what loading a saved session does
    for t in (live, loaded):
        for i in range(8):
            assert t.tool_result(f"c{i}") == _scan(t, f"c{i}")
        for e in range(7):
            found = [r.entry for r in t.records if r.kind == "message" and r.entry.id == f"e{e}"]
            assert t.message(f"e{e}") == (found[-1] if found else None)


def test_an_unknown_call_id_comes_back_as_text_after_a_reload(tmp_path: Any) -> None:
    engine = make_engine(
        [Pinned(name="system", budget=200), SlidingWindow(name="conversation", budget=8000)],
        max_tokens=10000,
        relief=ReliefPolicy(),
    )
    engine.add_user("go")
    engine.add_assistant("", [])
    path = engine.save(tmp_path / "s.json")
    loaded = type(engine).load(path, token_counter=StubCounter())
    for e in (engine, loaded):
        out = e.handle_tool_call("context_restore", {"call_id": "nope" + words(3)})
        assert "no tool result with call_id" in out.text
