"""A superseding progress report is planned without copying the window.

When the plain write of a newer result of a running job would be refused, the window plans
the write again as if the earlier reports it supersedes were dropped
(``superseded.plan_drop`` and ``Window.plan_write(as_if=...)``), changing nothing. A refused
report leaves the window byte-identical (its state, its entry lists and their rewrite epochs;
only the ``refused`` event is added; the message keeps the entry number it was given, as any
refused write does); every outcome (result, state, events) equals the
previous implementation, which played the drop on a copy of the whole window
(``Window.from_state(window.snapshot_state())``), here kept as the reference."""

from __future__ import annotations

from typing import Any
from unittest import mock

import msgspec
from hypothesis import event, given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, ToolResult, ToolUse
from regio.policies.units import HistoryCounts
from regio.regions import CompactHistory, Pinned, Refusal, SlidingWindow, Window, WriteResult
from regio.regions import superseded as sup
from regio.regions import window as window_module
from regio.regions.base import Region
from regions_support import StubCounter


def _snapshot_admit(
    window: Any, region: Region, entry: Entry, *, strict: bool = False
) -> WriteResult | Refusal:
    """The previous ``admit_superseding``: the drop and the write played on a throw-away copy
    of the window (the reference)."""
    calls = {b.tool_use_id for b in entry.blocks if isinstance(b, ToolResult)}
    if calls and isinstance(window.plan_write(region, entry), Refusal):
        reports = window.progress_index(region).sync(region)
        if any(i != entry.id for c in calls for i in reports.get(c, ())):
            trial = type(window).from_state(window.snapshot_state(), counter=window.counter)
            copy = trial.region(region.name)
            sup.drop_superseded_progress(copy, entry, trial.counter, trial.progress_index(copy))
            if not isinstance(trial.plan_write(copy, entry), Refusal):
                sup.drop_superseded_progress(
                    region, entry, window.counter, window.progress_index(region)
                )
    return window.write(region, entry, strict=strict)


EVICTIONS = ["per_item", {"bulk": {"overflow": 2}}, {"compact": {"compact_count": 2}}]


def _window(budget: int, max_tokens: int, eviction: Any, admission: str) -> Window:
    if admission == "reject":  # a reject region's budget is a floor the window must hold
        max_tokens = max(max_tokens, budget + 200)
    return Window(
        regions=[
            Pinned(name="system", budget=100),
            SlidingWindow(name="conv", budget=budget, eviction=eviction, admission=admission),
            CompactHistory(name="hist", budget=100, source="conv"),
        ],
        max_tokens=max_tokens,
        counter=StubCounter(),
    )


_steps = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 40)),
        st.tuples(st.just("job"), st.integers(1, 2)),  # an assistant message starting jobs
        st.tuples(st.just("report"), st.integers(0, 9), st.integers(1, 100)),
        st.tuples(st.just("report"), st.integers(0, 9), st.integers(1, 100)),
        st.tuples(st.just("parallel"), st.integers(0, 9), st.integers(1, 100)),
        st.tuples(st.just("final"), st.integers(0, 9), st.integers(1, 200)),
        st.tuples(st.just("system"), st.integers(1, 60)),
    ),
    min_size=1,
    max_size=40,
)


def _message(op: tuple[Any, ...], jobs: list[str], made: int, budget: int) -> Message | None:
    """The message of step ``op`` (report sizes: percent of the conversation's budget)."""
    kind = op[0]
    if kind == "user":
        return Message.user(f"ask [{op[1]}]")
    if kind == "job":
        return Message.assistant(
            "", tuple(ToolUse(f"j{made + k}", "build", {}) for k in range(op[1]))
        )
    if not jobs:
        return None
    job = jobs[op[1] % len(jobs)]
    if kind == "report":
        return Message.tool((ToolResult(job, f"running [{budget * op[2] // 100}]", final=False),))
    if kind == "parallel":  # a report beside the report of another job, in one message
        other = jobs[(op[1] + 1) % len(jobs)]
        blocks = [ToolResult(job, f"running [{budget * op[2] // 100}]", final=False)]
        if other != job:
            blocks.append(ToolResult(other, "running too [3]", final=False))
        return Message.tool(tuple(blocks))
    return Message.tool((ToolResult(job, f"done [{op[2]}]"),))


def _counted_as_dropped(region: SlidingWindow, drop: Any) -> SlidingWindow:
    """``superseded._as_dropped``, checking that the history counts it hands the planning copy
    (derived from the live region, not recounted) equal a recount of the copy's entries."""
    trial = _REAL_AS_DROPPED(region, drop)
    fresh = HistoryCounts()
    for entry in trial.entries:
        fresh = fresh.extend(entry)
    assert trial.history_counts() == fresh
    return trial


_REAL_AS_DROPPED = sup._as_dropped


def _state(w: Window, *, numbering: bool = True) -> bytes:
    """The window's state, encoded; without ``numbering``, the next entry number left out (a
    refused message keeps the number it was given, as every refused write does)."""
    state = w.snapshot_state()
    if not numbering:
        state = msgspec.structs.replace(state, next_entry=0)
    return msgspec.json.encode(state)


@settings(max_examples=250, deadline=None)
@given(
    budget=st.integers(200, 1500),
    max_tokens=st.integers(400, 2500),
    eviction=st.sampled_from(EVICTIONS),
    admission=st.sampled_from(["evict", "reject"]),
    steps=_steps,
)
def test_a_superseding_report_is_decided_as_the_window_copy_decided_it(
    budget: int, max_tokens: int, eviction: Any, admission: str, steps: list[tuple[Any, ...]]
) -> None:
    new = _window(budget, max_tokens, eviction, admission)
    old = _window(budget, max_tokens, eviction, admission)
    jobs: list[str] = []
    made = 0
    for op in [("user", 1), ("job", 1), *steps]:
        if op[0] == "system":
            results = [w.write("system", f"note [{op[1]}]") for w in (new, old)]
        else:
            msg = _message(op, jobs, made, budget)
            if msg is None:
                continue
            before = (
                _state(new, numbering=False),
                new.region("conv").entries,
                len(new.events.history),
            )
            epoch = new.region("conv").entries.rewrite_epoch  # type: ignore[attr-defined]
            with mock.patch.object(sup, "_as_dropped", wraps=_counted_as_dropped) as trial:
                got = new.add_message(msg)
            event(f"{op[0]}: {type(got).__name__}, dry run={trial.call_count > 0}")
            with mock.patch.object(window_module, "admit_superseding", _snapshot_admit):
                want = old.add_message(msg)
            results = [got, want]
            if isinstance(got, Refusal):  # byte-identical: only the refusal was added
                conv = new.region("conv")
                assert _state(new, numbering=False) == before[0]
                assert conv.entries is before[1] and conv.entries.rewrite_epoch == epoch  # type: ignore[attr-defined]
                assert [type(e).__name__ for e in new.events.history[before[2] :]] == ["Refused"]
            if op[0] == "job" and isinstance(got, WriteResult):
                jobs.extend(f"j{made + k}" for k in range(op[1]))
                made += op[1]
            if op[0] == "final" and isinstance(got, WriteResult):
                jobs.remove(msg.tool_results[0].tool_use_id)
        assert results[0] == results[1], op
        assert _state(new) == _state(old), op
        assert list(new.events.history) == list(old.events.history), op


def _job_window(first: int) -> Window:
    w = Window(
        regions=[SlidingWindow(name="conv", budget=1000)], max_tokens=1000, counter=StubCounter()
    )
    w.add_message(Message.user("go"))
    w.add_message(Message.assistant("", (ToolUse("c1", "job", {}),)))
    w.add_message(Message.tool((ToolResult("c1", "x " * first, final=False),)))
    return w


def test_a_refused_report_makes_no_copy_of_the_window() -> None:
    w = _job_window(600)
    copied = AssertionError("the window was copied")
    with (
        mock.patch.object(Window, "from_state", side_effect=copied),
        mock.patch.object(Window, "snapshot_state", side_effect=copied),
    ):
        result = w.add_message(Message.tool((ToolResult("c1", "y " * 999, final=False),)))
    assert isinstance(result, Refusal) and result.reason == "region_full"


def test_a_report_admitted_in_place_of_the_one_it_replaces_drops_it_once() -> None:
    w = _job_window(600)
    result = w.add_message(Message.tool((ToolResult("c1", "y " * 600, final=False),)))
    assert isinstance(result, WriteResult)
    dropped = [e for e in w.events.history if getattr(e, "reason", "") == "superseded_progress"]
    assert len(dropped) == 1 and dropped[0].tokens == 600
