"""``Engine.repair``'s quick check of the plain shape is carried from one request to the next
(:class:`regio.engine._history.PlainScan`, kept in the session state): read in parts it says
what one read of the whole history says, and a request reads only the messages appended since
the last one, not the whole conversation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message
from regio.engine import _history
from regio.engine._history import PlainScan, needs_repair
from store_support import play_turn, store_engine
from test_repair_needed import _histories


@settings(max_examples=100, deadline=None)
@given(messages=_histories(), cuts=st.lists(st.integers(0, 40), max_size=4))
def test_property_a_check_read_in_parts_says_what_one_read_says(
    messages: list[Message], cuts: list[int]
) -> None:
    scan = PlainScan()
    start = 0
    for cut in sorted(cuts):
        scan.extend(messages[start:cut])
        start = max(start, cut)
    scan.extend(messages[start:])
    assert scan.needs == needs_repair(messages)


class _Calls:
    """Counts the calls the check reads (each call's id is matched against the providers'
    pattern once)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        pattern = _history.ID_PATTERN

        class Counting:
            def fullmatch(inner, text: str) -> Any:
                self.read += 1
                return pattern.fullmatch(text)

        monkeypatch.setattr(_history, "ID_PATTERN", Counting())


def _calls_read(monkeypatch: pytest.MonkeyPatch, turns: int) -> int:
    engine = store_engine()
    for turn in range(1, turns + 1):
        play_turn(engine, turn)
        engine.repair()
    with monkeypatch.context() as patch:
        count = _Calls(patch)
        play_turn(engine, turns + 1)
        assert engine.repair() == []
    return count.read


def test_one_more_turn_repairs_by_reading_as_many_calls_at_turn_60_as_at_turn_5(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    early = _calls_read(monkeypatch, 5)
    late = _calls_read(monkeypatch, 60)
    assert late <= early, (early, late)
