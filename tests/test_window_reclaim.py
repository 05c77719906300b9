"""Window: reclaim phases at the high-water mark, window-full refusals, load-time floors."""

from __future__ import annotations

import pytest

from regio.errors import WindowConfigError
from regio.regions import (
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
)
from regions_support import StubCounter, texts, u


def test_reclaim_wipes_clearable_first_then_temporary_round_robin():
    w = Window(
        regions=[
            Pinned(name="p", budget=20),
            Clearable(name="scratch", budget=30),
            Temporary(name="t1", budget=60),
            Temporary(name="t2", budget=60),
        ],
        max_tokens=100,
        high_water=0.9,
        counter=StubCounter(),
    )
    w.write("p", "task [20]")
    w.write("scratch", "s [20]")
    for i in range(3):
        w.write("t1", f"x{i} [8]")
        w.write("t2", f"y{i} [8]")
    assert w.used_tokens == 88
    w.write("t1", "x3 [10]")  # 98 > 90: phase 1 wipes scratch (20) -> 78
    assert w.region("scratch").entries == []
    assert texts(w.region("t1")) == ["x0", "x1", "x2", "x3"]
    reclaimed = w.events.of_kind("reclaimed")
    assert [e.phase for e in reclaimed] == ["1"]  # type: ignore[attr-defined]
    w.write("t2", "y3 [30]")  # 108: phase 2 takes x0, y0, x1 (oldest first, round-robin)
    reclaimed = w.events.of_kind("reclaimed")[1:]
    assert [(e.region, e.phase) for e in reclaimed] == [  # type: ignore[attr-defined]
        ("t1", "2"),
        ("t2", "2"),
        ("t1", "2"),
    ]
    assert w.used_tokens == 84 <= w.high_water_tokens
    assert texts(w.region("p")) == ["task"] and texts(w.region("t2")) == ["y1", "y2", "y3"]


def test_phase_three_queues_compacting_regions_when_nothing_else_frees_enough():
    w = Window(
        regions=[
            Compacting(name="n", budget=60, compact_at=None),
            CompactHistory(name="h", budget=10, source="n"),
            Temporary(name="tmp", budget=50),
        ],
        max_tokens=100,
        counter=StubCounter(),
    )
    w.write("n", "a [25]")
    w.write("n", "b [25]")
    w.write("tmp", "t [45]")
    assert texts(w.region("tmp")) == ["t"]  # the entry just written is never reclaimed
    (p,) = w.pending_compactions()
    assert p.region == "n" and p.reason == "reclaim"
    assert [e.phase for e in w.events.of_kind("reclaimed")] == ["3"]  # type: ignore[attr-defined]


def test_reclaim_never_touches_conversation_pinned_keyed_checklist_history_or_reject():
    regions = [
        Pinned(name="p", budget=10),
        SlidingWindow(name="conv", budget=20),
        Keyed(name="k", budget=10),
        Checklist(name="todo", budget=10),
        Compacting(name="n", budget=20, compact_at=None),
        CompactHistory(name="h", budget=10, source="n"),
        Temporary(name="keep", budget=15, admission="reject"),
        Temporary(name="tmp", budget=40),
    ]
    w = Window(regions=regions, max_tokens=100, counter=StubCounter())
    w.write("p", "p [8]")
    w.add_message(u("u [15]"))
    w.write("k", "v [8]", key="x")
    w.todo_add("todo", "item [8]")
    w.write("keep", "r [12]")
    w.write("n", "note [10]")
    snapshot = {r.name: list(r.entries) for r in w.regions if r.name != "tmp"}
    for i in range(6):
        w.write("tmp", f"t{i} [7]")
    assert w.used_tokens <= w.high_water_tokens
    for name, entries in snapshot.items():
        assert w.region(name).entries == entries, name


def test_custom_on_overflow_runs_in_phase_one_and_a_half():
    c = Custom(
        name="c", budget=50, on_overflow="regions_support:drop_largest", allow_custom_hooks=True
    )
    w = Window(regions=[c, Temporary(name="tmp", budget=50)], max_tokens=60, counter=StubCounter())
    w.write("c", "big [30]")
    w.write("tmp", "t [25]")
    assert c.entries == []
    assert [e.phase for e in w.events.of_kind("reclaimed")] == ["1.5"]  # type: ignore[attr-defined]


def test_a_write_the_window_cannot_make_room_for_is_refused_and_changes_nothing():
    w = Window(
        regions=[
            Pinned(name="p", budget=50),
            SlidingWindow(name="conv", budget=50),
            Temporary(name="tmp", budget=20),
        ],
        max_tokens=60,
        counter=StubCounter(),
    )
    w.write("p", "p [40]")
    w.write("tmp", "t [10]")
    before = [list(r.entries) for r in w.regions]
    r = w.add_message(u("u [25]"))
    assert isinstance(r, Refusal) and r.reason == "window_full"
    assert [list(x.entries) for x in w.regions] == before and w.turn == 0


def test_floors_of_regions_that_never_shrink_are_checked_at_load():
    with pytest.raises(WindowConfigError) as info:
        Window(
            regions=[
                Pinned(name="p", budget=60),
                Keyed(name="k", budget=30),
                Temporary(name="t", budget=30, admission="reject"),
                Temporary(name="free", budget=500),
            ],
            max_tokens=100,
        )
    text = str(info.value)
    for part in ("p (pinned) 60", "k (keyed) 30", "t (temporary) 30", "120", "100"):
        assert part in text
    Window(
        regions=[Pinned(name="p", budget="60%", min_tokens=10), Temporary(name="f", budget=500)],
        max_tokens=100,
    )


def test_region_lookup_names_the_known_regions():
    w = Window(regions=[Temporary(name="tmp", budget=1)], max_tokens=10)
    with pytest.raises(KeyError, match="tmp"):
        w.region("nope")
    with pytest.raises(WindowConfigError, match="unique"):
        Window(
            regions=[Temporary(name="x", budget=1), Temporary(name="x", budget=1)], max_tokens=10
        )
