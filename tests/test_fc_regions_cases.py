"""Field cases (spec/field-cases.md) on the region / eviction side: FC-01, 02, 04, 05, 07a,
10, 15, 16, 17, 26a, 33. Each fails on an engine that has the described bug."""

from __future__ import annotations

import os
import random
import sys

import pytest

from regio.content import Message
from regio.errors import RegioError, RegionFullError, SystemRoleError, WindowConfigError
from regio.policies import analyze
from regio.regions import (
    Checklist,
    CompactHistory,
    Keyed,
    Pinned,
    Refusal,
    SlidingWindow,
    Temporary,
    Window,
    WriteResult,
)
from regions_support import (
    ProviderBackedCounter,
    StubCounter,
    a,
    assert_well_formed,
    check_units,
    generated_history,
    t,
    texts,
    u,
    validate_conversation,
)

FC01 = [u("u1 [10]"), a("a1 [10]", "c1"), t("c1", "t1 [50]"), u("u2 [10]"), a("a2 [10]")]


def _loaded(messages, *, budget=10**6, counter=None, **opts):
    w = Window(
        regions=[SlidingWindow(name="conv", budget=budget, elastic=False, **opts)],
        max_tokens=10**7,
        counter=counter or StubCounter(),
    )
    for m in messages:
        assert isinstance(w.add_message(m), WriteResult)
    return w, w.region("conv")


def test_fc_01_a_token_budget_drops_the_whole_group_not_just_the_call():
    _w, conv = _loaded(FC01, budget=75)
    assert texts(conv) == ["u2", "a2"]
    check_units(conv.entries)


def test_fc_01_b_message_count_budget_keeps_the_same_suffix():
    _w, conv = _loaded(FC01, max_items=3)
    assert texts(conv) == ["u2", "a2"]


@pytest.mark.parametrize("budget", range(20, 91))
def test_fc_01_every_token_budget_keeps_the_longest_suffix_of_whole_units(budget):
    _, conv = _loaded(FC01)
    conv.trim(max_tokens=budget)
    expected = (
        ["u2", "a2"]
        if budget < 80
        else (["a1", "t1", "u2", "a2"] if budget < 90 else ["u1", "a1", "t1", "u2", "a2"])
    )
    assert texts(conv) == expected


@pytest.mark.parametrize("items", range(2, 6))
def test_fc_01_every_message_budget_keeps_whole_units(items):
    _, conv = _loaded(FC01)
    conv.trim(max_items=items)
    expected = {2: ["u2", "a2"], 3: ["u2", "a2"], 4: ["a1", "t1", "u2", "a2"]}.get(
        items, ["u1", "a1", "t1", "u2", "a2"]
    )
    assert texts(conv) == expected


def test_fc_02_trim_never_hands_the_counter_an_invalid_slice():
    counter = ProviderBackedCounter()
    msgs = [u("u1 [10]"), a("a1 [10]", "c1"), t("c1", "t1 [40]"), a("a2 [10]"), u("u2 [10]")]
    _w, conv = _loaded(msgs, counter=counter)
    assert conv.used_tokens == 80
    evicted = conv.trim(max_tokens=35)
    assert texts(conv) == ["a2", "u2"]
    assert [e.text.split()[0] for e in evicted] == ["u1", "a1", "t1"]
    assert conv.used_tokens == 20
    assert counter.slices == []  # counting is per entry, once, at make_entry
    assert counter.calls == 5
    validate_conversation([e.message for e in conv.entries])


def test_fc_02_count_of_the_whole_list_equals_the_sum_of_units():
    rng = random.Random(2)
    counter = ProviderBackedCounter()
    msgs = generated_history(rng, 40)
    _, conv = _loaded(msgs, counter=counter)
    assert counter.count_messages([e.message for e in conv.entries]) == conv.used_tokens


def test_fc_04_oldest_first_removes_only_u1_and_never_a_call_alone():
    msgs = [
        u("u1 [10]"),
        a("a1 [10]"),
        u("u2 [10]"),
        a("a2 [10]", "c1"),
        t("c1", "t1 [10]"),
        a("a3 [10]"),
        u("u3 [10]"),
    ]
    _, conv = _loaded(msgs, budget=60)
    assert texts(conv) == ["a1", "u2", "a2", "t1", "a3", "u3"]
    _, conv2 = _loaded(msgs)
    conv2.trim(max_tokens=60)
    assert texts(conv2) == texts(conv)
    check_units(conv.entries)


FC05 = [
    u("u1 [10]"),
    a("a1 [10]"),
    u("u2 [10]"),
    a("a2 [10]"),
    u("u3 [10]"),
    a("a3 [10]"),
    u("u4 [10]"),
    a("a4 [10]"),
    u("u5 [10]"),
]


def _fc05(max_tokens, conv_budget, **opts):
    w = Window(
        regions=[
            Pinned(name="system", budget=50),
            SlidingWindow(name="conv", budget=conv_budget, elastic=False, **opts),
        ],
        max_tokens=max_tokens,
        counter=StubCounter(),
    )
    w.write("system", "S instructions [50]")
    for m in FC05:
        assert isinstance(w.add_message(m), WriteResult)
    return w


def test_fc_05_a_history_limit_never_evicts_the_pinned_prompt():
    w = _fc05(1000, 500, max_items=3)
    assert texts(w.region("conv")) == ["u4", "a4", "u5"]
    assert texts(w.region("system")) == ["S"]


def test_fc_05_b_global_budget_takes_pinned_first():
    w = _fc05(80, 30)
    assert texts(w.region("conv")) == ["u4", "a4", "u5"]
    assert w.region("system").used_tokens == 50
    assert not any("system" in e.region for e in w.events.of_kind("evicted"))  # type: ignore[attr-defined]


def test_fc_05_c_pinned_plus_current_question_is_the_floor():
    w = _fc05(140, 90)
    conv = w.region("conv")
    conv.trim(max_tokens=60 - w.region("system").used_tokens)
    assert texts(conv) == ["u5"]
    conv.trim(max_tokens=0)  # even below the floor, the current question stays
    assert texts(conv) == ["u5"]
    assert w.events.of_kind("region_over_budget")
    assert texts(w.region("system")) == ["S"]


def test_fc_05_d_window_below_pinned_is_rejected_at_load_with_numbers():
    with pytest.raises(WindowConfigError) as info:
        Window(
            regions=[Pinned(name="system", budget=50), SlidingWindow(name="conv", budget=10)],
            max_tokens=40,
        )
    msg = str(info.value)
    assert "system" in msg and "50" in msg and "40" in msg


def test_fc_07_a_unit_count_limit_extends_back_to_the_start_of_the_group():
    msgs = [u("u1 [1]"), a("a1 [1]", "c1"), t("c1", "t1 [1]"), a("a2 [1]")]
    # the view holds the last 2 units of earlier turns, then the new input u2
    _, conv = _loaded([*msgs, u("u2 [1]")], max_items=3, count_units=True)
    assert texts(conv) == ["a1", "t1", "a2", "u2"]
    _, by_message = _loaded([*msgs, u("u2 [1]")], max_items=3)
    assert texts(by_message) == ["a2", "u2"]  # counting messages shrinks to a boundary


def test_fc_10_an_open_call_is_never_evicted_and_its_result_joins_its_group():
    w = Window(
        regions=[SlidingWindow(name="conv", budget=60, elastic=False)],
        max_tokens=1000,
        counter=StubCounter(),
    )
    for m in [
        u("u1 [10]"),
        a("a1 [10]", "c1"),
        u("u2 [10]"),
        a("a2 [10]"),
        u("u3 [10]"),
        a("a3 [10]"),
    ]:
        assert isinstance(w.add_message(m), WriteResult)
    conv = w.region("conv")
    assert isinstance(w.add_message(u("u4 [10]")), WriteResult)
    assert texts(conv)[:2] == ["a1", "u2"]  # u1 went first: it is the oldest unit
    # the open group is skipped, never evicted: the units after it go next ("evicts elsewhere")
    assert isinstance(w.add_message(u("u5 [10]")), WriteResult)
    assert texts(conv) == ["a1", "a2", "u3", "a3", "u4", "u5"]
    r = w.add_message(t("c1", "approved [10]"))
    assert isinstance(r, WriteResult)  # the late result joins its group; a2 made room
    assert texts(conv) == ["a1", "u3", "a3", "u4", "u5", "approved"]
    assert conv.entries[0].group == conv.entries[-1].group == "g:c1"
    # only protected units left (the newest user message and the group being completed)
    tight = Window(
        regions=[SlidingWindow(name="conv", budget=20, elastic=False)],
        max_tokens=1000,
        counter=StubCounter(),
    )
    for m in [u("u1 [10]"), a("a1 [10]", "c1"), u("u2 [10]")]:
        assert isinstance(tight.add_message(m), WriteResult)
    assert texts(tight.region("conv")) == ["a1", "u2"]
    with pytest.raises(RegionFullError):
        tight.add_message(t("c1", "approved [10]"), strict=True)
    assert isinstance(tight.add_message(t("c1", "approved [10]")), Refusal)
    assert texts(tight.region("conv")) == ["a1", "u2"]  # the call stays, nothing else changed
    w2 = Window(
        regions=[SlidingWindow(name="conv", budget=80, elastic=False)],
        max_tokens=1000,
        counter=StubCounter(),
    )
    for m in [
        u("u1 [10]"),
        a("a1 [10]", "c1"),
        u("u2 [10]"),
        a("a2 [10]"),
        u("u3 [10]"),
        a("a3 [10]"),
    ]:
        w2.add_message(m)
    w2.add_message(t("c1", "approved [10]"))
    conv2 = w2.region("conv")
    result = conv2.entries[-1]
    assert result.group == "g:c1" == conv2.entries[1].group
    w2.add_message(u("u4 [10]"))
    evicted = conv2.trim(max_tokens=20)  # now the group is complete and goes as one unit
    assert {"a1", "approved"} <= {e.text.split()[0] for e in evicted}
    assert "a1" not in texts(conv2) and "approved" not in texts(conv2)
    check_units(conv2.entries)


def test_fc_10_a_compaction_mark_never_includes_an_open_group():
    w = Window(
        regions=[
            SlidingWindow(
                name="conv", budget=10**6, max_items=2, eviction={"compact": {"compact_count": 2}}
            ),
            CompactHistory(name="hist", budget=100, source="conv"),
        ],
        max_tokens=10**7,
        counter=StubCounter(),
    )
    for m in [u("u1 [1]"), a("a1 [1]", "c1"), u("u2 [1]"), a("a2 [1]"), u("u3 [1]")]:
        w.add_message(m)
    marked = {i for p in w.pending_compactions() for i in p.entry_ids}
    a1 = w.region("conv").entries[1].id
    assert a1 not in marked


def test_fc_15_contradicting_fact_replaces_in_place_and_oversize_is_refused():
    w = Window(
        regions=[Keyed(name="facts", budget=500, admission="reject", max_entry_tokens=50)],
        max_tokens=1000,
        counter=StubCounter(),
    )
    w.write("facts", "likes spicy food [5]", key="food.spicy")
    w.write("facts", "dislikes spicy food [6]", key="food.spicy")
    facts = w.region("facts")
    assert [(e.key, e.text) for e in facts.entries] == [("food.spicy", "dislikes spicy food [6]")]
    replaced = w.events.of_kind("replaced")
    assert len(replaced) == 1
    assert replaced[0].old_value == "likes spicy food [5]"  # type: ignore[attr-defined]
    assert replaced[0].new_value == "dislikes spicy food [6]"  # type: ignore[attr-defined]
    before = facts.content_hash()
    with pytest.raises(RegionFullError):
        w.write("facts", "x [60]", key="food.spicy", strict=True)
    assert facts.entries[0].text == "dislikes spicy food [6]"
    assert facts.content_hash() == before


def test_fc_16_same_memory_twice_is_a_no_op():
    w = Window(regions=[Keyed(name="facts", budget=500)], max_tokens=1000, counter=StubCounter())
    w.write("facts", "2025-03-14", key="project.deadline")
    facts = w.region("facts")
    h, v, n, text = facts.content_hash(), facts.version, len(w.events.history), facts.render_text()
    r = w.write("facts", "2025-03-14", key="project.deadline")
    assert isinstance(r, WriteResult) and r.unchanged
    assert (facts.content_hash(), facts.version, facts.render_text()) == (h, v, text)
    assert [e.kind for e in w.events.history[n:]] == ["unchanged"]
    assert len(facts.entries) == 1


def test_fc_16_checklist_given_the_same_item_twice_keeps_one_copy():
    w = Window(regions=[Checklist(name="todo", budget=500)], max_tokens=1000, counter=StubCounter())
    w.todo_add("todo", "write tests")
    v = w.region("todo").version
    r = w.todo_add("todo", "write tests")
    assert isinstance(r, WriteResult) and r.unchanged
    assert len(w.region("todo").entries) == 1 and w.region("todo").version == v


def test_fc_17_system_role_items_never_enter_history():
    w = Window(
        regions=[
            Pinned(name="system", budget=100),
            SlidingWindow(name="conv", budget=100),
            Temporary(name="tmp", budget=100),
        ],
        max_tokens=1000,
        counter=StubCounter(),
    )
    w.write("system", Message.system("S1 [5]").blocks, role="system")
    for i in range(3):
        w.add_message(u(f"u{i} [1]"))
        if i == 1:
            w.release("system", index=0)
            w.write("system", Message.system("S2 [5]").blocks, role="system")
    with pytest.raises(SystemRoleError):
        w.add_message(Message.system("S3"))
    with pytest.raises(SystemRoleError):
        w.write("tmp", "S4", role="system")
    with pytest.raises(SystemRoleError):
        w.write("conv", w.make_entry("S5", role="system"))
    assert texts(w.region("system")) == ["S2"]
    state = w.snapshot_state()
    for rs in state.regions:
        if rs.name != "system":
            assert all(e.role != "system" for e in rs.entries)


def test_fc_26_a_reject_region_raises_a_typed_catchable_error(monkeypatch):
    def boom(*_a, **_k):
        raise AssertionError("process exit attempted")

    monkeypatch.setattr(sys, "exit", boom)
    monkeypatch.setattr(os, "_exit", boom)
    w = Window(
        regions=[Temporary(name="notes", budget=1000, admission="reject")],
        max_tokens=2000,
        counter=StubCounter(),
    )
    w.write("notes", "n [900]")
    region = w.region("notes")
    before = (list(region.entries), region.content_hash(), region.version)
    try:
        w.write("notes", "m [200]", strict=True)
    except Exception as exc:
        assert isinstance(exc, RegionFullError) and isinstance(exc, RegioError)
        assert (exc.region, exc.requested, exc.available) == ("notes", 200, 100)
    else:
        pytest.fail("no error raised")
    assert (list(region.entries), region.content_hash(), region.version) == before


def test_fc_33_message_windows_never_cut_inside_a_group():
    msgs = generated_history(random.Random(33), 36)
    assert len(msgs) >= 120
    _, full = _loaded(msgs)
    entries = list(full.entries)
    for length in range(1, len(entries) + 1, 5):
        prefix = entries[:length]
        info = analyze(prefix)
        for n in range(1, length + 1):
            region = SlidingWindow(name="c", budget=10**6)
            region.load_state(prefix, 0, {})
            region.trim(max_items=n)
            start = length - len(region.entries)
            assert info.safe[start], (length, n, start)
            assert start <= info.limit  # the current turn is always kept in full
            check_units(region.entries)
            if region.entries:
                assert not region.entries[0].message.tool_results
            if len(region.entries) > n:
                assert start == info.largest_cut()
            else:  # the longest suffix of whole units within n
                earlier = [k for k in range(start) if info.safe[k] and length - k <= n]
                assert not earlier


def test_fc_33_token_windows_remove_whole_units_oldest_first_and_keep_the_question():
    msgs = generated_history(random.Random(7), 32)
    _, full = _loaded(msgs)
    entries = list(full.entries)
    for length in range(4, len(entries) + 1, 9):
        prefix = entries[:length]
        info = analyze(prefix)
        total = sum(e.tokens for e in prefix)
        for cap in range(0, total + 1, 7):
            region = SlidingWindow(name="c", budget=10**6)
            region.load_state(prefix, 0, {})
            region.trim(max_tokens=cap)
            kept = {e.id for e in region.entries}
            removed = [i for i, e in enumerate(prefix) if e.id not in kept]
            j = info.fewest_removals(max_tokens=cap)
            assert removed == info.removal(info.removable_count if j is None else j)
            assert prefix[info.turn_start].id in kept  # the newest user message stays
            assert_well_formed([e.message for e in region.entries], [e.message for e in prefix])
