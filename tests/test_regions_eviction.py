"""Eviction strategies of sliding_window: per_item, bulk{overflow}, compact{compact_count}."""

from __future__ import annotations

import pytest

from regio.errors import RegionConfigError
from regio.policies import Bulk, Compact, PerItem, parse_eviction
from regio.regions import CompactHistory, SlidingWindow, Window
from regions_support import StubCounter, a, check_units, t, texts, u


def conv_window(eviction, max_items, *, budget=10_000, hist_budget=1000):
    regions = [
        SlidingWindow(
            name="conv", budget=budget, max_items=max_items, eviction=eviction, elastic=False
        )
    ]
    if isinstance(parse_eviction(eviction), Compact):
        regions.append(CompactHistory(name="hist", budget=hist_budget, source="conv"))
    return Window(regions=regions, max_tokens=100_000, counter=StubCounter())


def chat(w, n, start=0):
    for i in range(start, start + n):
        w.add_message(u(f"u{i} [1]") if i % 2 == 0 else a(f"a{i} [1]"))


def test_parse_eviction_accepts_names_and_mappings():
    assert parse_eviction("per_item") == PerItem()
    assert parse_eviction({"bulk": {"overflow": 3}}) == Bulk(3)
    assert parse_eviction({"name": "compact", "compact_count": 2}) == Compact(2)
    with pytest.raises(RegionConfigError, match="per_item"):
        parse_eviction("lru")
    with pytest.raises(RegionConfigError):
        parse_eviction({"bulk": {"overflow": 0}})


def test_per_item_drops_the_oldest_unit_on_every_write_over_max_items():
    w = conv_window("per_item", 4)
    chat(w, 6)
    assert texts(w.region("conv")) == ["u2", "a3", "u4", "a5"]
    assert len(w.events.of_kind("evicted")) == 2


def test_bulk_holds_still_until_max_items_plus_overflow_then_drops_back():
    w = conv_window({"bulk": {"overflow": 3}}, 4)
    chat(w, 7)
    assert len(w.region("conv").entries) == 7 and not w.events.of_kind("evicted")
    chat(w, 1, start=7)
    assert texts(w.region("conv")) == ["u4", "a5", "u6", "a7"]
    assert len(w.events.of_kind("evicted")) == 1


def test_bulk_never_splits_a_tool_group():
    w = conv_window({"bulk": {"overflow": 2}}, 3)
    for m in [
        u("u0 [1]"),
        a("a0 [1]", "c1"),
        t("c1", "r1 [1]"),
        a("b0 [1]"),
        u("u1 [1]"),
        a("a1 [1]"),
    ]:
        w.add_message(m)
    check_units(w.region("conv").entries)
    assert texts(w.region("conv"))[0] != "r1"


def test_the_token_budget_is_a_hard_cap_under_bulk():
    w = conv_window({"bulk": {"overflow": 50}}, 4, budget=5)
    chat(w, 8)
    assert w.region("conv").used_tokens <= 5


def test_compact_marks_the_oldest_items_in_the_queue_and_the_runtime_flushes_them():
    w = conv_window({"compact": {"compact_count": 2}}, 4)
    chat(w, 6)
    assert w.pending_compactions() == []
    chat(w, 1, start=6)
    (p,) = w.pending_compactions()
    conv = w.region("conv")
    assert p.entry_ids == tuple(e.id for e in conv.entries[:2]) and p.target == "hist"
    assert conv.pending() == [p]
    w.complete_compaction(p.id, "sum [1]", tokens=1)
    assert texts(conv) == ["u2", "a3", "u4", "a5", "u6"]
    assert texts(w.region("hist")) == ["sum"]
    assert w.pending_compactions() == []


def test_compact_falls_back_to_bulk_when_not_flushed_by_max_plus_twice_count():
    w = conv_window({"compact": {"compact_count": 2}}, 4)
    chat(w, 8)
    assert len(w.pending_compactions()) == 1
    assert not w.events.of_kind("compaction_fallback")
    chat(w, 1, start=8)  # 9 > 4 + 2*2
    assert w.pending_compactions() == []  # the mark was consumed by the fallback
    assert w.events.of_kind("compaction_fallback")
    assert len(w.region("conv").entries) == 4


def test_compact_marks_whole_units_only():
    w = conv_window({"compact": {"compact_count": 1}}, 2)
    for m in [u("u0 [1]"), a("a0 [1]", "c1"), t("c1", "r [1]"), u("u1 [1]")]:
        w.add_message(m)
    (p,) = w.pending_compactions()
    conv = w.region("conv")
    marked = [e for e in conv.entries if e.id in p.entry_ids]
    assert [e.text.split()[0] for e in marked] == ["u0"]  # cut before the a0/r group
    check_units([e for e in conv.entries if e.id not in p.entry_ids])


def test_releasing_marked_entries_drops_the_mark_with_an_event():
    w = conv_window({"compact": {"compact_count": 2}}, 2)
    chat(w, 5)
    assert w.pending_compactions()
    w.release("conv", oldest=1)
    assert w.pending_compactions() == []
    assert w.events.of_kind("compaction_failed")
