"""An observation too large for one summarizer call is split into parts; every part is still
an observation, so its lines never become the user's constraints or to-dos."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.summarizers._hierarchy import _split_entry
from regio.summarizers.extract import extract_items
from regio.summarizers.observations import OBSERVATION_META, is_observation
from regio.tokens import HeuristicCounter

VIEW = "\n".join(
    [f"{n}: x = {n}" for n in range(1, 60)]
    + ["60: # callers must never pass None", "61: # TODO: fix the retry loop"]
)


def test_the_parts_of_a_split_observation_are_observations() -> None:
    entry = Entry(id="o1", blocks=(Text(VIEW),), role="user", meta={OBSERVATION_META: True})
    parts = _split_entry(entry, 40, HeuristicCounter())
    assert len(parts) > 1
    assert all(is_observation(p) for p in parts)
    sections = extract_items(parts).sections
    assert not sections["Constraints"] and not sections["Open items"]


@given(st.lists(st.text(min_size=1, max_size=40), min_size=2, max_size=30), st.booleans())
def test_a_split_keeps_the_observation_mark_of_its_entry(lines: list[str], observed: bool) -> None:
    meta = {OBSERVATION_META: True} if observed else {}
    entry = Entry(id="o1", blocks=(Text("\n".join(lines)),), role="user", meta=meta)
    for part in _split_entry(entry, 8, HeuristicCounter()):
        assert is_observation(part) == observed
        assert part.meta["part_of"] == "o1"
