"""Dedupe is the relief chain's first, cheapest stage, run under token pressure like the others:
admitting a result never rewrites an earlier message (the cached prefix); when the stage runs
it supersedes every duplicate at once, or none when together they free less than
``dedupe_at_least``; and it never replaces a result whose placeholder is not smaller."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from regio.compaction.relief._chain import ReliefApplied, ReliefSkipped
from regio.content import ToolResult, ToolUse
from regio.policies import Compact
from regio.policies.relief import CLEARED_META, ReliefPolicy, ToolRelief, placeholder
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CAT = {"cat": ToolRelief(dedupe=True)}


def _engine(policy: ReliefPolicy, *, trigger: int = 1000, target: int = 400) -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=4000,
                eviction=Compact(compact_count=500, trigger=trigger, target=target),
            ),
        ],
        max_tokens=6000,
        summarizer=StubSummarizer(size=8, distinct=True),
        relief=policy,
    )


def _cat(engine: Any, i: int, path: str, size: int) -> None:
    call = ToolUse(f"c{i}", "cat", {"path": path})
    engine.add_assistant(f"step {i}", [call])
    engine.add_tool_result(call.id, words(size, f"r{i}-"))
    engine.request()  # the turn boundary: pending compactions (and the chain) run


def _live(engine: Any, skip: str = "") -> dict[str, list[ToolResult]]:
    """(tool, arguments) -> its live results in the conversation, oldest first (leaving out
    the entry ``skip``)."""
    conv = engine.window.region("conversation")
    calls = {b.id: b for e in conv.entries for b in e.blocks if isinstance(b, ToolUse)}
    live: dict[str, list[ToolResult]] = {}
    for e in conv.entries:
        if e.id == skip:
            continue
        cleared = set(e.meta.get(CLEARED_META, ()))
        for b in e.blocks:
            if (
                isinstance(b, ToolResult)
                and b.tool_use_id not in cleared
                and b.tool_use_id in calls
            ):
                call = calls[b.tool_use_id]
                live.setdefault(json.dumps([call.name, call.input]), []).append(b)
    return live


def test_admitting_a_duplicate_result_never_rewrites_an_earlier_message() -> None:
    engine = _engine(ReliefPolicy(dedupe_at_least=10, tools=CAT), trigger=3500, target=2000)
    seen: list[Any] = []
    engine.subscribe(seen.append)
    engine.add_user("read it")
    for i in range(8):
        before = list(engine.window.region("conversation").entries)
        _cat(engine, i, "a.py", 60)
        after = list(engine.window.region("conversation").entries)
        assert after[: len(before)] == before  # the prefix stays byte-identical
    assert not [e for e in seen if isinstance(e, ReliefApplied)]
    assert "dedupe" not in engine.book.relief.stages


def test_under_pressure_the_dedupe_stage_supersedes_every_duplicate_at_once() -> None:
    engine = _engine(ReliefPolicy(dedupe_at_least=10, clear=False, trim=False, tools=CAT))
    seen: list[Any] = []
    engine.subscribe(seen.append)
    engine.add_user("read it")
    for i in range(12):
        _cat(engine, i, "a.py", 90)
    runs = [e for e in seen if isinstance(e, ReliefApplied) and e.stage == "dedupe"]
    assert runs and all(e.tokens_freed > 0 for e in runs)
    tally = engine.book.relief.stages["dedupe"]
    assert tally.runs == len(runs) and tally.freed_tokens == sum(e.tokens_freed for e in runs)
    first = runs[0]
    assert len(first.call_ids) >= 2  # one batch, not one rewrite per duplicate
    old = next(
        b
        for e in engine.window.region("conversation").entries
        for b in e.blocks
        if isinstance(b, ToolResult) and b.tool_use_id == first.call_ids[0]
    )
    assert old.content.startswith("[superseded by call c")
    assert old.content.endswith(placeholder(first.call_ids[0], "cat", restorable=True))
    restored = engine.handle_tool_call("context_restore", {"call_id": first.call_ids[0]})
    assert restored.text == words(90, f"r{first.call_ids[0][1:]}-")


def test_a_dedupe_stage_that_would_free_less_than_its_minimum_does_not_run() -> None:
    engine = _engine(ReliefPolicy(dedupe_at_least=3000, clear=False, trim=False, tools=CAT))
    seen: list[Any] = []
    engine.subscribe(seen.append)
    engine.add_user("read it")
    for i in range(12):
        _cat(engine, i, "a.py", 90)
    assert not [e for e in seen if isinstance(e, ReliefApplied) and e.stage == "dedupe"]
    skips = [e for e in seen if isinstance(e, ReliefSkipped) and e.stage == "dedupe"]
    assert skips and all(e.available < 3000 for e in skips)


def test_a_result_smaller_than_its_placeholder_is_never_superseded() -> None:
    engine = _engine(ReliefPolicy(dedupe_at_least=1, clear=False, trim=False, tools=CAT))
    engine.add_user("poll it")
    for i in range(40):
        _cat(engine, i, "job", 3)  # "r0-0 r0-1 r0-2": far smaller than any placeholder
        _cat(engine, 100 + i, f"big{i % 2}", 60)
    for results in _live(engine).values():
        if results[0].content.startswith("r") and len(results[0].content.split()) == 3:
            assert len(results) > 1  # the small duplicates all stay as they are
    assert engine.book.relief.stages["dedupe"].runs > 0


def test_a_progress_report_of_a_newer_call_never_supersedes_a_final_result() -> None:
    engine = _engine(ReliefPolicy(dedupe_at_least=10, clear=False, trim=False, tools=CAT))
    seen: list[Any] = []
    engine.subscribe(seen.append)
    engine.add_user("build it")
    call = ToolUse("c0", "cat", {"path": "build.log"})
    engine.add_assistant("read the log", [call])
    engine.add_tool_result(call.id, words(300, "done-"))
    for i in range(1, 12):  # a newer call with the same arguments that only reports progress
        again = ToolUse(f"c{i}", "cat", {"path": "build.log"})
        engine.add_assistant(f"poll {i}", [again])
        engine.add_tool_result(again.id, words(90, f"running{i}-"), final=False)
        engine.request()
        live = _results(engine, {"c0"})
        assert [b.content for b in live] in ([words(300, "done-")], [])  # kept, or summarized
    assert not [e for e in seen if isinstance(e, ReliefApplied) and e.stage == "dedupe"]
    assert "dedupe" not in engine.book.relief.stages


def test_dedupe_candidates_name_only_a_newer_final_result() -> None:
    from regio.policies.relief import dedupe_candidates

    engine = _engine(ReliefPolicy(tools=CAT), trigger=3900, target=3000)
    engine.add_user("go")
    for i, final in enumerate([True, False, True, False]):
        engine.add_assistant("", [ToolUse(f"c{i}", "cat", {"path": "a"})])
        engine.add_tool_result(f"c{i}", words(20, f"r{i}-"), final=final)
    entries = engine.window.region("conversation").entries
    found = {(c.call_id, c.by) for c in dedupe_candidates(entries, ReliefPolicy(tools=CAT))}
    assert found == {("c0", "c2"), ("c1", "c2")}  # c3 reports progress after c2: it stays


_STEP = st.tuples(
    st.integers(min_value=0, max_value=3),
    st.integers(min_value=1, max_value=120),
    st.booleans(),  # a progress report (final=False) instead of the final result
)


@FAST
@given(st.lists(_STEP, min_size=3, max_size=40), st.booleans())
@example(  # found in CI: a 21-word result beside a 21-word placeholder stays (no gain)
    [(0, 1, False)] * 9 + [(0, 21, False), (0, 73, False)] + [(0, 120, False)] * 7, False
)
def test_after_every_pass_in_which_dedupe_ran_one_result_per_call_is_live(
    steps: list[tuple[int, int, bool]], clear: bool
) -> None:
    policy = ReliefPolicy(dedupe_at_least=20, clear=clear, clear_at_least=20, tools=CAT)
    engine = _engine(policy)
    seen: list[Any] = []
    engine.subscribe(seen.append)
    engine.add_user("read the files")
    finals: set[str] = set()  # calls with a final result admitted
    for i, (arg, size, report) in enumerate(steps):
        call = ToolUse(f"c{i}", "cat", {"path": f"f{arg}.py"})
        text = words(size, f"r{i}-")
        if not report:  # (a pass while its result is admitted runs before it is in)
            finals.add(call.id)
        actions = [
            (True, partial(engine.add_assistant, f"step {i}", [call])),
            (True, partial(engine.add_tool_result, call.id, text, final=not report)),
            (False, engine.request),
        ]
        for admits, act in actions:
            seen.clear()
            act()
            ran = [e for e in seen if isinstance(e, ReliefApplied) and e.stage == "dedupe"]
            assert all(e.tokens_freed > 0 for e in ran)  # no dedupe ever frees <= 0 tokens
            if not ran:
                continue
            for b in _results(engine, {c for e in ran for c in e.call_ids}):
                by = b.content.split()[3]  # "[superseded by call cN ..."
                assert by in finals  # only a newer final result supersedes
            # a message the same call admitted came after the pass
            conv = engine.window.region("conversation")
            newest = conv.entries[-1].id if admits else ""
            for results in _live(engine, skip=newest).values():
                last = max((k for k, b in enumerate(results) if b.is_final), default=0)
                # before the newest final result (progress reports after it supersede
                # nothing), only a result its placeholder would not shrink stays
                for b in results[:last]:
                    marker = placeholder(b.tool_use_id, "cat", restorable=True)
                    # "[superseded by call cN with the same arguments] " is 8 words (one
                    # token each under the stub counter): a result of exactly the
                    # placeholder's size is not shrunk by it, so it stays
                    assert len(b.content.split()) <= 8 + len(marker.split())


def _results(engine: Any, call_ids: set[str]) -> list[ToolResult]:
    conv = engine.window.region("conversation")
    return [
        b
        for e in conv.entries
        for b in e.blocks
        if isinstance(b, ToolResult) and b.tool_use_id in call_ids
    ]
