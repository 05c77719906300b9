"""Clearing before the summary's cut (issue 16): when a summary has to run and clearing what
it would keep frees less than the stage's minimum, the chain clears the whole conversation
first, so the summary covers only what clearing could not free and the kept tail holds
placeholders instead of fewer verbatim turns; when clearing what it keeps is worth it, the
chain clears after the summary as before (more room, the next compaction later)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.policies import Compact
from regio.policies.relief import CLEARED_META, ReliefPolicy
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _engine(relief: ReliefPolicy | None, summarizer: Any = None) -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=800, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=4000,
                eviction=Compact(compact_count=500, trigger=1000, target=400),
                elastic=False,
            ),
        ],
        max_tokens=6000,
        summarizer=summarizer or StubSummarizer(size=8, distinct=True),
        relief=relief,
    )


def _first_summary(engine: Any, sizes: list[int]) -> tuple[int, int, int] | None:
    """One user turn and a call per size, each result sent in a request that flushes nothing
    (a result reaches the model before anything may summarize it), then one request that
    flushes; a message that passes the conversation's budget compacts it on admission, the
    last request flushes what its trigger queued. ``(message at which the first summary ran,
    entries it covered, entries the conversation kept right after)``; ``None`` when nothing
    was summarized."""
    engine.add_user("fix the bug")
    for i, size in enumerate(sizes):
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        if engine.summarizer.inputs:
            break
        engine.request(flush=False)
        engine.add_tool_result(call.id, words(size, f"t{i}x"))
        if engine.summarizer.inputs:
            break
        engine.request(flush=False)
    else:
        engine.request()
    if not engine.summarizer.inputs:
        return None
    covered = [e for e in engine.summarizer.inputs[0] if not e.meta.get("summary")]
    return i, len(covered), len(engine.window.region("conversation").entries)


#: Calls of 150 words pass the conversation's budget (4,000 tokens) far above its trigger
#: (1,000), where clearing alone cannot reach the target (400): a summary runs. The part it
#: keeps (the newest two calls, one of them `keep_last`) frees less than 300 tokens by
#: clearing; the whole conversation far more.
BEFORE = ReliefPolicy(clear_at_least=300, trim_at_least=100_000, keep_last=1)
ALONE = ReliefPolicy(clear_at_least=300, trim_at_least=100_000, keep_last=1, clear=False)


def _against_alone(policy: ReliefPolicy) -> tuple[Any, list[str], Any, Any]:
    """(the chain's engine, its event kinds, its first summary, summarizing alone's) on 40
    calls of 150 words."""
    sizes = [150] * 40
    chain = _engine(policy)
    seen: list[Any] = []
    chain.subscribe(seen.append)
    with_chain = _first_summary(chain, sizes)
    alone = _first_summary(_engine(ALONE), sizes)
    assert with_chain is not None and alone is not None
    return chain, [e.kind for e in seen], with_chain, alone


def test_a_summary_whose_kept_part_is_not_worth_clearing_covers_less_after_clearing_first() -> None:
    chain, kinds, with_chain, alone = _against_alone(BEFORE)
    assert with_chain[0] == alone[0]  # at the same message
    assert with_chain[1] < alone[1]  # the summary covered fewer entries
    assert with_chain[2] > alone[2]  # and the conversation kept more of them
    assert "relief_applied" in kinds
    assert kinds.index("relief_applied") < kinds.index("compaction_started")
    kept = chain.window.region("conversation").entries
    assert any(CLEARED_META in e.meta for e in kept)  # the kept tail holds placeholders


def test_a_kept_part_worth_clearing_is_cleared_after_the_summary_as_before() -> None:
    policy = ReliefPolicy(clear_at_least=10, trim_at_least=100_000, keep_last=1)
    _chain, kinds, with_chain, alone = _against_alone(policy)
    assert with_chain[:2] == alone[:2]  # the same cut: clearing rides the rewrite after it
    started = kinds.index("compaction_started")
    assert "relief_applied" in kinds[started:]
    assert "relief_applied" not in kinds[:started]


def test_with_clear_after_summary_off_nothing_is_cleared_before_the_cut() -> None:
    off = ReliefPolicy(
        clear_at_least=300, trim_at_least=100_000, keep_last=1, clear_after_summary=False
    )
    sizes = [150] * 40
    assert _first_summary(_engine(off), sizes) == _first_summary(_engine(ALONE), sizes)


@FAST
@given(st.lists(st.integers(min_value=20, max_value=260), min_size=30, max_size=45))
def test_clearing_before_the_cut_never_makes_the_first_summary_cover_more(
    sizes: list[int],
) -> None:
    chain = _first_summary(_engine(BEFORE), sizes)
    alone = _first_summary(_engine(ALONE), sizes)
    assume(chain is not None and alone is not None and chain[0] == alone[0])
    assert chain is not None and alone is not None
    # on the same conversation, clearing first only ever shortens what the summary covers
    assert chain[1] <= alone[1]
    assert chain[2] >= alone[2]


def test_an_llm_sized_summary_is_never_refused_after_clearing_first() -> None:
    # a summarizer that always writes its maximum (200 words, as an LLM does): clearing first
    # must leave the summary something at least twice that size to replace, or not run
    engine = _engine(BEFORE, StubSummarizer(size=200, distinct=True))
    seen: list[Any] = []
    engine.subscribe(seen.append)
    engine.add_user("fix the bug")
    for i in range(150):
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"step {i}", [call])
        engine.add_tool_result(call.id, words(150, f"t{i}x"))
        if i % 5 == 4:
            engine.request()
    kinds = [e.kind for e in seen]
    assert kinds.count("compaction_finished") >= 5
    assert "compaction_rejected" not in kinds
    assert "compaction_no_progress" not in kinds
