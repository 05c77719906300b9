"""Field cases of the compaction flush: FC-06, 08, 10, 11, 12, 13, 14, 21, 24, 25, 28."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from regio.content import Entry, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.errors import CompactionNoProgressError
from regio.layout import check_anthropic, check_openai_chat
from regio.regions import CompactHistory, Compacting, Keyed, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words


def put(engine: Engine, region: str, role: str | None, blocks: object, tokens: int) -> Entry:
    entry = engine.window.make_entry(blocks, role=role, tokens=tokens)  # type: ignore[arg-type]
    result = engine.write(region, entry)
    assert not hasattr(result, "reason"), result
    return entry


def call(cid: str) -> tuple[ToolUse]:
    return (ToolUse(cid, "tool", {"q": cid}),)


def result(cid: str, text: str = "ok") -> tuple[ToolResult]:
    return (ToolResult(cid, text),)


def ids(entries: Sequence[Entry]) -> list[str]:
    return [e.id for e in entries]


def both_renderers_ok(engine: Engine) -> None:
    _, a = engine.request("anthropic", "claude-sonnet-4-5")
    _, o = engine.request("openai", "gpt-4o")
    assert check_anthropic(a) == [] and check_openai_chat(o) == []


# --- FC-06 ------------------------------------------------------------------------------
def test_fc_06_a_flush_check_below_the_trigger_changes_nothing() -> None:
    stub = StubSummarizer(5)
    engine = make_engine(
        [
            Pinned(name="S", budget=100),
            Compacting(name="work", budget=20_000, threshold_tokens=10_000),
            CompactHistory(name="hist", budget=1_000, source="work"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=stub,
    )
    put(engine, "work", "user", "u1", 20)
    put(engine, "work", "assistant", call("c1"), 20)
    put(engine, "work", "tool", result("c1"), 100)
    put(engine, "work", "assistant", "a2", 20)
    put(engine, "work", "user", "u2", 20)
    engine.add_user("question")
    before_ids = ids(engine.window.region("work").entries)
    before_hash = engine.window.region("work").content_hash()
    _, first = engine.request()
    kinds_before = len(engine.events.history)
    for _ in range(2):
        assert engine.flush() is None
        assert engine.compact() is None
    _, second = engine.request()
    assert stub.inputs == []
    assert ids(engine.window.region("work").entries) == before_ids
    assert engine.window.region("work").content_hash() == before_hash
    assert first == second
    later = {e.kind for e in engine.events.history[kinds_before:]}
    assert not later & {"compaction_completed", "cleared", "evicted"}


# --- FC-08 ------------------------------------------------------------------------------
def test_fc_08_the_cut_falls_on_a_unit_boundary_not_inside_a_parallel_call() -> None:
    stub = StubSummarizer(50)
    engine = make_engine(
        [
            Compacting(name="work", budget=10_000, threshold_tokens=2_000),
            CompactHistory(name="hist", budget=1_000, source="work"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=stub,
        targets={"work": 500},
    )
    u1 = put(engine, "work", "user", "u1", 20)
    a1 = put(engine, "work", "assistant", (ToolUse("c1", "t", {}), ToolUse("c2", "t", {})), 20)
    t1 = put(engine, "work", "tool", result("c1"), 3_000)
    t2 = put(engine, "work", "tool", result("c2"), 20)
    a2 = put(engine, "work", "assistant", "a2", 20)
    u2 = put(engine, "work", "user", "u2", 20)
    engine.add_user("go")
    done = engine.flush()
    assert done is not None
    assert ids(stub.inputs[0]) == [u1.id, a1.id, t1.id, t2.id]
    work = engine.window.region("work")
    assert ids(work.entries) == [a2.id, u2.id]
    assert work.used_tokens + engine.window.region("hist").used_tokens == 90
    summarized_calls = {b.id for e in stub.inputs[0] for b in e.blocks if isinstance(b, ToolUse)}
    kept_calls = {
        b.tool_use_id for e in work.entries for b in e.blocks if isinstance(b, ToolResult)
    }
    assert not summarized_calls & kept_calls
    both_renderers_ok(engine)


# --- FC-10 ------------------------------------------------------------------------------
def _approval_engine(stub: StubSummarizer) -> Engine:
    return make_engine(
        [
            Pinned(name="S", budget=100),
            CompactHistory(name="hist", budget=1_000, source="conversation"),
            SlidingWindow(name="conversation", budget=5_000),
        ],
        summarizer=stub,
    )


def test_fc_10_an_open_call_is_never_summarized_and_its_late_result_joins_it() -> None:
    stub = StubSummarizer(3)
    engine = _approval_engine(stub)
    engine.add_user(words(10, "risky"), tokens=10)
    a1 = engine.add_assistant("", [ToolUse("c1", "approve", {"action": "rm"})], tokens=10)
    for i in (2, 3):
        engine.add_user(words(10, f"u{i}"), tokens=10)
        engine.add_assistant(words(10, f"a{i}"), tokens=10)
    engine.compact(keep_tokens=0)
    assert all(a1.id not in ids(inp) for inp in stub.inputs)
    conv = engine.window.region("conversation")
    assert a1.id in ids(conv.entries)
    both_renderers_ok(engine)
    assert all(
        r.kind != "message" or r.entry is None or r.entry.role != "tool"
        for r in engine.transcript()
    )
    t1 = engine.add_tool_result("c1", "approved", tokens=3)
    engine.add_assistant("done", tokens=3)
    engine.add_user("thanks", tokens=3)
    assert t1.group == a1.group
    _, payload = engine.request("anthropic", "m")
    results = [
        b
        for m in payload["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == ["c1"]
    assert "approved" in str(results[0]["content"])
    both_renderers_ok(engine)
    engine.compact(keep_tokens=0)
    assert a1.id in {i for inp in stub.inputs for i in ids(inp)}


# --- FC-11 ------------------------------------------------------------------------------
FACTS = {
    "order": "ORD-4471",
    "codename": "Bluefin",
    "deadline": "2025-03-14",
    "budget": "12,500 EUR",
    "host": "db-07.internal",
    "language": "Portuguese",
    "ticket": "TCK-9902",
    "batch": "64",
}


def test_fc_11_keyed_facts_survive_repeated_lossy_compaction() -> None:
    stub = StubSummarizer(100, distinct=True)  # a different fact-free summary per call
    engine = make_engine(
        [
            Keyed(name="facts", budget=500),
            Compacting(name="work", budget=4_000, threshold_tokens=3_000),
            CompactHistory(name="hist", budget=5_000, source="work"),
            SlidingWindow(name="conversation", budget=5_000),
        ],
        summarizer=stub,
        targets={"work": 1_500},
    )
    for key, value in FACTS.items():
        engine.write("facts", value, key=key)
    engine.add_user("go")
    flushes = 0
    for i in range(48):
        put(engine, "work", None, words(200, f"f{i}_"), 200)
        if engine.flush() is not None:
            flushes += 1
    assert flushes >= 4
    facts = engine.window.region("facts")
    assert {e.key: e.text for e in facts.entries} == FACTS
    _, payload = engine.request("anthropic", "m")
    rendered = str(payload)
    assert all(v in rendered for v in FACTS.values())
    assert len(set(stub.outputs)) == len(stub.outputs) >= 4
    assert not any(f" {v} " in f" {out} " for out in stub.outputs for v in FACTS.values())
    for k, inp in enumerate(stub.inputs[1:], start=1):
        # the previous summary, verbatim, carried forward (not rebuilt from scratch)
        assert inp[0].meta.get("summary") and inp[0].text == stub.outputs[k - 1]


# --- FC-12 ------------------------------------------------------------------------------
def test_fc_12_each_flush_summarizes_the_previous_summary_plus_exactly_the_evicted_units() -> None:
    # the case's numbers: budget = trigger = 256, summary cap 128, stub summary exactly 100.
    # A write that does not fit would roll the oldest rounds off unsummarized (the bug); the
    # engine summarizes them first instead (runtime.room.room_steps), and flushes after
    # each append.
    stub = StubSummarizer(100)
    engine = make_engine(
        [
            Compacting(name="work", budget=256, compact_at=None, threshold_tokens=256),
            CompactHistory(name="hist", budget=128, source="work"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=stub,
        carry_forward="replace",
    )
    engine.add_user("go")
    # u1 is the newest user message of the region: protected, while the completed tool rounds
    # after it (the same turn) are compacted (field-cases.md section 0)
    u1 = put(engine, "work", "user", "u1", 20)
    appended = [u1.id]
    flushes = 0
    previous: Entry | None = None
    for i in range(12):
        for role, blocks in (("assistant", call(f"c{i}")), ("tool", result(f"c{i}"))):
            work_before = ids(engine.window.region("work").entries)
            mark = len(engine.events.history)
            appended.append(put(engine, "work", role, blocks, 30).id)
            engine.flush()
            done = [e for e in engine.events.history[mark:] if e.kind == "compaction_finished"]
            assert not [e for e in engine.events.history[mark:] if e.kind == "evicted"]
            if not done:
                assert ids(engine.window.region("work").entries) == [*work_before, appended[-1]]
                continue
            assert len(done) == 1
            flushes += 1
            inp = stub.inputs[-1]
            evicted = list(done[0].replaced_ids)  # type: ignore[attr-defined]
            assert evicted == work_before[1 : 1 + len(evicted)]  # the oldest rounds after u1
            assert u1.id not in evicted and ids(engine.window.region("work").entries)[0] == u1.id
            expected = ([previous.id] if previous is not None else []) + evicted
            assert ids(inp) == expected
            hist = engine.window.region("hist").entries
            assert len(hist) == 1 and hist[0].tokens == 100
            assert previous is None or hist[0].id != previous.id  # a new summary version
            previous = hist[0]
            covered = set(previous.meta["covers_all"])
            kept = set(ids(engine.window.region("work").entries))
            assert covered | kept == set(appended) and not covered & kept
            assert (
                engine.window.region("work").used_tokens + engine.window.region("hist").used_tokens
            ) <= 256
            assert previous.meta["version"] == flushes
            _, payload = engine.request("anthropic", "m", flush=False)
            assert previous.text in str(payload)  # the projection shows the latest summary
        assert engine.window.region("work").used_tokens <= 256
    assert flushes >= 3


# --- FC-13 ------------------------------------------------------------------------------
def _conversation_engine(stub: StubSummarizer, **options: object) -> Engine:
    return make_engine(
        [
            Pinned(name="S", budget=100),
            CompactHistory(name="hist", budget=1_000, source="conversation"),
            SlidingWindow(name="conversation", budget=100_000),
        ],
        summarizer=stub,
        max_tokens=200_000,
        **options,
    )  # type: ignore[arg-type]


def test_fc_13_the_current_question_is_never_summarized() -> None:
    stub = StubSummarizer(4)
    engine = _conversation_engine(stub)
    u1 = engine.add_user(words(8, "u1"), tokens=8)
    a1 = engine.add_assistant(words(8, "a1"), tokens=8)
    u2 = engine.add_user(words(8, "u2"), tokens=8)
    assert engine.compact(keep_tokens=0) is not None
    assert ids(stub.inputs[0]) == [u1.id, a1.id]
    assert ids(engine.window.region("conversation").entries) == [u2.id]
    _, payload = engine.request("openai", "gpt-4o")
    content = payload["messages"][-1]["content"]  # the summary opens the same user message
    assert (content if isinstance(content, str) else content[-1]["text"]) == u2.text
    _, payload = engine.request("anthropic", "m")
    assert u2.text in str(payload["messages"][-1]["content"])


def test_fc_13_a_lone_oversized_question_is_kept_and_a_hard_overflow_is_typed() -> None:
    stub = StubSummarizer(4)
    engine = _conversation_engine(stub, context_window=50)
    u1 = engine.add_user(words(60, "u"), tokens=60)
    assert engine.compact(keep_tokens=0) is None and stub.inputs == []
    assert ids(engine.window.region("conversation").entries) == [u1.id]
    from regio.errors import ContextOverflowError

    with pytest.raises(ContextOverflowError):
        engine.request()


# --- FC-14 ------------------------------------------------------------------------------
def _rounds(engine: Engine) -> list[list[Entry]]:
    rounds = []
    for i in range(1, 5):
        a = engine.add_assistant("", list(call(f"c{i}")), tokens=10)
        t = engine.add_tool_result(f"c{i}", f"r{i}", tokens=10)
        rounds.append([a, t])
    return rounds


def test_fc_14_a_partial_compaction_keeps_the_items_after_the_cutoff_byte_identical() -> None:
    stub = StubSummarizer(3)
    engine = _conversation_engine(stub)
    m1, m2, m3, m4 = _rounds(engine)
    engine.compact(keep_tokens=40)
    conv = engine.window.region("conversation").entries
    assert conv == [*m3, *m4]
    assert ids(stub.inputs[0]) == ids([*m1, *m2])
    summary = engine.window.region("hist").entries[-1]
    assert summary.meta["covers"] == ids([*m1, *m2])


def test_fc_14_a_cutoff_at_zero_is_the_identity_and_past_the_end_spares_the_question() -> None:
    stub = StubSummarizer(3)
    engine = _conversation_engine(stub)
    _rounds(engine)
    before = list(engine.window.region("conversation").entries)
    assert engine.compact(keep_tokens=10_000) is None
    assert engine.window.region("conversation").entries == before
    question = engine.add_user("and now?", tokens=3)
    engine.compact(keep_tokens=0)
    assert ids(engine.window.region("conversation").entries) == [question.id]


# --- FC-21 ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("window", "reserve", "min_calls"), [(128_000, 4_000, 1), (16_000, 2_000, 3)]
)
def test_fc_21_summarizer_requests_are_sized_by_the_summarizers_own_window(
    window: int, reserve: int, min_calls: int
) -> None:
    stub = StubSummarizer(100, window=window, reserve=reserve)
    engine = _conversation_engine(stub, context_window=32_000)
    engine.add_user(words(500, "u"), tokens=500)
    # a long answer the model wrote (a tool result the model has not seen yet would be
    # trimmed to fit, never summarized first: tests/test_seen_before_cut.py)
    engine.add_assistant(words(38_000, "big"))
    engine.add_user(words(100, "q"), tokens=100)
    engine.request()
    sizes = [sum(e.tokens for e in inp) for inp in stub.inputs]
    assert len(sizes) >= min_calls and max(sizes) <= window - reserve
    if min_calls == 1:
        assert len(sizes) == 1
    assert len(engine.window.region("hist").entries) == 1
    assert engine.window.used_tokens <= 32_000


# --- FC-24 ------------------------------------------------------------------------------
@pytest.mark.parametrize("history", [196_000, 202_000])
def test_fc_24_manual_compaction_succeeds_when_the_context_is_already_full(history: int) -> None:
    stub = StubSummarizer(100, window=200_000, reserve=8_000)
    engine = make_engine(
        [
            Pinned(name="S", budget=3_000),
            CompactHistory(name="hist", budget=2_000, source="conversation"),
            SlidingWindow(name="conversation", budget=210_000),
        ],
        summarizer=stub,
        max_tokens=215_000,
        targets={"conversation": 96_000},
    )
    engine.write("S", words(3_000, "s"))
    for i in range(history // 1_000):
        if i % 2 == 0:
            engine.add_user(words(1_000, f"u{i}_"), tokens=1_000)
        else:
            engine.add_assistant(words(1_000, f"a{i}_"), tokens=1_000)
    engine.add_user("continue", tokens=1)
    assert engine.compact() is not None
    assert max(sum(e.tokens for e in inp) for inp in stub.inputs) <= 192_000
    assert engine.window.used_tokens <= 100_000


# --- FC-25 ------------------------------------------------------------------------------
class Echo(StubSummarizer):
    """Returns a summary as large as its input."""

    def __call__(self, entries: Sequence[Entry], standing: str, extra: str | None) -> str:
        self.inputs.append(list(entries))
        return " ".join(["x"] * sum(e.tokens for e in entries))


def test_fc_25_a_summarizer_that_never_shrinks_stops_after_n_attempts() -> None:
    echo = Echo()
    engine = make_engine(
        [
            Compacting(name="work", budget=20_000, threshold_tokens=8_000),
            CompactHistory(name="hist", budget=20_000, source="work"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=echo,
        targets={"work": 4_000},
    )
    for i in range(9):
        put(engine, "work", None, words(1_000, f"n{i}_"), 1_000)
    engine.add_user("go")
    work = engine.window.region("work")
    before = (ids(work.entries), work.content_hash())
    started = time.monotonic()
    with pytest.raises(CompactionNoProgressError) as info:
        engine.request()
    assert time.monotonic() - started < 5.0
    assert len(echo.inputs) == 3 and info.value.attempts == 3
    assert engine.events.of_kind("compaction_no_progress")
    assert (ids(work.entries), work.content_hash()) == before
    engine.request()  # a later turn does not repeat the attempt on the same content
    assert len(echo.inputs) == 3
    engine.summarizer = StubSummarizer(10)
    put(engine, "work", None, words(500, "new"), 500)
    engine.request()
    assert work.used_tokens < 8_000
    assert engine.book.strikes.get("work") is None


# --- FC-28 ------------------------------------------------------------------------------
def test_fc_28_hysteresis_flushes_on_turns_20_28_36_and_requests_extend_in_between() -> None:
    stub = StubSummarizer(300)
    engine = make_engine(
        [
            Pinned(name="S", budget=2_000, volatility="stable"),
            CompactHistory(name="hist", budget=20_000, source="work", volatility="grows"),
            Compacting(name="work", budget=10_000, threshold_tokens=8_000, volatility="grows"),
            SlidingWindow(name="conversation", budget=1_000),
        ],
        summarizer=stub,
        max_tokens=200_000,
        targets={"work": 5_000},
        settle_share=1.0,
        cut_at_turns=True,
    )
    engine.write("S", words(1_000, "s"))
    flush_turns = []
    previous = None
    for turn in range(1, 41):
        put(engine, "work", "user", words(200, f"u{turn}_"), 200)
        put(engine, "work", "assistant", words(200, f"a{turn}_"), 200)
        done = engine.flush()
        if done is not None:
            flush_turns.append(turn)
            assert engine.window.region("work").used_tokens == 4_800
        req, _ = engine.request(flush=False)
        if previous is not None and done is None:
            n = len(previous.blocks)
            assert [b.digest for b in req.blocks[:n]] == [b.digest for b in previous.blocks]
        previous = req
    assert flush_turns == [20, 28, 36]


def test_a_failed_summary_leaves_the_window_byte_identical() -> None:
    for text in ("", "   ", "I'm sorry, but I can't help with that."):
        engine = make_engine(
            [
                Compacting(name="work", budget=5_000, threshold_tokens=1_000),
                CompactHistory(name="hist", budget=1_000, source="work"),
                SlidingWindow(name="conversation", budget=1_000),
            ],
            summarizer=StubSummarizer(text=text),
        )
        for i in range(6):
            put(engine, "work", None, words(200, f"n{i}_"), 200)
        engine.add_user("go")
        _, before = engine.request(flush=False)
        hashes = [r.content_hash() for r in engine.window.regions]
        with pytest.raises(CompactionNoProgressError):
            engine.flush()
        assert [r.content_hash() for r in engine.window.regions] == hashes
        _, after = engine.request(flush=False)
        assert after == before
        assert engine.events.of_kind("compaction_rejected")


def test_manual_compaction_adds_instructions_and_reports_ids() -> None:
    stub = StubSummarizer(3)
    engine = _conversation_engine(stub)
    engine.add_user(words(50, "u"), tokens=50)
    engine.add_assistant(words(50, "a"), tokens=50)
    question = engine.add_user("next", tokens=1)
    result = engine.compact("keep the port numbers", keep_tokens=0)
    assert result is not None and stub.extras == ["keep the port numbers"]
    assert result.kept_ids == (question.id,) and len(result.replaced_ids) == 2
    assert result.tokens_after < result.tokens_before and result.summary_preview
    assert engine.events.of_kind("compaction_started") and engine.events.of_kind(
        "compaction_finished"
    )
    assert Text("next") in question.blocks
