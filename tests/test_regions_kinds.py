"""One behaviour test per row of the region table (DESIGN.md section 2), budgets, admission."""

from __future__ import annotations

import msgspec
import pytest

from regio.errors import (
    CompactionError,
    CustomHooksNotAllowedError,
    RegionConfigError,
    RegionFullError,
)
from regio.policies import Budget
from regio.regions import (
    REGION_KINDS,
    Checklist,
    Clearable,
    CompactHistory,
    Compacting,
    Custom,
    Keyed,
    Pinned,
    Refusal,
    SlidingWindow,
    Temporary,
    Window,
    WindowState,
    WriteResult,
    make_region,
)
from regions_support import StubCounter, texts


def win(*regions, max_tokens=10_000):
    return Window(regions=list(regions), max_tokens=max_tokens, counter=StubCounter())


# ----- budgets ---------------------------------------------------------------------------------
def test_a_percent_budget_resolves_against_the_window():
    w = win(Temporary(name="t", budget="12%"), max_tokens=1000)
    assert w.region("t").budget == 120


def test_budget_clamps_apply_and_the_floor_wins_when_they_conflict():
    assert Budget.of("10%", max_tokens=50).resolve(1000) == 50
    assert Budget.of("1%", min_tokens=50).resolve(1000) == 50
    assert Budget.of(100, min_tokens=300, max_tokens=200).resolve() == 300


@pytest.mark.parametrize("bad", ["12 pct", "0%", "150%", -5, True])
def test_a_bad_budget_is_a_config_error_naming_the_forms(bad):
    with pytest.raises(RegionConfigError):
        Budget.of(bad)


def test_a_percent_budget_outside_a_window_says_how_to_resolve_it():
    with pytest.raises(RegionConfigError, match="Window"):
        _ = Temporary(name="t", budget="5%").budget


# ----- table rows ------------------------------------------------------------------------------
def test_a_pinned_write_that_does_not_fit_fails_naming_region_used_and_budget():
    w = win(Pinned(name="task", budget=10))
    w.write("task", "do it [8]")
    r = w.write("task", "more [5]")
    assert isinstance(r, Refusal)
    assert "task" in r.message and "8/10" in r.message
    with pytest.raises(RegionFullError):
        w.write("task", "more [5]", strict=True)
    assert texts(w.region("task")) == ["do"]


def test_a_temporary_region_rolls_off_its_oldest_entries():
    w = win(Temporary(name="tmp", budget=10))
    for i in range(4):
        w.write("tmp", f"o{i} [4]")
    assert texts(w.region("tmp")) == ["o2", "o3"]
    assert w.events.of_kind("evicted")


def test_a_clearable_region_is_wiped_by_clear():
    w = win(Clearable(name="scratch", budget=100))
    w.write("scratch", "x [5]")
    w.write("scratch", "y [5]")
    removed = w.clear("scratch")
    assert len(removed) == 2 and w.region("scratch").entries == []
    assert w.events.of_kind("cleared")


def test_a_keyed_write_replaces_in_place_keeping_position():
    w = win(Keyed(name="facts", budget=100))
    w.write("facts", "one [1]", key="a")
    w.write("facts", "two [1]", key="b")
    w.write("facts", "uno [1]", key="a")
    assert [(e.key, e.text.split()[0]) for e in w.region("facts").entries] == [
        ("a", "uno"),
        ("b", "two"),
    ]


def test_a_keyed_region_drops_the_least_recently_updated_key_when_full():
    w = win(Keyed(name="facts", budget=100, max_entries=2))
    w.write("facts", "1 [1]", key="a")
    w.write("facts", "2 [1]", key="b")
    w.write("facts", "3 [1]", key="a")  # a is now the most recently updated
    w.write("facts", "4 [1]", key="c")
    assert w.region("facts").keys() == ["a", "c"]


def test_hashmap_is_an_alias_of_keyed():
    region = make_region("hashmap", name="m", budget=10)
    assert isinstance(region, Keyed) and REGION_KINDS["hashmap"] is Keyed


def test_an_unknown_kind_names_the_known_kinds():
    with pytest.raises(RegionConfigError, match="sliding_window"):
        make_region("ring", name="x", budget=1)


def test_a_checklist_tracks_open_done_and_notes_and_gates_finishing():
    w = win(Checklist(name="todo", budget=200, gate=True))
    w.todo_add("todo", "write code [2]")
    w.todo_add("todo", "write docs [2]")
    assert w.finish_gate().blocked and len(w.finish_gate().open_items) == 2
    w.todo_done("todo", "1")
    w.todo_note("todo", "2", "half done")
    todo = w.region("todo")
    assert isinstance(todo, Checklist)
    assert [e.meta["status"] for e in todo.entries] == ["done", "open"]
    assert todo.entries[1].meta["notes"] == ["half done"]
    assert "- [x] 1: write code" in todo.render_text()
    w.todo_done("todo", "2")
    assert todo.all_done and not w.finish_gate().blocked


def test_a_checklist_never_rolls_off_items():
    w = win(Checklist(name="todo", budget=5))
    w.todo_add("todo", "a [3]")
    r = w.todo_add("todo", "b [3]")
    assert isinstance(r, Refusal) and len(w.region("todo").entries) == 1


def test_a_compacting_region_over_compact_at_queues_its_whole_content():
    w = win(
        Compacting(name="notes", budget=100, compact_at=0.5),
        CompactHistory(name="hist", budget=50, source="notes"),
    )
    w.write("notes", "a [20]")
    assert w.pending_compactions() == []
    w.write("notes", "b [40]")
    (p,) = w.pending_compactions()
    assert p.region == "notes" and p.target == "hist" and p.tokens == 60
    summary = w.complete_compaction(p.id, "sum [5]")
    assert w.region("notes").entries == [] and w.region("hist").entries == [summary]
    assert summary.meta["covers"] == list(p.entry_ids)
    assert w.events.of_kind("compaction_completed")


def test_a_compacting_region_triggers_on_threshold_tokens():
    w = win(
        Compacting(name="n", budget=1000, compact_at=None, threshold_tokens=30),
        CompactHistory(name="h", budget=50, source="n"),
    )
    w.write("n", "a [30]")
    assert not w.pending_compactions()
    w.write("n", "b [1]")
    assert len(w.pending_compactions()) == 1


def test_a_compact_history_over_budget_queues_a_merge_instead_of_dropping():
    w = win(
        Compacting(name="n", budget=1000, compact_at=None),
        CompactHistory(name="h", budget=20, source="n"),
    )
    for i in range(3):
        w.write("n", f"note{i} [30]")
        p = w.request_compaction("n")
        assert p is not None
        w.complete_compaction(p.id, f"s{i} [9]")
    hist = w.region("h")
    assert hist.used_tokens == 27 and len(hist.entries) == 3  # nothing dropped
    (merge,) = w.pending_compactions()
    assert merge.operation == "merge" and merge.region == "h"
    merged = w.complete_compaction(merge.id, "m [4]")
    assert hist.entries[0] == merged and hist.used_tokens <= hist.budget


def test_a_summary_not_smaller_than_its_input_changes_nothing():
    w = win(
        Compacting(name="n", budget=100, compact_at=None),
        CompactHistory(name="h", budget=50, source="n"),
    )
    w.write("n", "a [10]")
    p = w.request_compaction("n")
    assert p is not None
    with pytest.raises(CompactionError):
        w.complete_compaction(p.id, "big [10]")
    with pytest.raises(CompactionError):
        w.complete_compaction(p.id, "   ", tokens=1)
    assert texts(w.region("n")) == ["a"] and w.pending_compactions() == [p]


def test_fail_compaction_changes_nothing_and_drops_or_keeps_the_mark():
    w = win(
        Compacting(name="n", budget=100, compact_at=None),
        CompactHistory(name="h", budget=50, source="n"),
    )
    w.write("n", "a [10]")
    p = w.request_compaction("n")
    assert p is not None
    version = w.region("n").version
    w.fail_compaction(p.id, "summarizer down", drop=False)
    assert w.pending_compactions()[0].attempts == 1
    w.fail_compaction(p.id, "summarizer down")
    assert w.pending_compactions() == [] and w.region("n").version == version


def test_a_compacting_region_without_a_history_is_a_config_error():
    with pytest.raises(Exception, match="compact_history"):
        win(Compacting(name="n", budget=100))


def test_custom_hooks_are_refused_unless_allowed():
    with pytest.raises(CustomHooksNotAllowedError, match="allow_custom_hooks=True"):
        Custom(name="c", budget=10, render="regions_support:render_upper")


def test_custom_hooks_render_transform_and_overflow():
    c = make_region(
        "custom",
        name="c",
        budget=10,
        allow_custom_hooks=True,
        render="regions_support:render_upper",
        on_write="regions_support:refuse_secrets",
        on_overflow="regions_support:drop_largest",
    )
    w = win(c)
    w.write("c", "small [2]")
    w.write("c", "large [6]")
    assert isinstance(w.write("c", "secret [1]"), Refusal)
    w.write("c", "next [4]")
    assert texts(c) == ["small", "next"]
    assert c.render_text() == "SMALL [2]\nNEXT [4]"


def test_a_bad_hook_reference_names_region_and_hook():
    with pytest.raises(RegionConfigError, match="on_write"):
        Custom(name="c", budget=10, on_write="nomodule", allow_custom_hooks=True)


# ----- admission, volatility, versioning -------------------------------------------------------
@pytest.mark.parametrize("admission", ["evict", "reject"])
def test_an_entry_larger_than_its_whole_region_is_refused_under_either_admission(admission):
    w = win(Temporary(name="t", budget=10, admission=admission))
    w.write("t", "keep [5]")
    before = (list(w.region("t").entries), w.region("t").content_hash(), w.region("t").version)
    r = w.write("t", "huge [11]")
    assert isinstance(r, Refusal) and r.reason == "too_large"
    region = w.region("t")
    assert (list(region.entries), region.content_hash(), region.version) == before


def test_a_reject_region_refusal_says_what_to_release():
    w = win(Temporary(name="t", budget=10, admission="reject"))
    w.write("t", "old [6]")
    r = w.write("t", "new [6]")
    assert isinstance(r, Refusal)
    assert (r.used, r.budget, r.available, r.entry_tokens) == (6, 10, 4, 6)
    assert r.releasable[0].tokens == 6 and "Release" in r.message
    assert w.events.of_kind("refused")


def test_volatility_defaults_to_rewritten_and_history_to_grows():
    assert Temporary(name="t", budget=1).volatility == "rewritten"
    assert CompactHistory(name="h", budget=1, source="x").volatility == "grows"
    assert CompactHistory(name="h", budget=1, source="x", volatility="rewritten").volatility == (
        "rewritten"
    )
    with pytest.raises(ValueError):
        Temporary(name="t", budget=1, volatility="sometimes")


def test_version_and_hash_change_on_every_change_only():
    w = win(Temporary(name="t", budget=100))
    region = w.region("t")
    h0, v0 = region.content_hash(), region.version
    w.write("t", "x [1]")
    assert region.version == v0 + 1 and region.content_hash() != h0


def test_window_state_round_trips_losslessly_through_json():
    w = win(
        SlidingWindow(
            name="conv", budget=100, eviction={"compact": {"compact_count": 1}}, max_items=2
        ),
        CompactHistory(name="h", budget=50, source="conv"),
        Keyed(name="k", budget="10%"),
        Checklist(name="todo", budget=50),
    )
    from regions_support import a, t, u

    for m in [u("u1 [1]"), a("a1 [1]", "c1"), t("c1", "r [1]"), u("u2 [1]"), a("a2 [1]")]:
        w.add_message(m)
    w.write("k", "v [1]", key="x")
    w.todo_add("todo", "item [1]")
    state = w.snapshot_state()
    raw = msgspec.json.encode(state)
    loaded = Window.from_state(msgspec.json.decode(raw, type=WindowState), counter=StubCounter())
    assert msgspec.json.encode(loaded.snapshot_state()) == raw
    assert loaded.pending_compactions() == w.pending_compactions()
    assert [r.content_hash() for r in loaded.regions] == [r.content_hash() for r in w.regions]


def test_a_write_result_reports_what_was_evicted():
    w = win(Temporary(name="t", budget=4))
    w.write("t", "a [3]")
    r = w.write("t", "b [3]")
    assert isinstance(r, WriteResult) and len(r.evicted) == 1
