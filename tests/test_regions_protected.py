"""The protected set and the removal order (field-cases.md section 0, P1, P3), and the
compaction-queue API the runtime uses (narrow, refresh, supersedes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message
from regio.errors import CompactionError
from regio.policies import analyze, is_user_turn_start
from regio.regions import CompactHistory, Compacting, SlidingWindow, Window, WriteResult
from regions_support import StubCounter, a, assert_well_formed, check_units, t, texts, u


def _loop(rounds: int, *, open_last: bool = True) -> list[Message]:
    msgs = [u("fix the failing test [10]")]
    for i in range(rounds):
        msgs += [a(f"a{i} [5]", f"c{i}"), t(f"c{i}", f"r{i} [20]")]
    if open_last:
        msgs.append(a("pending [5]", "cz"))
    return msgs


def _window(budget: int = 10**6, **opts: object) -> Window:
    return Window(
        regions=[
            SlidingWindow(name="conv", budget=budget, elastic=False, **opts),  # type: ignore[arg-type]
            CompactHistory(name="hist", budget=10_000, source="conv"),
        ],
        max_tokens=10**7,
        counter=StubCounter(),
    )


def test_a_long_single_turn_tool_loop_can_be_compacted_except_the_question_and_open_groups():
    w = _window(eviction={"compact": {"compact_count": 1000}}, max_items=10_000)
    for m in _loop(200):
        assert isinstance(w.add_message(m), WriteResult)
    conv = w.region("conv")
    question, pending = conv.entries[0], conv.entries[-1]
    p = w.request_compaction("conv")
    assert p is not None and len(p.entry_ids) == 400
    assert question.id not in p.entry_ids and pending.id not in p.entry_ids
    w.complete_compaction(p.id, "200 rounds: r0..r199 read [30]")
    assert conv.entries == [question, pending]
    assert_well_formed([e.message for e in conv.entries], [e.message for e in conv.entries])


def test_a_token_cap_evicts_completed_groups_of_the_current_turn_and_keeps_the_question():
    w = _window(budget=200)
    for m in _loop(20, open_last=False):
        assert isinstance(w.add_message(m), WriteResult)
    conv = w.region("conv")
    assert texts(conv)[0] == "fix" and conv.used_tokens <= 200
    assert texts(conv)[1:3] == ["a13", "r13"]  # oldest rounds went first, whole
    check_units(conv.entries)
    assert_well_formed([e.message for e in conv.entries], [e.message for e in conv.entries])


def test_history_windows_still_keep_the_whole_current_turn():
    w = _window(max_items=3)
    for m in _loop(5, open_last=False):
        w.add_message(m)
    assert len(w.region("conv").entries) == 11  # one turn: max_items is soft (FC-33)
    assert w.events.of_kind("region_over_budget")


def test_clear_and_release_skip_the_question_and_open_groups():
    w = _window()
    for m in _loop(3):
        w.add_message(m)
    conv = w.region("conv")
    released = conv.release(oldest=1)
    assert [e.text.split()[0] for e in released] == ["a0", "r0"]
    conv.clear()
    assert texts(conv) == ["fix", "pending"]


# ----- P1 / P3 over generated histories -----------------------------------------------------
@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    msgs: list[Message] = []
    n = 0
    for _ in range(draw(st.integers(1, 8))):
        msgs.append(u(f"u{n} [{draw(st.integers(1, 9))}]"))
        for _ in range(draw(st.integers(0, 4))):
            n += 1
            width = draw(st.integers(1, 3))
            ids = [f"c{n}_{k}" for k in range(width)]
            msgs.append(a(f"a{n} [3]", *ids))
            answered = draw(st.permutations(ids))
            if draw(st.integers(0, 9)) == 0:
                answered = answered[:-1]  # a pending call
            msgs += [t(c, f"r{c} [{draw(st.integers(1, 20))}]") for c in answered]
        if draw(st.booleans()):
            msgs.append(a(f"b{n} [2]"))
    return msgs


@settings(max_examples=80, deadline=None)
@given(histories(), st.integers(0, 200), st.sampled_from(["trim", "clear", "oldest", "compact"]))
def test_every_removal_is_whole_units_in_order_and_never_touches_the_protected_set(
    msgs, cap, operation
):
    w = Window(
        regions=[
            Compacting(name="work", budget=10**6, compact_at=None),
            CompactHistory(name="hist", budget=10**6, source="work"),
        ],
        max_tokens=10**7,
        counter=StubCounter(),
    )
    for m in msgs:
        w.add_message(m, region="work")
    work = w.region("work")
    before = list(work.entries)
    info = analyze(before)
    protected = {before[i].id for i in range(len(before)) if info.is_protected(i)}
    newest_user = [e.id for e in before if is_user_turn_start(e)][-1]
    assert newest_user in protected
    if operation == "trim":
        work.trim(max_tokens=cap)
    elif operation == "clear":
        work.clear()
    elif operation == "oldest":
        work.release(oldest=cap % 7)
    else:
        p = w.request_compaction("work")
        if p is not None and p.tokens > 1:
            w.complete_compaction(p.id, "summary [1]")
    kept = list(work.entries)
    kept_ids = {e.id for e in kept}
    assert protected <= kept_ids  # P3
    assert kept == [e for e in before if e.id in kept_ids]  # original relative order
    removed = [i for i, e in enumerate(before) if e.id not in kept_ids]
    j = sum(1 for u_ in info.removable if before[info.units[u_][0]].id not in kept_ids)
    assert removed == info.removal(j)  # a prefix of the removal order: whole units, oldest first
    check_units(kept)
    if kept:
        assert not kept[0].message.tool_results  # L


# ----- the queue API used by the runtime ----------------------------------------------------
def _notes() -> Window:
    w = Window(
        regions=[
            Compacting(name="work", budget=1000, compact_at=None),
            CompactHistory(name="hist", budget=1000, source="work"),
        ],
        max_tokens=5000,
        counter=StubCounter(),
    )
    for m in _loop(4, open_last=False):
        w.add_message(m, region="work")
    return w


def test_narrow_compaction_keeps_the_id_and_position_and_refuses_a_split_group():
    w = _notes()
    p = w.request_compaction("work")
    assert p is not None and len(p.entry_ids) == 8
    with pytest.raises(CompactionError, match="split a turn group"):
        w.narrow_compaction(p.id, p.entry_ids[:3])
    with pytest.raises(CompactionError, match="not marked"):
        w.narrow_compaction(p.id, ["nope"])
    with pytest.raises(CompactionError, match="narrowing to nothing"):
        w.narrow_compaction(p.id, [])
    narrowed = w.narrow_compaction(p.id, p.entry_ids[:4])
    assert narrowed.id == p.id and narrowed.tokens == 50
    assert w.pending_compactions() == [narrowed]
    assert w.events.of_kind("compaction_narrowed")
    w.complete_compaction(p.id, "two rounds [5]")
    assert texts(w.region("work"))[1:3] == ["a2", "r2"]


def test_refresh_compaction_takes_units_that_stopped_being_protected():
    w = _notes()
    p = w.request_compaction("work")
    assert p is not None
    first = w.region("work").entries[0]
    assert first.id not in p.entry_ids  # the newest user message when queued
    w.add_message(u("and now the docs [3]"), region="work")
    fresh = w.refresh_compaction(p.id)
    assert fresh is not None and fresh.id == p.id and fresh.entry_ids[0] == first.id
    assert w.events.of_kind("compaction_refreshed")


def test_a_rolling_summary_is_size_checked_against_everything_it_supersedes():
    w = _notes()
    p = w.request_compaction("work")
    assert p is not None
    old = w.complete_compaction(p.id, "first summary [60]")
    for m in [a("x [5]", "cx"), t("cx", "rx [20]"), u("next [2]")]:
        w.add_message(m, region="work")
    q = w.request_compaction("work")
    assert q is not None and q.tokens == 35
    history = w.region("hist")
    before = (list(history.entries), history.version)
    with pytest.raises(CompactionError, match="superseded summaries"):
        w.complete_compaction(q.id, "rolled [40]", supersedes=["missing"])
    with pytest.raises(CompactionError, match="not smaller"):
        w.complete_compaction(q.id, "rolled [95]", supersedes=[old.id])
    assert (list(history.entries), history.version) == before
    new = w.complete_compaction(q.id, "rolled [40]", supersedes=[old.id])  # 40 < 35 + 60
    assert history.entries == [new] and new.meta["supersedes"] == [old.id]
    completed = w.events.of_kind("compaction_completed")[-1]
    assert completed.superseded == (old.id,)  # type: ignore[attr-defined]
