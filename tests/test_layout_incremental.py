"""Incremental layout work equals a fresh computation (DESIGN.md section 6, engine overhead).

* :func:`regio.layout.increment.repair_resume` gives the same messages and events as the
  reference :func:`regio.layout.repair.repair` over random histories and edits;
* ``assemble`` and the renderers give byte-identical requests and payloads with warm caches
  and with every cache cleared.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Text, ToolResult, ToolUse
from regio.layout.increment import repair_resume
from regio.layout.repair import FROZEN, PMessage, repair

IDS = ["c1", "c2", "c3", "c4", "c5"]


@st.composite
def pmessages(draw: st.DrawFn) -> PMessage:
    role = draw(st.sampled_from(["user", "assistant", "tool", "user", "assistant"]))
    blocks = draw(
        st.lists(
            st.one_of(
                st.builds(Text, st.sampled_from(["", "a", "bb"])),
                st.builds(ToolUse, st.sampled_from(IDS), st.just("t")),
                st.builds(ToolResult, st.sampled_from(IDS), st.sampled_from(["r", "s"])),
            ),
            max_size=3,
        )
    )
    source = draw(st.sampled_from(["e", "note:x", f"{FROZEN}1"]))
    return PMessage(role, tuple(blocks), source, draw(st.booleans()))


edits = st.tuples(
    st.sampled_from(["append", "insert", "replace", "delete", "same"]),
    st.integers(min_value=0, max_value=40),
    st.lists(pmessages(), min_size=1, max_size=4),
)


def _apply(history: list[PMessage], edit: tuple[str, int, list[PMessage]]) -> list[PMessage]:
    kind, at, new = edit
    at = min(at, len(history))
    if kind == "append":
        return [*history, *new]
    if kind == "insert":
        return [*history[:at], *new, *history[at:]]
    if kind == "replace":
        return [*history[:at], *new, *history[at + len(new) :]]
    if kind == "delete":
        return [*history[:at], *history[at + 1 :]]
    return list(history)


@settings(max_examples=100, deadline=None)
@given(st.lists(pmessages(), max_size=30), st.lists(edits, min_size=1, max_size=5))
def test_incremental_repair_equals_a_full_repair_after_any_edits(
    history: list[PMessage], steps: list[tuple[str, int, list[PMessage]]]
) -> None:
    out, events, trace = repair_resume(history)
    assert (out, events) == repair(history)
    for edit in steps:
        history = _apply(history, edit)
        out, events, trace = repair_resume(history, trace)
        assert (out, events) == repair(history)


def test_an_appended_turn_resumes_from_the_previous_checkpoint() -> None:
    history = [
        PMessage("user", (Text("q"),), "e1"),
        PMessage("assistant", (ToolUse("c1", "t"),), "e2"),
        PMessage("tool", (ToolResult("c1", "r"),), "e3"),
    ]
    _, _, trace = repair_resume(history)
    assert trace.checkpoint_inputs[-1] == 3
    longer = [*history, PMessage("user", (Text("next"),), "e4")]
    out, events, again = repair_resume(longer, trace)
    assert (out, events) == repair(longer)
    assert again.output[0] is trace.output[0]


def test_a_late_result_for_a_call_taken_as_missing_repairs_like_a_full_pass() -> None:
    history = [
        PMessage("user", (Text("q"),), "e1"),
        PMessage("assistant", (ToolUse("c1", "t"),), "e2"),
        PMessage("user", (Text("again"),), "e3"),
    ]
    _, _, trace = repair_resume(history)
    assert "c1" in trace.checkpoints[-1].missing
    late = [*history, PMessage("tool", (ToolResult("c1", "late"),), "e4")]
    assert repair_resume(late, trace)[:2] == repair(late)


def _play(turns: int, clear_each_turn: bool) -> list[bytes]:
    import json

    from regio.layout.memo import clear_memos
    from regio.runtime import Engine, ExtractiveSummarizer
    from regio.tokens import get_counter

    blueprint = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000,
        max_output_tokens: 1000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, seed: "You help."}
  - {name: env_state, kind: keyed, volatility: rewritten, budget: 500}
  - {name: notes, kind: pinned, volatility: grows, budget: 4000}
  - {name: conversation, kind: sliding_window, budget: "80%"}
"""
    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        blueprint,
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter),
        clock=lambda: 0.0,
    )
    out = []
    for i in range(turns):
        if clear_each_turn:
            clear_memos()
        engine.add_user(f"turn {i}: look at item {i} " + "word " * (i % 7))
        if i % 3 == 0:
            engine.write("env_state", f"step={i}", key="env")
        if i % 4 == 1:
            engine.append("notes", f"note {i}")
        _, payload = engine.request("anthropic", "claude-sonnet-4-5")
        out.append(json.dumps(payload, sort_keys=False).encode())
        if i % 2:
            engine.add_assistant("", [ToolUse(f"c{i}", "ls", {"p": i})])
            engine.add_tool_result(f"c{i}", f"files {i}")
        else:
            engine.add_assistant(f"done {i}")
    return out


def test_payload_bytes_with_warm_caches_equal_those_with_caches_cleared() -> None:
    assert _play(40, clear_each_turn=False) == _play(40, clear_each_turn=True)
