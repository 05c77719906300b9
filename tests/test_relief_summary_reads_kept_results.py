"""A compaction's summarizer reads the tool results ``keep_last`` kept verbatim as the clear
stage's placeholders (issues 27, 29; :mod:`regio.compaction.relief._kept`): ``keep_last``
protects a result's place in the window, not its length in a summary. Every other block is read
as the window holds it; the window, the transcript and ``context_restore`` are unchanged."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction._cuts import unsent, unsent_from
from regio.compaction.relief._extract import salient_extract
from regio.content import Entry, ToolResult, ToolUse
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy, ToolRelief, placeholder
from regio.regions import CompactHistory, Pinned, SlidingWindow
from regio.summarizers import LLMSummarizer
from runtime_stubs import StubSummarizer, make_engine, words

FUZZ = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))
FAST = settings(max_examples=FUZZ, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: The clear stage never meets its minimum: every result stays verbatim in the window, so
#: the summaries cut results the clear stage kept by ``keep_last`` and results it could clear.
NEVER_CLEARS = ReliefPolicy(clear_at_least=10**6, trim_at_least=10**6, keep_last=3)


class WindowReader:
    """A summarizer that records, on every call, what it was given and what the window held
    then: the conversation's tool results (call id -> content) and the call ids of the results
    no request had carried yet."""

    def __init__(self) -> None:
        self.engine: Any = None
        self.inner = StubSummarizer(size=8, distinct=True)
        self.max_summary_tokens = self.inner.max_summary_tokens
        self.context_window = self.inner.context_window
        self.reserve_tokens = 0
        self.calls: list[tuple[list[Entry], dict[str, str], set[str]]] = []

    def __call__(self, entries: Any, standing: str, extra: str | None) -> str:
        region = self.engine.window.region("conversation")
        held = unsent(region.entries, unsent_from(self.engine.session))
        window = {
            b.tool_use_id: b.content
            for e in region.entries
            for b in e.blocks
            if isinstance(b, ToolResult)
        }
        unsent_ids = {
            b.tool_use_id
            for i in held
            for b in region.entries[i].blocks
            if isinstance(b, ToolResult)
        }
        self.calls.append((list(entries), window, unsent_ids))
        by_id = {e.id: e for e in region.entries}
        for e in entries:  # every other block is the window's, in the window's order
            if e.id in by_id:
                held_blocks = by_id[e.id].blocks
                assert len(e.blocks) == len(held_blocks)
                for b, w in zip(e.blocks, held_blocks, strict=True):
                    assert isinstance(b, ToolResult) or b == w
                    assert not isinstance(b, ToolResult) or b.tool_use_id == w.tool_use_id
        return str(self.inner(entries, standing, extra))


def _engine(relief: ReliefPolicy | None, summarizer: Any, budget: int = 4000) -> Any:
    engine = make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=budget,
                eviction=Compact(compact_count=500, trigger=1000, target=400),
            ),
        ],
        max_tokens=budget + 2000,
        summarizer=summarizer,
        relief=relief,
    )
    if isinstance(summarizer, WindowReader):
        summarizer.engine = engine
    return engine


def _result_text(i: int, size: int) -> str:
    return words(size, f"t{i}x") + f"\nFAILED tests/test_{i}.py - KeyError: 'k{i}'"


def _work(engine: Any, steps: int, size: int) -> None:
    """``steps`` calls (every fourth a ``read_file``, else ``bash``), each result of ``size``
    words and an error line, a request after each."""
    for i in range(steps):
        call = ToolUse(f"c{i}", _tool(f"c{i}"), {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        engine.add_tool_result(call.id, _result_text(i, size))
        engine.request()


def _run(relief: ReliefPolicy | None, steps: int = 12, size: int = 300) -> tuple[Any, WindowReader]:
    reader = WindowReader()
    engine = _engine(relief, reader)
    engine.add_user("fix the bug")
    _work(engine, steps, size)
    assert reader.calls, "the run never summarized"
    return engine, reader


def _expected_placeholder(engine: Any, call_id: str, tool: str, original: str) -> str:
    relief = engine.session.options.relief
    extract = salient_extract(
        original, relief.placeholder_extract_tokens, engine.session.count_text
    )
    return placeholder(call_id, tool, restorable=True, extract=extract)


def _read(reader: WindowReader) -> list[tuple[ToolResult, dict[str, str], set[str]]]:
    return [
        (b, window, held)
        for entries, window, held in reader.calls
        for e in entries
        for b in e.blocks
        if isinstance(b, ToolResult)
    ]


def _tool(call_id: str) -> str:
    return "read_file" if int(call_id[1:]) % 4 == 3 else "bash"


def test_a_cut_keep_last_result_reaches_the_summarizer_as_its_placeholder() -> None:
    engine, reader = _run(NEVER_CLEARS)
    replaced = [(b, w) for b, w, _ in _read(reader) if b.content != w[b.tool_use_id]]
    assert replaced, "no summary cut a result keep_last kept"
    for block, window in replaced:
        i = int(block.tool_use_id[1:])
        # the window holds the result whole; the summarizer read the clear stage's placeholder,
        # salient extract included (the error line is in it)
        assert window[block.tool_use_id] == _result_text(i, 300)
        want = _expected_placeholder(
            engine, block.tool_use_id, _tool(block.tool_use_id), _result_text(i, 300)
        )
        assert block.content == want
        assert f"KeyError: 'k{i}'" in block.content


def test_results_the_clear_stage_could_clear_are_read_as_the_window_holds_them() -> None:
    _, reader = _run(NEVER_CLEARS)
    whole = [b for b, w, _ in _read(reader) if b.content == w[b.tool_use_id]]
    # the oldest results are clear candidates the clear stage did not clear (under its
    # minimum): the summarizer reads them whole, as before
    assert any(b.tool_use_id == "c0" for b in whole)


def test_only_the_newest_keep_last_results_of_the_window_are_read_as_placeholders() -> None:
    _, reader = _run(NEVER_CLEARS)
    for entries, window, _ in reader.calls:
        answered = list(window)  # call ids in the window's order
        newest = set(answered[-3:])
        for e in entries:
            for b in e.blocks:
                if isinstance(b, ToolResult) and b.content != window[b.tool_use_id]:
                    assert b.tool_use_id in newest


def test_a_tool_with_clear_false_is_read_whole() -> None:
    policy = ReliefPolicy(
        clear_at_least=10**6,
        trim_at_least=10**6,
        keep_last=3,
        tools={"read_file": ToolRelief(clear=False)},
    )
    _, reader = _run(policy)
    read = _read(reader)
    assert any(_tool(b.tool_use_id) == "read_file" for b, _, _ in read)
    assert any(b.content != w[b.tool_use_id] for b, w, _ in read)  # bash results still are
    for block, window, _ in read:
        if _tool(block.tool_use_id) == "read_file":
            assert block.content == window[block.tool_use_id]


def test_a_tools_own_keep_last_counts_as_keep_last() -> None:
    policy = ReliefPolicy(
        clear_at_least=10**6,
        trim_at_least=10**6,
        keep_last=0,
        tools={"read_file": ToolRelief(keep_last=2)},
    )
    _, reader = _run(policy, steps=16)
    replaced = [b for b, w, _ in _read(reader) if b.content != w[b.tool_use_id]]
    assert replaced
    assert {_tool(b.tool_use_id) for b in replaced} == {"read_file"}


def test_a_result_not_answered_or_not_sent_yet_is_read_whole_by_a_manual_compaction() -> None:
    reader = WindowReader()
    engine = _engine(NEVER_CLEARS, reader, budget=20_000)
    engine.add_user("fix the bug")
    _work(engine, 4, 50)
    # c3 was sent and no assistant message answered it yet
    engine.compact(keep_tokens=0)
    ((entries, window, held),) = reader.calls
    read = {
        b.tool_use_id: b.content for e in entries for b in e.blocks if isinstance(b, ToolResult)
    }
    assert set(read) == {"c0", "c1", "c2", "c3"}
    assert read["c0"] == window["c0"]  # cleared by nobody: keep_last did not keep it either
    assert "cleared to save context" in read["c1"] and "cleared to save context" in read["c2"]
    assert read["c3"] == _result_text(3, 50)  # after the last assistant message
    # c4 is answered (an assistant message follows it) but no request carried it yet
    call = ToolUse("c4", "bash", {"cmd": "step 4"})
    engine.add_assistant("step 4", [call])
    engine.add_tool_result(call.id, _result_text(4, 50))
    engine.add_assistant("done")
    engine.add_user("thanks")
    engine.compact(keep_tokens=0)
    entries, window, held = reader.calls[-1]
    read = {
        b.tool_use_id: b.content for e in entries for b in e.blocks if isinstance(b, ToolResult)
    }
    assert "c4" in held and read["c4"] == _result_text(4, 50)


def test_a_result_whose_placeholder_is_not_smaller_is_read_whole() -> None:
    # 60-word results: the placeholder (call, tool, restore hint, an extract of up to 200
    # tokens holding every word of the result) is longer than the result
    _, reader = _run(NEVER_CLEARS, steps=30, size=60)
    read = _read(reader)
    assert read
    assert all(b.content == w[b.tool_use_id] for b, w, _ in read)


def test_with_relief_off_or_the_clear_stage_off_the_summarizer_reads_the_window() -> None:
    for policy in (
        None,
        ReliefPolicy(clear=False, trim_at_least=10**6, keep_last=3),
        ReliefPolicy(clear_at_least=10**6, trim_at_least=10**6, summarize_originals=True),
    ):
        _, reader = _run(policy)
        read = _read(reader)
        assert read
        assert all(b.content == w[b.tool_use_id] for b, w, _ in read), policy


def test_the_window_the_transcript_and_context_restore_keep_the_results_whole() -> None:
    engine, reader = _run(NEVER_CLEARS)
    replaced = {b.tool_use_id for b, w, _ in _read(reader) if b.content != w[b.tool_use_id]}
    assert replaced
    transcript = {
        b.tool_use_id: b.content
        for r in engine.transcript()
        if r.kind == "message" and r.entry is not None
        for b in r.entry.blocks
        if isinstance(b, ToolResult)
    }
    for call_id in replaced:
        original = _result_text(int(call_id[1:]), 300)
        assert transcript[call_id] == original
        outcome = engine.handle_tool_call("context_restore", {"call_id": call_id})
        assert outcome.ok and outcome.text == original
    # the summaries' reading cleared nothing in the window (the clear stage never ran)
    assert "clear" not in engine.book.relief.stages or not engine.book.relief.stages["clear"].runs


def test_an_llm_summarizer_is_sent_the_placeholder_in_its_transcript() -> None:
    sent: list[list[dict[str, str]]] = []

    def complete(messages: list[dict[str, str]]) -> str:
        sent.append(messages)
        return "summary of the work so far"

    summarizer = LLMSummarizer(complete=complete, max_summary_tokens=20)
    engine = _engine(NEVER_CLEARS, summarizer)
    engine.add_user("fix the bug")
    _work(engine, 12, 300)
    assert sent
    prompts = "\n".join(m["content"] for batch in sent for m in batch)
    assert "result of call c" in prompts and "cleared to save context" in prompts
    # a placeholder in the prompt stands where the result would be: its words are not there
    cleared = [
        int(line.split("result of call c")[1].split(" ")[0])
        for line in prompts.splitlines()
        if "cleared to save context" in line
    ]
    for i in cleared:
        assert f"t{i}x150 t{i}x151" not in prompts


# ----- the property ------------------------------------------------------------------------
step = st.tuples(
    st.sampled_from(["bash", "read_file", "grep"]),  # grep: clear false; read_file: keep 2
    st.integers(min_value=20, max_value=400),  # result words
    st.integers(min_value=1, max_value=3),  # parallel calls
    st.booleans(),  # a request after the step
    st.booleans(),  # a user message before it
)


@FAST
@given(
    st.lists(step, min_size=6, max_size=30),
    st.integers(min_value=0, max_value=4),
    st.sampled_from([10, 10**6]),
)
def test_every_result_a_summary_reads_is_the_windows_block_or_its_clear_placeholder(
    steps: list[tuple[str, int, int, bool, bool]], keep_last: int, clear_at_least: int
) -> None:
    policy = ReliefPolicy(
        clear_at_least=clear_at_least,
        trim_at_least=10**6,
        keep_last=keep_last,
        tools={"grep": ToolRelief(clear=False), "read_file": ToolRelief(keep_last=2)},
    )
    reader = WindowReader()
    engine = _engine(policy, reader)
    engine.add_user("fix the bug")
    originals: dict[str, tuple[str, str]] = {}
    n = 0
    for tool, size, parallel, ask, user in steps:
        if user:
            engine.add_user(f"and then {n}")
        calls = [ToolUse(f"c{n + k}", tool, {"cmd": f"{n + k}"}) for k in range(parallel)]
        engine.add_assistant(f"step {n}", calls)
        for call in calls:
            text = _result_text(int(call.id[1:]), size)
            originals[call.id] = (tool, text)
            engine.add_tool_result(call.id, text)
        n += parallel
        if ask:
            engine.request()
    engine.request()
    for block, window, held in _read(reader):
        if block.content == window[block.tool_use_id]:
            continue
        tool, text = originals[block.tool_use_id]
        assert block.tool_use_id not in held  # an unsent result is never replaced
        assert tool != "grep"  # nor a result of a tool with clear: false
        assert block.content == _expected_placeholder(engine, block.tool_use_id, tool, text)
        assert window[block.tool_use_id] == text  # what keep_last kept verbatim
        # and only a placeholder that is smaller, as the clear stage writes
        assert engine.session.count_text(block.content) < engine.session.count_text(text)
