"""Region kinds describe themselves (reclaim phase, agent access, kind-layout rank, compaction
order), and the window, the context tools and the registry read those attributes, so a new
kind is one class."""

from __future__ import annotations

from typing import ClassVar

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.engine._tools import context_tool_specs
from regio.regions import REGION_KINDS, Region, Window, make_region
from regio.regions.base import ReclaimPhase
from regions_support import StubCounter


@attrs.define(eq=False, kw_only=True)
class Archive(Region):
    """A kind defined outside the package: reclaimed oldest-first, writable by the agent."""

    kind: ClassVar[str] = "archive_for_test"
    reclaim_phase: ClassVar[ReclaimPhase | None] = ReclaimPhase.OLDEST
    agent_writable: ClassVar[bool] = True
    kind_rank: ClassVar[int] = 2


EXPECTED = {
    # kind: (reclaim phase, agent writable, agent releasable, kind rank, compaction order)
    "pinned": (None, False, False, 0, None),
    "compact_history": (None, False, False, 0, None),
    "keyed": (None, True, True, 1, None),
    "checklist": (None, False, True, 1, None),
    "compacting": (ReclaimPhase.QUEUE, True, True, 1, 0),
    "custom": (ReclaimPhase.HOOK, True, True, 1, None),
    "temporary": (ReclaimPhase.OLDEST, True, True, 2, None),
    "clearable": (ReclaimPhase.WIPE, True, True, 2, None),
    "sliding_window": (None, False, False, 1, 1),
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_kind_declares_its_reclaim_access_rank_and_compaction_order(kind: str) -> None:
    cls = REGION_KINDS[kind]
    got = (
        cls.reclaim_phase,
        cls.agent_writable,
        cls.agent_releasable,
        cls.kind_rank,
        cls.compaction_order,
    )
    assert got == EXPECTED[kind]


def test_only_pinned_may_hold_system_entries() -> None:
    assert [k for k in EXPECTED if REGION_KINDS[k].holds_system] == ["pinned"]


def test_a_new_kind_is_built_by_name_and_listed_as_writable() -> None:
    region = make_region("archive_for_test", name="archive", budget=100)
    assert isinstance(region, Archive)
    w = Window(regions=[region], max_tokens=1_000, counter=StubCounter())
    write = next(s for s in context_tool_specs(w) if s.name == "context_write")
    assert write.input_schema["properties"]["region"]["enum"] == ["archive"]


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(5, 60), min_size=1, max_size=12))
def test_window_reclaim_takes_a_new_oldest_kind_like_temporary(sizes: list[int]) -> None:
    """Property: the reclaim cascade treats a new kind with phase OLDEST exactly as it treats
    ``temporary`` (same entries kept, same phases reported)."""

    def run(kind: str) -> tuple[list[str], list[str]]:
        w = Window(
            regions=[make_region(kind, name="x", budget=400)],
            max_tokens=200,
            counter=StubCounter(),
        )
        for i, size in enumerate(sizes):
            w.write("x", f"n{i} [{size}]")
        kept = [e.text for e in w.region("x").entries]
        phases = [e.phase for e in w.events.of_kind("reclaimed")]  # type: ignore[attr-defined]
        return kept, phases

    assert run("archive_for_test") == run("temporary")
