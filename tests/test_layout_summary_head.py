"""The opening of the conversation costs what is new: the render log keeps the summary
messages while the summary regions are unchanged (``RenderLog.summaries``), and the repair
merges a run of same-role messages in linear time. Both give exactly what computing afresh
gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.layout import RenderLog
from regio.layout.events import LayoutEvent, Repaired
from regio.layout.repair import PMessage, _mergeable, _Merged
from regio.regions.entrylist import EntryList
from test_regions_entrylist_epoch import _POOL, _mutate, ops


class _History:
    def __init__(self, name: str, entries: Any) -> None:
        self.name, self.entries = name, entries


def _message(region: str, entry: Entry) -> tuple[PMessage, int]:
    text = f"[summary -> {region}]\n{entry.text}"
    return PMessage("user", (Text(text),), f"summary:{entry.id}", origin="summary"), len(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), ops), min_size=1, max_size=12))
def test_kept_summary_messages_equal_fresh_ones_after_any_edits(steps):
    log = RenderLog()
    regions = [_History("history", EntryList()), _History("notes", EntryList([_POOL[5]]))]
    for second, (op, a, b) in steps:
        _mutate(regions[int(second)].entries, op, a, b)
        warm = log.summaries(regions, _message)
        fresh = RenderLog().summaries(regions, _message)
        assert warm == fresh
        assert [pm.source for _, pm, _, _ in warm] == [
            f"summary:{e.id}" for r in regions for e in r.entries
        ]


def test_unchanged_summary_regions_give_the_same_list_without_building_a_message():
    log = RenderLog()
    regions = [_History("history", EntryList(_POOL[:3]))]
    built: list[str] = []

    def message(region: str, entry: Entry) -> tuple[PMessage, int]:
        built.append(entry.id)
        return _message(region, entry)

    first = log.summaries(regions, message)
    assert built == ["e0", "e1", "e2"]
    assert log.summaries(regions, message) is first and len(built) == 3
    regions[0].entries.append(_POOL[3])
    after = log.summaries(regions, message)
    assert built == ["e0", "e1", "e2", "e3"] and after[:3] == first  # only the new one is built


def _merge_one_at_a_time(messages: list[PMessage]) -> tuple[list[PMessage], list[LayoutEvent]]:
    """Rule 5 as it reads: each message merged into the last one by rebuilding it."""
    merged: list[PMessage] = []
    events: list[LayoutEvent] = []
    for m in messages:
        if merged and _mergeable(merged[-1], m):
            events.append(Repaired("merged", "", len(merged)))
            merged[-1] = merged[-1].rebuilt(merged[-1].pairs() + m.pairs())
        else:
            merged.append(m)
    return merged, events


_messages = st.builds(
    lambda role, n, separate, origin, known, i: PMessage(
        role,
        tuple(Text(f"m{i}.{k}") for k in range(n)),
        f"s{i}",
        separate,
        origin,
        tuple((k + 1, None) for k in range(n)) if known else (),
    ),
    st.sampled_from(["user", "assistant", "tool"]),
    st.integers(1, 3),
    st.booleans(),
    st.sampled_from(["entry", "frozen", "summary"]),
    st.booleans(),
    st.integers(0, 99),
)


@given(st.lists(_messages, max_size=12))
def test_linear_merge_equals_merging_one_message_at_a_time(messages):
    events: list[LayoutEvent] = []
    merger = _Merged(None, events, 0)
    for m in messages:
        merger.add(m)
    assert (merger.messages(), events) == _merge_one_at_a_time(messages)
