"""A region's unit analysis after appends groups only the appended entries
(:func:`regio.policies.units.appended_grouping`), and it is always the grouping of the whole
list: whatever was appended (results of earlier calls, reused ids, progress reports, orphans),
whatever the earlier part held (open calls, orphans)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolResult, ToolUse
from regio.policies.units import analyze, appended_grouping
from regio.regions import SlidingWindow
from regio.turngroups import group_entries

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "200"))
_ids = st.sampled_from(["a", "b", "c", "d", "e"])
_blocks = st.one_of(
    st.builds(lambda t: ("user", (Text(t),)), st.sampled_from(["hi", "next"])),
    st.builds(
        lambda ids: ("assistant", (Text("ok"), *(ToolUse(i, "read", {}) for i in ids))),
        st.lists(_ids, max_size=2),
    ),
    st.builds(
        lambda ids: ("user", tuple(ToolResult(i, "r") for i in ids)),
        st.lists(_ids, min_size=1, max_size=2),
    ),
    st.builds(lambda i: ("tool", (ToolResult(i, "50%", final=False),)), _ids),
)


def _entries(rows: list[tuple[str, tuple]]) -> list[Entry]:
    return [
        Entry(id=f"e{n}", blocks=blocks, tokens=10, role=role)  # type: ignore[arg-type]
        for n, (role, blocks) in enumerate(rows)
    ]


def _loop(n: int) -> list[tuple[str, tuple]]:
    rows: list[tuple[str, tuple]] = [("user", (Text("go"),))]
    for k in range(n):
        rows.append(("assistant", (ToolUse(f"c{k}", "read", {}),)))
        rows.append(("user", (ToolResult(f"c{k}", "r"),)))
    return rows


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.one_of(st.integers(0, 4).map(_loop), st.lists(_blocks, max_size=8)),
    st.lists(_blocks, max_size=6),
)
def test_the_grouping_after_appends_is_the_grouping_of_the_whole_list(
    before: list[tuple[str, tuple]], appended: list[tuple[str, tuple]]
) -> None:
    entries = _entries(before + appended)
    prior = group_entries(entries[: len(before)])
    assert appended_grouping(prior, entries) == group_entries(entries)
    assert analyze(entries, grouping=appended_grouping(prior, entries)) == analyze(entries)


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.lists(st.lists(_blocks, min_size=1, max_size=3), max_size=6))
def test_a_regions_analysis_after_each_append_is_the_analysis_of_its_entries(
    batches: list[list[tuple[str, tuple]]],
) -> None:
    region = SlidingWindow(name="conversation", budget=1_000_000)
    for batch in batches:
        start = len(region.entries)
        for entry in _entries([("user", (Text("x"),))] * start + batch)[start:]:
            region.entries.append(entry)
        assert region.analysis() == analyze(list(region.entries))


def test_a_tool_loop_step_admitted_to_a_long_conversation_groups_only_the_new_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import regio.policies.units as units
    import regio.regions.base as base

    region = SlidingWindow(name="conversation", budget=1_000_000)
    for entry in _entries(_loop(50)):
        region.entries.append(entry)
    region.analysis()
    seen: list[int] = []
    real = units.group_entries

    def counting(entries):  # type: ignore[no-untyped-def]
        seen.append(len(entries))
        return real(entries)

    monkeypatch.setattr(units, "group_entries", counting)
    monkeypatch.setattr(base, "group_entries", counting, raising=False)
    step = _entries([("user", (Text("x"),))] * 101 + _loop(51)[-2:])[101:]
    for entry in step:  # the model's call, then its result: one analysis after each
        region.entries.append(entry)
        region.analysis()
    assert seen and max(seen) <= 2, seen
    assert region.analysis() == analyze(list(region.entries))
